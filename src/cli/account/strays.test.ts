import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { CREDENTIALS } from "../../api/testing/credentials";
import { makeInstance } from "../../api/testing/fixtures";
import { DeployJournal, JournalError, locateJournal, type RunIdentity } from "../../journal";
import { lateArrivalDiagnostics } from "../../journal/late";
import * as strayJournals from "../../strays/journals";
import { testIO as io, testIO } from "../../testing/command-io";
import { type ApiFlags, apiAccess } from "./api-access";
import { runPlanReport } from "./plan-report";
import { register, runStrays, STRAYS_EXIT, type StraysOptions } from "./strays";

// `gpurental strays` refusing what it must refuse before it reads anything, the API settings it
// shares with plan-report, its flags as the command line gives them, and what --output-import does
// to the file and the deploy journal when a step fails. Finding strays against the fake backend
// and the real terraform is in test/e2e/commands/strays.e2e.test.ts.

const TOKEN = `gps_${"7e57".repeat(12)}`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gpurental-strays-cli-"));
  writeFileSync(join(dir, "s.tfstate"), JSON.stringify({ version: 4, resources: [] }));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test.each<[string, string[], StraysOptions, NodeJS.ProcessEnv, RegExp]>([
  ["no source", [], {}, {}, /give at least one state to compare with/],
  [
    "destroy and import",
    ["s.tfstate"],
    { destroy: true, import: true },
    {},
    /--destroy and --import\/--output-import are opposites/,
  ],
  ["--yes alone", ["s.tfstate"], { yes: true }, {}, /--yes confirms --destroy, which was not given/],
  [
    "no API address",
    ["s.tfstate"],
    {},
    { GPURENTAL_TOKEN: TOKEN },
    /pass --base-url or set GPURENTAL_BASE_URL/,
  ],
  [
    "no token",
    ["s.tfstate"],
    {},
    { GPURENTAL_BASE_URL: "http://127.0.0.1:1" },
    /no credential: set GPURENTAL_TOKEN/,
  ],
  [
    "an unreadable state",
    ["nope.tfstate"],
    {},
    { GPURENTAL_BASE_URL: "http://127.0.0.1:1", GPURENTAL_TOKEN: TOKEN },
    /nope\.tfstate does not exist/,
  ],
])("%s: exit 1 with a message", async (_name, sources, opts, env, message) => {
  const x = io(env, dir);
  expect(await runStrays(sources, opts, x)).toBe(STRAYS_EXIT.failed);
  expect(x.err).toMatch(message);
  expect(x.out).toBe("");
  expect(x.err).not.toContain(TOKEN);
});

test("an unreachable API names the address; the token never appears", async () => {
  const x = io({ GPURENTAL_BASE_URL: "http://127.0.0.1:1", GPURENTAL_TOKEN: TOKEN }, dir);
  expect(await runStrays(["s.tfstate"], {}, x)).toBe(STRAYS_EXIT.failed);
  expect(x.err).toMatch(
    /^error: .*127\.0\.0\.1:1.*\(the API address comes from --base-url or GPURENTAL_BASE_URL\)/,
  );
  expect(x.err).not.toContain(TOKEN);
}, 60_000);

test("a failed read cancels the other before strays answers: no request is left running", async () => {
  // GET /v1/instances is refused (401, never retried) once GET /v1/api-keys has arrived, which is
  // held unanswered: the command must not answer while that read is still open (it would go on
  // until its timeout, then retry, in the process that ran the command).
  let held: IncomingMessage | undefined;
  let heldClosed = false;
  let refuse: (() => void) | undefined;
  const server = createServer((req, res) => {
    if (req.url?.startsWith("/v1/api-keys")) {
      held = req;
      req.socket.once("close", () => {
        heldClosed = true;
      });
      refuse?.();
      return;
    }
    refuse = () => {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "TOKEN_INVALID", message: "the key was revoked" } }));
    };
    if (held) refuse();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const x = io({ GPURENTAL_BASE_URL: url, GPURENTAL_TOKEN: TOKEN }, dir);
    expect(await runStrays(["s.tfstate"], {}, x)).toBe(STRAYS_EXIT.failed);
    expect(x.err).toMatch(/TOKEN_INVALID/);
    expect(held).toBeDefined();
    // The client closed the held request's connection; the server hears of it a moment later.
    const until = Date.now() + 10_000;
    while (!heldClosed && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect({ heldRequestClosed: heldClosed }).toEqual({ heldRequestClosed: true });
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test("plan-report: a failed read cancels the others before it answers: no request is left running", async () => {
  // The fixture plan prices a pinned offer (GET /v1/offers/{id}) and an offer_filter (the market,
  // GET /v1/offers?...), and checks each deploy. The pinned offer's read is refused (401, never
  // retried) once another read has arrived and is held unanswered: the command must cancel every
  // held read before it answers.
  const held: { url: string; closed: boolean }[] = [];
  let refuse: (() => void) | undefined;
  const json = (res: import("node:http").ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    const url = req.url ?? "";
    if (url.startsWith("/v1/instances")) return json(res, 200, { items: [] });
    if (url.startsWith("/v1/me"))
      return json(res, 401, { error: { code: "TOKEN_INVALID", message: "no session" } });
    if (/^\/v1\/offers\/[^/?]+$/.test(url)) {
      refuse = () => json(res, 401, { error: { code: "TOKEN_INVALID", message: "the key was revoked" } });
      if (held.length > 0) refuse();
      return;
    }
    const h = { url, closed: false };
    held.push(h);
    req.socket.once("close", () => {
      h.closed = true;
    });
    refuse?.();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const x = io({ GPURENTAL_BASE_URL: url, GPURENTAL_TOKEN: TOKEN }, dir);
    const plan = join(__dirname, "..", "..", "tfstate", "fixtures", "plan.json");
    expect(await runPlanReport(plan, {}, x)).toBe(1);
    expect(x.err).toMatch(/TOKEN_INVALID/);
    expect(held.length).toBeGreaterThan(0);
    // The client closed each held request's connection; the server hears of it a moment later.
    const until = Date.now() + 10_000;
    while (held.some((h) => !h.closed) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(held.filter((h) => !h.closed).map((h) => h.url)).toEqual([]);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test.each<[string, ApiFlags, NodeJS.ProcessEnv, string]>([
  [
    "a session token pasted as --org-id",
    { orgId: CREDENTIALS.session },
    { GPURENTAL_BASE_URL: "http://127.0.0.1:1", GPURENTAL_TOKEN: TOKEN },
    CREDENTIALS.session,
  ],
  [
    "an API address whose query holds an access token",
    { baseUrl: `ftp://relay.example/?token=${CREDENTIALS.accessToken}` },
    { GPURENTAL_TOKEN: TOKEN },
    CREDENTIALS.accessToken,
  ],
  [
    "an API key secret given as the API address",
    {},
    { GPURENTAL_BASE_URL: CREDENTIALS.keySecret, GPURENTAL_TOKEN: TOKEN },
    CREDENTIALS.keySecret,
  ],
])(
  "%s is refused without printing the credential, by strays and plan-report",
  async (_n, opts, env, secret) => {
    const strays = io(env, dir);
    expect(await runStrays(["s.tfstate"], opts, strays)).toBe(STRAYS_EXIT.failed);
    const report = io(env, dir);
    expect(await runPlanReport("plan.json", opts, report)).toBe(1);
    for (const x of [strays, report]) {
      expect(x.err).toMatch(/^error: .*(--org-id|--base-url|GPURENTAL_BASE_URL) must be/);
      expect(x.err).toContain("[REDACTED]");
      expect(x.err + x.out).not.toContain(secret);
    }
  },
);

test.each([
  ["with a user and password", "http://user:s3cr3tPASS@127.0.0.1:18801"],
  ["with a password holding / and @", "https://ci:s3cr3t/PASS@x@api.example.com"],
  ["whose password is longer than the message quotes", `http://u:${"s3cr3tPASS".repeat(30)}@api.example.com`],
])("an API address %s is refused with the password masked, by strays and plan-report", async (_n, url) => {
  const env = { GPURENTAL_BASE_URL: url, GPURENTAL_TOKEN: TOKEN };
  const strays = io(env, dir);
  expect(await runStrays(["s.tfstate"], {}, strays)).toBe(STRAYS_EXIT.failed);
  const report = io(env, dir);
  expect(await runPlanReport("plan.json", {}, report)).toBe(1);
  for (const x of [strays, report]) {
    expect(x.err).toMatch(
      /^error: GPURENTAL_BASE_URL must be an http or https URL without credentials, got "https?:\/\/\*\*\*@/,
    );
    expect(x.err + x.out).not.toMatch(/s3cr3t/);
  }
});

describe("apiAccess", () => {
  const env = { GPURENTAL_BASE_URL: "https://api.example.com", GPURENTAL_TOKEN: `gpr_${"ab".repeat(24)}` };

  test("an API key's prefix is known, so its own key can be told among the organization's", () => {
    expect(apiAccess({}, env, "t")).toMatchObject({ credential: "api_key", keyPrefix: "gpr_abababab" });
    expect(apiAccess({}, { ...env, GPURENTAL_TOKEN: TOKEN }, "t")).toMatchObject({ credential: "session" });
  });

  test("flags win over the environment; the token comes from a file, never a flag", () => {
    writeFileSync(join(dir, "token"), `${TOKEN}\n`);
    const a = apiAccess({ baseUrl: "http://localhost:8787", tokenFile: join(dir, "token") }, env, "t");
    expect(a.client.baseUrl).toBe("http://localhost:8787");
    expect(a.credential).toBe("session");
  });

  test.each<[string, Parameters<typeof apiAccess>[0], NodeJS.ProcessEnv, RegExp]>([
    [
      "a URL with /v1",
      { baseUrl: "https://api.example.com/v1" },
      env,
      /--base-url must be the address without the \/v1 path/,
    ],
    [
      "not a URL",
      {},
      { ...env, GPURENTAL_BASE_URL: "api.example.com" },
      /GPURENTAL_BASE_URL must be an http or https URL/,
    ],
    ["an empty flag", { baseUrl: "" }, env, /--base-url must not be empty/],
    [
      "a token with a space",
      {},
      { ...env, GPURENTAL_TOKEN: "gpr_ab cd" },
      /GPURENTAL_TOKEN must hold a single word/,
    ],
    [
      "an unreadable token file",
      { tokenFile: "/nonexistent/token" },
      env,
      /--token-file \/nonexistent\/token cannot be read \(ENOENT\)/,
    ],
    [
      "an org id that is no UUID",
      { orgId: "acme" },
      env,
      /--org-id must be an organization ID \(a UUID\), got "acme"/,
    ],
  ])("%s is refused, naming the flag or variable", (_n, flags, e, message) => {
    expect(() => apiAccess(flags, e, "t")).toThrow(message);
  });
});

describe("a stray that a deploy journal names: nothing changed goes unsaid, nothing unwritten is recorded", () => {
  // The organization lists one instance that no state holds; the source is a synthesized CDKTF
  // stack never deployed (read without terraform), whose deploy journal has an open entry naming
  // that instance: a lost answer the next apply would adopt, unless import blocks take it.
  const STRAY = "01890a5d-ac96-774b-bcce-b302099a8057";
  const gone: RunIdentity = { id: "gone", pid: 2 ** 22 + 1, boot: "another-boot" };
  let server: ReturnType<typeof createServer>;
  let requests: string[];
  /** The stray instance's status as the server answers it. */
  let status: "running" | "destroying" | "destroyed";
  let env: NodeJS.ProcessEnv;
  let stack: string;
  const journal = () => new DeployJournal(locateJournal({ cwd: stack, env: {} }), { run: gone });
  const openIds = () =>
    journal()
      .live()
      .map((e) => e.id);

  beforeEach(async () => {
    requests = [];
    status = "running";
    server = createServer((req, res) => {
      const url = req.url ?? "";
      requests.push(`${req.method} ${url}`);
      const json = (body: unknown) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const instance = () => makeInstance({ id: STRAY, label: "lost", status });
      if (url.startsWith(`/v1/instances/${STRAY}`)) {
        if (req.method === "DELETE" && status === "running") status = "destroying";
        return json(instance());
      }
      json({ items: url.startsWith("/v1/instances") ? [instance()] : [] });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    env = {
      GPURENTAL_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      GPURENTAL_TOKEN: TOKEN,
    };
    stack = join(dir, "cdktf.out", "stacks", "gpu");
    mkdirSync(stack, { recursive: true });
    writeFileSync(join(stack, "cdk.tf.json"), "{}");
    const j = journal();
    j.answered(j.sent("instance", "sha256:x", {}), STRAY);
    expect(openIds()).toEqual([STRAY]);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  test("--output-import: the blocks are in the file, then the entry is closed", async () => {
    const x = io(env, dir);
    expect(await runStrays([stack], { outputImport: "adopt.tf" }, x)).toBe(STRAYS_EXIT.found);
    expect(readFileSync(join(dir, "adopt.tf"), "utf8")).toContain(`id = "${STRAY}"`);
    expect(x.err).toContain(`Import blocks for 1 stray(s) written to ${join(dir, "adopt.tf")}`);
    expect(openIds()).toEqual([]);
  });

  test("--output-import to a file that cannot be written: an error naming the flag, the path and why; the entry stays open", async () => {
    const x = io(env, dir);
    expect(await runStrays([stack], { outputImport: "/nonexistent/dir/import.tf" }, x)).toBe(
      STRAYS_EXIT.failed,
    );
    expect(x.err).toBe(
      "error: --output-import /nonexistent/dir/import.tf could not be written: its directory does not exist (ENOENT). Nothing was adopted: choose a file in a directory that can be written.\n",
    );
    expect(openIds()).toEqual([STRAY]);
  });

  test("--output-import refuses an existing file before anything is read, and one created meanwhile, leaving them as they were", async () => {
    writeFileSync(join(dir, "main.tf"), "# mine\n");
    const x = io(env, dir);
    expect(await runStrays([stack], { outputImport: "main.tf" }, x)).toBe(STRAYS_EXIT.failed);
    expect(x.err).toBe(
      `error: --output-import ${join(dir, "main.tf")} already exists: choose another file or remove it (an existing file is never replaced)\n`,
    );
    expect(requests).toEqual([]);
    expect(readFileSync(join(dir, "main.tf"), "utf8")).toBe("# mine\n");
    expect(openIds()).toEqual([STRAY]);

    // Created while the command read the organization: still never replaced.
    server.once("request", () => writeFileSync(join(dir, "late.tf"), "# mine too\n"));
    const y = io(env, dir);
    expect(await runStrays([stack], { outputImport: "late.tf" }, y)).toBe(STRAYS_EXIT.failed);
    expect(y.err).toContain(`--output-import ${join(dir, "late.tf")} already exists: choose another file`);
    expect(readFileSync(join(dir, "late.tf"), "utf8")).toBe("# mine too\n");
    expect(openIds()).toEqual([STRAY]);
  });

  test("--output-import with a journal that cannot be written: the file is removed again and the error says so", async () => {
    jest.spyOn(strayJournals, "closeImportedEntries").mockImplementation(() => {
      throw new JournalError("Cannot lock the deploy journal j.jsonl: EIO", "j.jsonl");
    });
    const x = io(env, dir);
    expect(await runStrays([stack], { outputImport: "adopt.tf" }, x)).toBe(STRAYS_EXIT.failed);
    expect(existsSync(join(dir, "adopt.tf"))).toBe(false);
    expect(x.err).toMatch(
      new RegExp(
        `^error: the deploy journal entries of the instances to adopt could not be closed, so ${join(dir, "adopt.tf")} was removed again .*Cannot lock the deploy journal j\\.jsonl: EIO\\. Run the command again`,
      ),
    );
    expect(x.err).not.toContain("written to");
    // With --import, the blocks were printed first: the error says not to use them.
    const y = io(env, dir);
    expect(await runStrays([stack], { import: true }, y)).toBe(STRAYS_EXIT.failed);
    expect(y.out).toContain(`id = "${STRAY}"`);
    expect(y.err).toContain(
      "could not be closed, so the import blocks printed on standard output must not be used",
    );
  });

  test("--import: the blocks are printed and delivered, then the entry is closed", async () => {
    const x = io(env, dir);
    expect(await runStrays([stack], { import: true }, x)).toBe(STRAYS_EXIT.found);
    expect(x.out).toContain(`id = "${STRAY}"`);
    expect(openIds()).toEqual([]);
    const j = io(env, dir);
    expect(await runStrays([stack], { import: true, json: true }, j)).toBe(STRAYS_EXIT.found);
    expect(JSON.parse(j.out).import_configuration).toContain(`id = "${STRAY}"`);
  });

  test("--import to a standard output that is gone (a closed pipe): an error, and the entry stays open", async () => {
    for (const json of [false, true]) {
      const x = testIO(env, dir, { stdoutClosed: true });
      expect(await runStrays([stack], { import: true, json }, x)).toBe(STRAYS_EXIT.failed);
      expect(x.err).toContain(
        "error: the import blocks could not be written to standard output, so nothing was adopted and no deploy journal entry was closed",
      );
      expect(openIds()).toEqual([STRAY]);
    }
    // With --output-import too, the file it wrote first is removed again.
    const both = testIO(env, dir, { stdoutClosed: true });
    expect(await runStrays([stack], { import: true, outputImport: "adopt.tf" }, both)).toBe(
      STRAYS_EXIT.failed,
    );
    expect(both.err).toContain(
      `no deploy journal entry was closed, so ${join(dir, "adopt.tf")} was removed again`,
    );
    expect(existsSync(join(dir, "adopt.tf"))).toBe(false);
    expect(openIds()).toEqual([STRAY]);
  });

  test("--destroy says each destroy the API accepted at once, not only after the wait", async () => {
    const x = io(env, dir);
    const run = runStrays([stack], { destroy: true, yes: true, waitTimeout: 60_000 }, x);
    let done = false;
    void run.finally(() => {
      done = true;
    });
    const until = Date.now() + 10_000;
    while (!x.out.includes("destroy accepted") && Date.now() < until)
      await new Promise((r) => setTimeout(r, 20));
    expect({ done, out: x.out }).toEqual({
      done: false,
      out: expect.stringContaining(`instance ${STRAY} (lost): destroy accepted, waiting until destroyed\n`),
    });
    status = "destroyed";
    expect(await run).toBe(STRAYS_EXIT.none);
    expect(x.out).toContain(`instance ${STRAY} (lost): destroyed\n`);
  });

  test.each(["banana", "0s", "481h"])(
    "GPURENTAL_LATE_ARRIVAL_WATCH=%s is refused as the provider refuses it, before anything is read",
    async (value) => {
      const x = io({ ...env, GPURENTAL_LATE_ARRIVAL_WATCH: value }, dir);
      expect(await runStrays([stack], {}, x)).toBe(STRAYS_EXIT.failed);
      expect(requests).toEqual([]);
      const [provider] = await lateArrivalDiagnostics(journal(), async () => [], {
        GPURENTAL_LATE_ARRIVAL_WATCH: value,
      });
      expect(provider).toMatchObject({ severity: "error", summary: "Invalid GPURENTAL_LATE_ARRIVAL_WATCH" });
      expect(x.err).toBe(`error: ${provider!.detail}\n`);
      expect(x.err).toBe(
        `error: The GPURENTAL_LATE_ARRIVAL_WATCH environment variable must be a duration such as "48h" (at most 480h); got "${value}".\n`,
      );
    },
  );
});

describe("the command line", () => {
  /** The sources and options `gpurental strays` gets from `args`, or commander's error. */
  async function parsed(args: string[]): Promise<{ sources: string[]; opts: StraysOptions } | string> {
    const program = new Command().exitOverride();
    let err = "";
    program.configureOutput({ writeErr: (t) => (err += t), writeOut: () => {} });
    register(program);
    let got: { sources: string[]; opts: StraysOptions } | undefined;
    program.commands
      .find((c) => c.name() === "strays")!
      .action((sources: string[], opts: StraysOptions) => {
        got = { sources, opts };
      });
    try {
      await program.parseAsync(["strays", ...args], { from: "user" });
    } catch {
      return err;
    }
    return got!;
  }

  test.each<[string[], string[], string[] | undefined]>([
    [["--stack", "a", "empty.tfstate"], ["empty.tfstate"], ["a"]],
    [
      ["--stack", "a", "--stack", "b", "app", "s.tfstate"],
      ["app", "s.tfstate"],
      ["a", "b"],
    ],
    [["app", "--stack=gpu"], ["app"], ["gpu"]],
    [["app"], ["app"], undefined],
  ])("%j: sources %j, stacks %j", async (args, sources, stack) => {
    const got = await parsed(args);
    expect(got).toMatchObject({ sources });
    expect(typeof got === "object" && got.opts.stack).toEqual(stack);
  });

  test.each<[string, number]>([
    ["90s", 90_000],
    ["1h30m", 5_400_000],
    ["480h", 480 * 3_600_000],
  ])("--wait-timeout %s is %d ms, as the provider reads a duration", async (value, ms) => {
    const got = await parsed(["--destroy", "--wait-timeout", value, "app"]);
    expect(typeof got === "object" && got.opts.waitTimeout).toBe(ms);
  });

  test.each(["0s", "481h", "99999999999h", "10", "ten minutes", "-5m"])(
    "--wait-timeout %s is refused, naming the flag, the limit and the value",
    async (value) => {
      const got = await parsed(["--destroy", "--wait-timeout", value, "app"]);
      expect(typeof got).toBe("string");
      expect(got).toContain("--wait-timeout must be");
      expect(got).toContain(`'${value}'`);
    },
  );

  test("--stack takes one name per use, and the help says to repeat it", async () => {
    const program = new Command();
    register(program);
    const help = program.commands.find((c) => c.name() === "strays")!.helpInformation();
    expect(help).toMatch(/--stack <name> +a CDKTF stack to read .*repeat it for several/s);
    expect(help).not.toContain("<name...>");
  });
});
