"use strict";
// Signing a release with GnuPG: the key named by GPURENTAL_RELEASE_GPG_KEY (GNUPGHOME honoured),
// or a throwaway key made for one build in a GnuPG home of its own (--throwaway-key). What is
// signed, and when, is release.js's business; this module only finds or makes the key and runs gpg.
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { ReleaseError } = require("./shared");

/** Runs gpg in batch mode with `env`: its stdout, or a ReleaseError with its stderr. */
function gpg(args, env) {
  const result = spawnSync("gpg", ["--batch", "--no-tty", ...args], { encoding: "utf8", env });
  if (result.error) throw new ReleaseError(`cannot run gpg (install GnuPG): ${result.error.message}`);
  if (result.status !== 0)
    throw new ReleaseError(`gpg ${args.join(" ")} failed: ${String(result.stderr).trim()}`);
  return result.stdout;
}

/** The signing key named by GPURENTAL_RELEASE_GPG_KEY: its long key id and ASCII-armored public key. */
function signingKey(env) {
  const name = (env.GPURENTAL_RELEASE_GPG_KEY ?? "").trim();
  if (!name) {
    throw new ReleaseError(
      "GPURENTAL_RELEASE_GPG_KEY is not set: name the signing key (a key id or fingerprint in gpg's keyring; GNUPGHOME is honoured)",
    );
  }
  const colons = gpg(["--with-colons", "--list-secret-keys", "--", name], env);
  const sec = colons.split("\n").find((l) => l.startsWith("sec:"));
  if (!sec) throw new ReleaseError(`GPURENTAL_RELEASE_GPG_KEY: no secret key "${name}" in gpg's keyring`);
  const keyId = sec.split(":")[4].toUpperCase();
  const armor = gpg(["--armor", "--export", "--", keyId], env);
  return { keyId, armor };
}

/**
 * A key made for one build (--throwaway-key): in a GnuPG home of its own under the temp directory,
 * without a passphrase, deleted with its agent by close(). The user's keyring (GNUPGHOME, ~/.gnupg)
 * is never read or written. Nobody holds the private key afterwards, so it needs no expiry.
 */
function throwawaySigner(env) {
  // Named by the process, so a check that it is gone looks at this build's own. Its path stays
  // short: gpg-agent's socket lives in it, and a socket's path has at most 107 bytes.
  const home = fs.mkdtempSync(
    path.join(require("node:os").tmpdir(), `gpurental-release-key-${process.pid}-`),
  );
  const keyEnv = { ...env, GNUPGHOME: home };
  delete keyEnv.GPG_AGENT_INFO;
  const close = () => {
    spawnSync("gpgconf", ["--homedir", home, "--kill", "all"], { stdio: "ignore" });
    spawnSync("gpgconf", ["--homedir", home, "--remove-socketdir"], { stdio: "ignore" });
    fs.rmSync(home, { recursive: true, force: true });
  };
  try {
    fs.chmodSync(home, 0o700);
    const uid = "gpurental throwaway release key (for trying only) <throwaway@gpurental.invalid>";
    gpg(["--passphrase", "", "--quick-gen-key", uid, "rsa3072", "sign", "never"], keyEnv);
    return {
      ...signingKey({ ...keyEnv, GPURENTAL_RELEASE_GPG_KEY: uid }),
      env: keyEnv,
      throwaway: true,
      close,
    };
  } catch (err) {
    close();
    throw err;
  }
}

module.exports = { gpg, signingKey, throwawaySigner };
