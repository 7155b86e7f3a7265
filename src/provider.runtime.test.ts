import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHarness } from "./framework/testing";
import { createProvider, RUNTIME_IN_MEMORY, RUNTIME_IN_MEMORY_ENV } from "./provider";
import { useFakeBackend } from "./testing/fake-backend";

// What the provider says about how it was started: the compact executable's launcher marks a
// runtime it had to unpack into memory (src/executable/compact), and every command warns; and what
// it says about an address it cannot use.

const fake = useFakeBackend();
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gpurental-provider-runtime-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const configure = (env: NodeJS.ProcessEnv) =>
  createHarness(createProvider({ cwd: dir, env })).configure({
    base_url: fake.url,
    token: fake.creds.admin_session_token,
  });

test("a runtime unpacked into memory is a warning on every configure, naming the way out", async () => {
  const diags = await configure({ [RUNTIME_IN_MEMORY_ENV]: "1" });
  expect(diags).toEqual([expect.objectContaining({ summary: RUNTIME_IN_MEMORY.summary })]);
  expect(JSON.stringify(diags)).toContain("Set GPURENTAL_RUNTIME_DIR to a directory of yours");
  expect(await configure({})).toEqual([]);
  expect(await configure({ [RUNTIME_IN_MEMORY_ENV]: "0" })).toEqual([]);
});

test.each([
  ["the environment", {}, { GPURENTAL_BASE_URL: "http://user:s3cr3tPASS@127.0.0.1:18801" }],
  ["the argument", { base_url: "https://user:s3cr3tPASS@api.example.com/v1" }, {}],
  ["the argument, with /v1", { base_url: "https://s3cr3tPASS@api.example.com/v1/" }, {}],
])("a password in the API address from %s is refused without showing it", async (_n, config, env) => {
  const diags = await createHarness(createProvider({ cwd: dir, env })).configure({
    token: fake.creds.admin_session_token,
    ...config,
  });
  expect(diags).toEqual([expect.objectContaining({ severity: "error", path: [{ attribute: "base_url" }] })]);
  expect(diags[0]?.detail).toMatch(/"https?:\/\/\*\*\*@(127\.0\.0\.1:18801|api\.example\.com)/);
  expect(JSON.stringify(diags)).not.toContain("s3cr3t");
});

describe("a journal directory that cannot be created fails the plan, not the apply", () => {
  test.each([
    ["under a file that is no directory", "/dev/null/j", /"\/dev\/null\/j".*\/dev\/null is not a directory/],
    ["a file", "/dev/null", /\/dev\/null is not a directory/],
  ])("journal_dir %s", async (_n, journal_dir, message) => {
    const diags = await createHarness(createProvider({ cwd: dir, env: {} })).configure({
      base_url: fake.url,
      token: fake.creds.admin_session_token,
      journal_dir,
    });
    expect(diags).toEqual([
      expect.objectContaining({
        severity: "error",
        summary: "Unusable journal directory",
        path: [{ attribute: "journal_dir" }],
        detail: expect.stringMatching(message),
      }),
    ]);
  });

  test("from the environment: the error names the variable", async () => {
    const diags = await configure({ GPURENTAL_JOURNAL_DIR: "/dev/null/j" });
    expect(diags).toEqual([
      expect.objectContaining({
        summary: "Unusable journal directory",
        detail: expect.stringContaining('The GPURENTAL_JOURNAL_DIR environment variable is "/dev/null/j"'),
      }),
    ]);
  });

  test("a directory that does not exist yet but can be created is fine, and not created by the plan", async () => {
    const later = join(dir, "not", "yet");
    expect(await configure({ GPURENTAL_JOURNAL_DIR: later })).toEqual([]);
    expect(existsSync(join(dir, "not"))).toBe(false);
  });
});

describe("a journal URL whose escapes the PostgreSQL client cannot decode fails the configure, named", () => {
  test("journal_url: an error on the attribute, the password masked", async () => {
    const diags = await createHarness(createProvider({ cwd: dir, env: {} })).configure({
      base_url: fake.url,
      token: fake.creds.admin_session_token,
      journal_url: "postgres://tf:s3cr3tPASS@db.example/%ZZ",
    });
    expect(diags).toEqual([
      expect.objectContaining({
        severity: "error",
        summary: "Invalid journal_url",
        path: [{ attribute: "journal_url" }],
        detail:
          'journal_url in the provider block must be percent-encoded correctly in its database name: each "%" must begin an escape of two hex digits ("%25" for a "%" itself) and the escapes must spell UTF-8 text; got "postgres://***@db.example/%ZZ".',
      }),
    ]);
    expect(JSON.stringify(diags)).not.toContain("s3cr3t");
  });

  test("GPURENTAL_JOURNAL_URL: an error naming the variable", async () => {
    const diags = await configure({ GPURENTAL_JOURNAL_URL: "postgres://tf:s3cr3t%PASS@db.example/tfstate" });
    expect(diags).toEqual([
      expect.objectContaining({
        severity: "error",
        summary: "Invalid GPURENTAL_JOURNAL_URL",
        detail: expect.stringContaining(
          "The GPURENTAL_JOURNAL_URL environment variable must be percent-encoded correctly in its password:",
        ),
      }),
    ]);
    expect(JSON.stringify(diags)).not.toContain("s3cr3t");
  });
});
