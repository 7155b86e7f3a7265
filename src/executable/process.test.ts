import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundle, descriptorText } from "../../scripts/build/bundle-provider";
import { firstUnsafeCharacter } from "../display";
import { derToPem, generateServerCertificate } from "../plugin/cert";
import { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE } from "../plugin/handshake";
import { connect, parseHandshake, tlsCredentials } from "../plugin/testing/grpc-client";
import { startProcess } from "../testing/child-process";
import {
  buildExecutable,
  handshakeLine,
  type Started,
  startExecutable,
} from "../testing/provider-executable";

// The executable as Terraform runs it: a separate process started from the bundle, talking
// go-plugin on stdout, TLS and gRPC.

jest.setTimeout(60_000);

const work = mkdtempSync(join(tmpdir(), "gpurental-provider-process-"));
const cacheDir = join(work, "cache");
let executable = "";
const hostCert = generateServerCertificate();

beforeAll(async () => {
  ({ executable } = await buildExecutable(work));
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

function start(env: NodeJS.ProcessEnv, args: string[] = []): Started {
  return startExecutable(
    executable,
    {
      PATH: process.env.PATH,
      TMPDIR: work,
      GPURENTAL_PROVIDER_CODE_CACHE_DIR: cacheDir,
      GPURENTAL_PROVIDER_RESIDENT: "off",
      ...env,
    },
    args,
  );
}

const handshake = (s: Started): Promise<string> => handshakeLine(s, 20_000);

const hostEnv = {
  [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE,
  PLUGIN_PROTOCOL_VERSIONS: "6,5",
  PLUGIN_CLIENT_CERT: hostCert.certPem,
};

describe("the provider executable", () => {
  it("run by hand, says it is a Terraform plugin and exits non-zero without printing to stdout", async () => {
    const s = start({});
    const { code } = await s.exited;
    expect(code).toBe(1);
    expect(s.stdout()).toBe("");
    expect(s.stderr()).toMatch(/This binary is a Terraform provider plugin/);
  });

  it("explains a host without protocol 6", async () => {
    const s = start({ ...hostEnv, PLUGIN_PROTOCOL_VERSIONS: "5" });
    expect((await s.exited).code).toBe(1);
    expect(s.stderr()).toMatch(/protocol 6 only/);
  });

  it("quotes an argument and the environment's values it refuses with nothing a terminal obeys", async () => {
    const hostile = "\u001b]0;owned\u0007\u009b2J\u202e";
    const arg = start({}, [`--${hostile}`]);
    expect((await arg.exited).code).toBe(2);
    const protocol = start({ ...hostEnv, PLUGIN_PROTOCOL_VERSIONS: `5${hostile}` });
    expect((await protocol.exited).code).toBe(1);
    const resident = start({ ...hostEnv, GPURENTAL_PROVIDER_RESIDENT: `on${hostile}` });
    expect((await resident.exited).code).toBe(1);
    for (const s of [arg, protocol, resident]) {
      // Said, escaped, and nothing raw.
      // (A JSON quote of it writes ESC and BEL as \\u001b and \\u0007; either is text.)
      expect(s.stderr()).toMatch(/\\(x1b|u001b)\]0;owned\\(x07|u0007)\\x9b2J\\u202e/);
      expect(firstUnsafeCharacter(s.stderr().replace(/[\n\t]/g, " "))).toBeUndefined();
      expect(s.stdout()).toBe("");
    }
  });

  it("refuses a host certificate it cannot read before printing a handshake, naming the variable", async () => {
    const s = start({
      ...hostEnv,
      PLUGIN_CLIENT_CERT: "-----BEGIN CERTIFICATE-----\nbad\n-----END CERTIFICATE-----\n",
    });
    expect((await s.exited).code).toBe(1);
    expect(s.stdout()).toBe("");
    expect(s.stderr()).toMatch(/^PLUGIN_CLIENT_CERT must be the host's certificate in PEM/);
  });

  it("ignores SIGINT, serves over mTLS, and exits promptly on Shutdown with nothing else on stdout", async () => {
    const s = start({ ...hostEnv, TF_LOG: "trace" });
    try {
      const line = await handshake(s);
      const hs = parseHandshake(line);
      const serverPem = derToPem(Buffer.from(hs.cert, "base64"));
      s.child.kill("SIGINT");
      await new Promise((r) => setTimeout(r, 200));
      expect(s.child.exitCode).toBeNull();

      const creds = tlsCredentials(serverPem, hostCert);
      const provider = connect(hs.address, "tfplugin6.Provider", creds);
      const res = await provider.call("GetProviderSchema");
      expect(res.provider).toBeDefined();
      provider.close();

      const controller = connect(hs.address, "plugin.GRPCController", creds);
      await controller.call("Shutdown");
      // Shutdown itself ends the process (how soon is checked in process-free server.test.ts,
      // without a clock): it exits 0 on its own, saying why, while its parent is still there.
      const exited = await Promise.race([
        s.exited,
        new Promise<"still running">((r) => setTimeout(() => r("still running"), 20_000).unref()),
      ]);
      controller.close();
      expect(exited).toEqual({ code: 0, signal: null });
      expect(s.stdout()).toBe(line); // the handshake line is the only output on stdout
      // stderr holds hclog JSON lines only
      const records = s
        .stderr()
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      for (const r of records) expect(r).toHaveProperty("@level");
      expect(s.stderr()).toMatch(/ignoring SIGINT/);
      expect(records).toContainEqual(
        expect.objectContaining({ "@message": "provider exiting", reason: "GRPCController.Shutdown" }),
      );
    } finally {
      s.child.kill("SIGKILL");
    }
  });

  it("exits on SIGTERM", async () => {
    const s = start(hostEnv);
    try {
      await handshake(s);
      s.child.kill("SIGTERM");
      expect(await s.exited).toEqual({ code: 0, signal: null });
    } finally {
      s.child.kill("SIGKILL");
    }
  });

  it("writes a V8 code cache on exit and uses it next time", async () => {
    expect(readdirSync(cacheDir).filter((f) => f.endsWith(".v8cache"))).toHaveLength(1);
    const s = start(hostEnv);
    await handshake(s);
    s.child.kill("SIGTERM");
    expect((await s.exited).code).toBe(0);
  });

  it("exits when its parent process goes away, instead of lingering as an orphan", async () => {
    // sh starts the provider in the background, prints its pid and exits once the provider has
    // printed its handshake (it watches its parent from then on).
    const out = join(work, "orphan-handshake");
    const sh = startProcess(
      "sh",
      [
        "-c",
        `"${process.execPath}" "${join(work, "run.js")}" >"${out}" 2>/dev/null & echo $!; ` +
          `until [ -s "${out}" ]; do sleep 0.05; done`,
      ],
      {
        env: {
          PATH: process.env.PATH,
          TMPDIR: work,
          GPURENTAL_PROVIDER_CODE_CACHE_DIR: cacheDir,
          GPURENTAL_PROVIDER_RESIDENT: "off",
          ...hostEnv,
        },
      },
    );
    await sh.exited;
    const pid = Number(sh.stdout().trim());
    expect(pid).toBeGreaterThan(0);
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 10_000;
    while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(alive()).toBe(false);
  });

  it("in --debug mode prints the reattach value and stops on SIGINT", async () => {
    const s = start({}, ["--debug"]);
    try {
      const deadline = Date.now() + 20_000;
      while (!/TF_REATTACH_PROVIDERS='.*'\n/.test(s.stdout()) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 10));
      }
      const reattach = JSON.parse(/TF_REATTACH_PROVIDERS='(.*)'/.exec(s.stdout())![1]!);
      expect(reattach["registry.terraform.io/gpurental/gpurental"]).toMatchObject({
        Pid: s.child.pid,
        Test: true,
      });
      s.child.kill("SIGINT");
      expect((await s.exited).code).toBe(0);
    } finally {
      s.child.kill("SIGKILL");
    }
  });
});

describe("the committed protocol descriptor", () => {
  it("matches the .proto files (regenerate with `npm run bundle`)", () => {
    expect(
      JSON.parse(readFileSync(join(__dirname, "..", "plugin", "proto", "descriptor.json"), "utf8")),
    ).toEqual(JSON.parse(descriptorText()));
  });
});

describe("a failure outside any RPC", () => {
  let crashBundle = "";
  beforeAll(async () => {
    crashBundle = await bundle(join(__dirname, "testing", "crash-provider.ts"), join(work, "crash.js"));
  });

  function run(kind: "throw" | "reject"): Started {
    return startExecutable(crashBundle, {
      PATH: process.env.PATH,
      TMPDIR: work,
      ...hostEnv,
      CRASH_KIND: kind,
    });
  }

  const records = (stderr: string) =>
    stderr
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it("an uncaught exception is one redacted hclog error line, then exit 1", async () => {
    const s = run("throw");
    try {
      await handshake(s);
      expect((await s.exited).code).toBe(1);
      const errors = records(s.stderr()).filter((r) => r["@level"] === "error");
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ "@message": "uncaught exception; the provider stops" });
      expect(String(errors[0]?.error)).toContain("thrown while holding [REDACTED]");
      expect(s.stderr()).not.toMatch(/gpr_[0-9a-f]{8}/);
    } finally {
      s.child.kill("SIGKILL");
    }
  });

  it("an unhandled rejection is logged redacted and the provider keeps serving", async () => {
    const s = run("reject");
    try {
      await handshake(s);
      const deadline = Date.now() + 10_000;
      while (!s.stderr().includes("unhandled promise rejection") && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(records(s.stderr()).find((r) => r["@level"] === "error")).toMatchObject({
        "@message": "unhandled promise rejection",
        error: expect.stringContaining("rejected while holding [REDACTED]"),
      });
      expect(s.stderr()).not.toMatch(/gpr_[0-9a-f]{8}/);
      await new Promise((r) => setTimeout(r, 200));
      expect(s.child.exitCode).toBeNull();
    } finally {
      s.child.kill("SIGKILL");
    }
  });
});
