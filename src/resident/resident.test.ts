import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import {
  inAutomation,
  type LaunchHost,
  MAX_MESSAGE_BYTES,
  parseControlRequest,
  privateRunDir,
  RESIDENT_ENV,
  RESIDENT_IDLE_ENV,
  readMessages,
  residentSettings,
  residentSocket,
} from "./resident";

const work = mkdtempSync(join(tmpdir(), "gpurental-resident-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("residentSettings", () => {
  const person: LaunchHost = { automated: () => false, platform: "linux" };
  const ci: LaunchHost = { automated: () => true, platform: "linux" };

  it("is on by default for a person's commands on Linux, off in automation and elsewhere", () => {
    expect(residentSettings({}, person)).toEqual({
      enabled: true,
      mode: "auto",
      reason: "on by default outside automation",
      idleMs: 300_000,
    });
    expect(residentSettings({ [RESIDENT_ENV]: " Auto " }, person).enabled).toBe(true);
    expect(residentSettings({}, ci)).toMatchObject({
      enabled: false,
      mode: "auto",
      reason: "off by default in automation (CI or TF_IN_AUTOMATION)",
    });
    expect(residentSettings({}, { ...person, platform: "darwin" })).toMatchObject({
      enabled: false,
      reason: "off by default on darwin",
    });
    expect(residentSettings({ [RESIDENT_ENV]: "on" }, { ...person, platform: "win32" })).toMatchObject({
      enabled: false,
      reason: "not available on Windows",
    });
  });

  it("does as the variable says, in automation too, and asks whether it is automation only by default", () => {
    let asked = 0;
    const counted: LaunchHost = {
      automated: () => {
        asked++;
        return true;
      },
      platform: "darwin",
    };
    for (const off of ["off", "0", "false", " OFF "])
      expect(residentSettings({ [RESIDENT_ENV]: off }, person)).toMatchObject({
        enabled: false,
        mode: "off",
      });
    for (const on of ["on", "1", "true", "On"])
      expect(residentSettings({ [RESIDENT_ENV]: on }, counted)).toMatchObject({
        enabled: true,
        mode: "on",
        reason: "GPURENTAL_PROVIDER_RESIDENT=on",
      });
    expect(asked).toBe(0);
    expect(residentSettings({ [RESIDENT_IDLE_ENV]: "5" }, person).idleMs).toBe(5000);
    expect(residentSettings({ [RESIDENT_IDLE_ENV]: "3600" }, person).idleMs).toBe(3_600_000);
  });

  it("names the variable, the accepted values and the value it cannot use", () => {
    expect(() => residentSettings({ [RESIDENT_ENV]: "yes please" }, person)).toThrow(
      'GPURENTAL_PROVIDER_RESIDENT must be "on", "off" or "auto" (or 1/0, true/false), got "yes please"',
    );
    for (const bad of ["4", "3601", "1.5", "-10", "ten"])
      expect(() => residentSettings({ [RESIDENT_ENV]: "off", [RESIDENT_IDLE_ENV]: bad }, person)).toThrow(
        `GPURENTAL_PROVIDER_RESIDENT_IDLE_SECONDS must be a whole number of seconds from 5 to 3600, got "${bad}"`,
      );
  });
});

// Without TF_IN_AUTOMATION it reads CI systems' variables from the process's environment (ci-info):
// resident.process.test.ts runs launches with and without them.
describe("inAutomation", () => {
  it("is true with TF_IN_AUTOMATION set to anything", () => {
    expect(inAutomation({ TF_IN_AUTOMATION: "1" })).toBe(true);
    expect(inAutomation({ TF_IN_AUTOMATION: "false" })).toBe(true);
  });
});

describe("privateRunDir", () => {
  it("creates a directory only the user can enter", () => {
    const dir = join(work, "fresh", "run");
    expect(privateRunDir(dir)).toBe(true);
    expect(privateRunDir(dir)).toBe(true);
  });

  it("refuses a directory others can enter or write, and a link", () => {
    const open = join(work, "open");
    mkdirSync(open, { mode: 0o755 });
    chmodSync(open, 0o755);
    expect(privateRunDir(open)).toBe(false);
    const writable = join(work, "writable");
    mkdirSync(writable);
    chmodSync(writable, 0o730);
    expect(privateRunDir(writable)).toBe(false);
    const real = join(work, "real");
    expect(privateRunDir(real)).toBe(true);
    const link = join(work, "link");
    symlinkSync(real, link);
    expect(privateRunDir(link)).toBe(false);
    const file = join(work, "file");
    writeFileSync(file, "");
    expect(privateRunDir(file)).toBe(false);
  });
});

describe("residentSocket", () => {
  const bundle = join(work, "bundle");
  beforeAll(() => {
    mkdirSync(bundle);
    for (const f of ["provider.js", "provider-transport.js", "provider-impl.js", "provider-schema.pb"])
      writeFileSync(join(bundle, f), f);
  });

  it("is one per build: the same content gives the same socket, other content another", () => {
    const first = residentSocket(work, bundle, {});
    expect(first).toMatch(/\/[0-9a-f]{16}\.sock$/);
    expect(residentSocket(work, bundle, {})).toBe(first);
    writeFileSync(join(bundle, "provider-impl.js"), "rebuilt, longer");
    const rebuilt = residentSocket(work, bundle, {});
    expect(rebuilt).not.toBe(first);
    // npm gives every file one time; an upgrade may leave a file of the same size and inode.
    const time = statSync(join(bundle, "provider-impl.js")).mtime;
    writeFileSync(join(bundle, "provider-impl.js"), "rebuilt, LONGER");
    utimesSync(join(bundle, "provider-impl.js"), time, time);
    expect(residentSocket(work, bundle, {})).not.toBe(rebuilt);
    // The same content, written again: the same build.
    writeFileSync(join(bundle, "provider-impl.js"), "rebuilt, longer");
    utimesSync(join(bundle, "provider-impl.js"), new Date(0), new Date(0));
    expect(residentSocket(work, bundle, {})).toBe(rebuilt);
  });

  it("names a bundle by the content id the build wrote into it, read from its end", () => {
    const marked = (id: string) =>
      `${"x".repeat(5000)}\n//# gpurental-bundle=${id}\n//# sourceMappingURL=p.js.map\n`;
    writeFileSync(join(bundle, "provider.js"), marked("0123456789abcdef"));
    const first = residentSocket(work, bundle, {});
    writeFileSync(join(bundle, "provider.js"), marked("fedcba9876543210"));
    expect(residentSocket(work, bundle, {})).not.toBe(first);
    writeFileSync(join(bundle, "provider.js"), marked("0123456789abcdef"));
    expect(residentSocket(work, bundle, {})).toBe(first);
  });

  it("is one per node setting: other NODE_ variables get a process of their own", () => {
    const plain = residentSocket(work, bundle, {});
    expect(residentSocket(work, bundle, { NODE_OPTIONS: "--max-old-space-size=512" })).not.toBe(plain);
    expect(residentSocket(work, bundle, { NODE_EXTRA_CA_CERTS: "/etc/ca.pem" })).not.toBe(plain);
    expect(residentSocket(work, bundle, { TF_LOG: "trace" })).toBe(plain);
  });

  it("is undefined where the path is too long to bind", () => {
    expect(residentSocket(join(work, "x".repeat(120)), bundle, {})).toBeUndefined();
  });
});

describe("parseControlRequest", () => {
  const good = { t: "session", env: { TF_LOG: "debug" }, cwd: "/work", pid: 12, ppid: 11 };

  it("accepts a well-formed session request", () => {
    expect(parseControlRequest(good)).toEqual(good);
  });

  it("accepts status and stop, and keeps nothing else of them", () => {
    expect(parseControlRequest({ t: "status" })).toEqual({ t: "status" });
    expect(parseControlRequest({ t: "stop", env: { A: "b" } })).toEqual({ t: "stop" });
  });

  it("names the field that is wrong", () => {
    expect(parseControlRequest(null)).toBe("the request is not an object");
    expect(parseControlRequest({ ...good, t: "other" })).toBe(
      't must be "session", "status" or "stop", got "other"',
    );
    expect(parseControlRequest({ ...good, env: [] })).toBe("env must be an object");
    expect(parseControlRequest({ ...good, env: { A: 1 } })).toBe("env.A must be a string");
    expect(parseControlRequest({ ...good, cwd: "relative" })).toBe("cwd must be an absolute path");
    expect(parseControlRequest({ ...good, pid: 0 })).toBe("pid must be a positive integer, got 0");
    expect(parseControlRequest({ ...good, ppid: "1" })).toBe('ppid must be a positive integer, got "1"');
  });
});

describe("readMessages", () => {
  function reader() {
    const stream = new PassThrough();
    const messages: unknown[] = [];
    const errors: string[] = [];
    readMessages(
      stream,
      (m) => messages.push(m),
      (e) => errors.push(e),
    );
    return { stream, messages, errors };
  }

  it("reads one JSON value per line, across chunks", async () => {
    const r = reader();
    r.stream.write('{"a":1}\n{"b"');
    r.stream.write(':2}\n{"c":');
    await new Promise((done) => setImmediate(done));
    expect(r.messages).toEqual([{ a: 1 }, { b: 2 }]);
    expect(r.errors).toEqual([]);
  });

  it("stops at a line that is not JSON or is too long", async () => {
    const bad = reader();
    bad.stream.write('not json\n{"a":1}\n');
    await new Promise((done) => setImmediate(done));
    expect(bad.errors).toEqual(["a message is not JSON"]);
    expect(bad.messages).toEqual([]);

    const long = reader();
    long.stream.write("x".repeat(MAX_MESSAGE_BYTES + 1));
    long.stream.write('\n{"a":1}\n');
    await new Promise((done) => setImmediate(done));
    expect(long.errors).toEqual([`a message is longer than ${MAX_MESSAGE_BYTES} bytes`]);
    expect(long.messages).toEqual([]);
  });
});
