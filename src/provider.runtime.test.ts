import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHarness } from "./framework/testing";
import { createProvider, RUNTIME_IN_MEMORY, RUNTIME_IN_MEMORY_ENV } from "./provider";
import { useFakeBackend } from "./testing/fake-backend";

// What the provider says about how it was started: the compact executable's launcher marks a
// runtime it had to unpack into memory (src/executable/compact), and every command warns.

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
