import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shellQuote } from "../display";
import type { DemoCredentials } from "../fake-backend/types";
import { shellEnvText, writeShellEnv } from "./shell-env";

const creds = {
  admin_session_token: 'gps_it\'s a $HOME `token` \\ "quoted"',
  org_id: "org-1",
  ssh_key_id: "key-1",
} as DemoCredentials;

/** What `sh` holds after reading `file`: the variables named. */
function readBack(file: string, names: string[]): string[] {
  const r = spawnSync(
    "sh",
    ["-c", `. "$1" && printf '%s\\n' ${names.map((n) => `"$${n}"`).join(" ")}`, "sh", file],
    {
      encoding: "utf8",
      env: { PATH: process.env.PATH },
    },
  );
  expect(r.stderr).toBe("");
  return r.stdout.split("\n").slice(0, names.length);
}

describe("settings for a shell", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpurental-shell-env-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([["plain"], ["it's"], ["$(touch pwned) `x` $HOME"], ['back\\slash "dq"'], ["line\nbreak"]])(
    "quotes %j so that a shell reads it back unchanged and runs nothing",
    (value) => {
      const file = join(dir, "one.env");
      writeFileSync(file, `export V=${shellQuote(value)}\n`);
      expect(readBack(file, ["V"]).join("\n")).toBe(value.split("\n")[0]);
      expect(
        spawnSync("sh", ["-c", '. "$1" && printf %s "$V"', "sh", file], { encoding: "utf8" }).stdout,
      ).toBe(value);
    },
  );

  it("writes every variable the provider and the commands read, with mode 0600 also over a wider file", () => {
    const file = join(dir, "fake.env");
    writeFileSync(file, "old", { mode: 0o644 });
    writeShellEnv(file, "https://127.0.0.1:8787", creds, "/abs/ca.pem");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(
      readBack(file, [
        "GPURENTAL_BASE_URL",
        "GPURENTAL_TOKEN",
        "GPURENTAL_ORG_ID",
        "GPURENTAL_SSH_KEY_ID",
        "GPURENTAL_CA_CERT_FILE",
      ]),
    ).toEqual(["https://127.0.0.1:8787", creds.admin_session_token, "org-1", "key-1", "/abs/ca.pem"]);
    expect(shellEnvText("http://x", creds)).not.toContain("GPURENTAL_CA_CERT_FILE");
  });
});
