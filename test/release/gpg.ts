import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";

// A throwaway GnuPG home for tests that sign: keys made without a passphrase, valid for a day.
// gpg starts a gpg-agent for the home (sockets inside it, or under /run/user/<uid>/gnupg where
// that exists); close() stops the agent and removes both.

/** A temp GNUPGHOME with keys made on demand. */
export class TestKeyring {
  /** The environment to run gpg (or the release script) with: GNUPGHOME set. */
  readonly env: NodeJS.ProcessEnv;

  constructor(readonly home: string) {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    this.env = { ...process.env, GNUPGHOME: home };
  }

  /** Makes an RSA signing key and returns its fingerprint. */
  newKey(name: string): string {
    const uid = `${name} <${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}@example.invalid>`;
    this.gpg(["--passphrase", "", "--quick-gen-key", uid, "rsa2048", "sign", "1d"]);
    const colons = this.gpg(["--with-colons", "--list-secret-keys", "--", uid]);
    const fpr = colons.split("\n").find((l) => l.startsWith("fpr:"));
    if (!fpr) throw new Error(`gpg made no key for ${uid}`);
    return fpr.split(":")[9] as string;
  }

  /** Makes a detached binary signature of `file` with `key` into `out`. */
  sign(key: string, file: string, out: string): void {
    this.gpg(["--yes", "--local-user", key, "--output", out, "--detach-sign", file]);
  }

  /** Runs gpg in this home; throws with its stderr when it fails. */
  gpg(args: readonly string[]): string {
    const r = spawnSync("gpg", ["--batch", "--no-tty", ...args], { env: this.env, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`gpg ${args.join(" ")} failed: ${r.stderr}`);
    return r.stdout;
  }

  /** Stops the home's gpg-agent and removes its socket directory and the home. */
  close(): void {
    try {
      execFileSync("gpgconf", ["--homedir", this.home, "--kill", "all"], { stdio: "ignore" });
      execFileSync("gpgconf", ["--homedir", this.home, "--remove-socketdir"], { stdio: "ignore" });
    } catch {
      // No agent was started, or gpgconf is missing: nothing runs that needs stopping.
    }
    rmSync(this.home, { recursive: true, force: true });
  }
}
