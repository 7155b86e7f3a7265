import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { chmodSync, writeFileSync } from "node:fs";
import { isIP, isIPv4, isIPv6 } from "node:net";
import { dirname, join, resolve } from "node:path";
import { domainToASCII } from "node:url";
import { type Command, InvalidArgumentError, Option } from "commander";
import { redactText } from "../api/redact";
import { formatBytes, readBounded, TooLargeError } from "../bounded-read";
import type { TransitionMode } from "../fake-backend/types";
import { portOf } from "./flags";
import { printErr, printOut } from "./io";
import { writeShellEnv } from "./shell-env";

function parsePort(value: string): number {
  const port = portOf(value);
  if (port === undefined)
    throw new InvalidArgumentError(`--port must be an integer from 0 to 65535, got '${value}'.`);
  return port;
}

/**
 * The longest --transitions delay: what one Node.js timer can wait (2^31 - 1 ms, about 24.8 days).
 * A longer one would not survive a restart anyway: past 1e308 it is Infinity, which the state file
 * stores as null.
 */
const MAX_TRANSITION_MS = 2_147_483_647;

function parseTransitions(value: string): TransitionMode {
  if (value === "immediate" || value === "manual" || value === "realistic") return value;
  if (/^\d+$/.test(value)) {
    const afterMs = Number(value);
    if (afterMs > MAX_TRANSITION_MS) {
      throw new InvalidArgumentError(
        `--transitions must be at most ${MAX_TRANSITION_MS} milliseconds (about 24.8 days), got '${value}'.`,
      );
    }
    return { afterMs };
  }
  throw new InvalidArgumentError(
    `--transitions must be immediate, realistic, manual or a number of milliseconds, got '${value}'.`,
  );
}

/** A label of a DNS name as a certificate holds it: letters, digits and hyphens, 1 to 63 of them. */
const LDH_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** What --tls-name takes, said once for every refusal. */
const TLS_NAME_RULE =
  'a DNS name (dot-separated labels of 1 to 63 letters, digits, underscores and hyphens, no hyphen first or last, 253 characters at most, one final dot allowed; an international name is taken in its xn-- form), optionally after one leading "*." with at least two labels after it, or an IP address';

/**
 * A --tls-name as the generated certificate holds it, or why not, naming the flag and the value.
 * A DNS name is written in ASCII (an international one converted to its xn-- form, which is what a
 * client looks for) and lower case; an IPv6 address in its canonical form (an IPv4-mapped one as
 * its IPv4 address, the host a client reaches through it).
 */
export function parseTlsName(value: string): string {
  if (value === "") {
    throw new InvalidArgumentError(`--tls-name must not be empty: give ${TLS_NAME_RULE}.`);
  }
  if (isIPv4(value)) return value;
  if (isIPv6(value)) return ipv6Name(value);
  const wildcard = value.startsWith("*.");
  // A fully qualified name's final dot says nothing a certificate holds.
  const name = (wildcard ? value.slice(2) : value).replace(/\.$/, "");
  const ascii = domainToASCII(name);
  const labels = ascii.split(".");
  // domainToASCII reads numbers as a URL host does: "1.2.3" and "0x7f.1" come back as addresses.
  const dns =
    ascii !== "" &&
    isIP(ascii) === 0 &&
    ascii.length <= (wildcard ? 251 : 253) &&
    labels.length >= (wildcard ? 2 : 1) &&
    labels.every((l) => LDH_LABEL.test(l));
  if (!dns) throw new InvalidArgumentError(`--tls-name must be ${TLS_NAME_RULE}, got '${value}'.`);
  return wildcard ? `*.${ascii}` : ascii;
}

/** An IPv6 --tls-name in its canonical form, or an IPv4-mapped one's IPv4 address. */
function ipv6Name(value: string): string {
  let host: string;
  try {
    host = new URL(`http://[${value}]/`).hostname.slice(1, -1);
  } catch {
    // node:net takes a zone (fe80::1%eth0); a URL, and a certificate, has none.
    throw new InvalidArgumentError(
      `--tls-name must be an IP address without a zone (no %), got '${value}': a certificate holds none.`,
    );
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (!mapped) return host;
  const [hi, lo] = [Number.parseInt(mapped[1] ?? "", 16), Number.parseInt(mapped[2] ?? "", 16)];
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join(".");
}

function parseHost(value: string): string {
  // An empty host binds every interface, serving the demo credentials and the control API to the
  // network: that takes asking for it by name.
  if (value === "") {
    throw new InvalidArgumentError(
      "--host must not be empty: give the address to bind, 127.0.0.1 by default (0.0.0.0 or :: for every interface).",
    );
  }
  return value;
}

function parseControlToken(value: string): string {
  // An empty or short token would leave the control API (reset, clock, balance) effectively open.
  if (!/^[\x21-\x7e]{16,256}$/.test(value)) {
    throw new InvalidArgumentError(
      `--control-token must be 16 to 256 printable ASCII characters without spaces, got ${value.length} characters.`,
    );
  }
  return value;
}

interface FakeBackendFlags {
  port: number;
  host: string;
  stateFile?: string;
  seed: "demo" | "none";
  credentials?: string;
  shellEnv?: string;
  controlToken?: string;
  transitions: TransitionMode;
  quiet?: boolean;
  tls?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  tlsName: string[];
  caFile?: string;
}

/** The file name of the generated CA, written beside the credentials file. */
export const CA_FILE_NAME = "gpurental-fake-ca.pem";

/** Registers the `fake-backend` command: the embedded fake /v1 backend, standalone. */
export function register(program: Command): void {
  program
    .command("fake-backend")
    .description("Run the embedded fake /v1 backend (for tests, demos and local development)")
    .addOption(
      new Option("--port <port>", "port to listen on, 0 picks a free one").argParser(parsePort).default(0),
    )
    .addOption(new Option("--host <host>", "address to bind").argParser(parseHost).default("127.0.0.1"))
    .option("--state-file <path>", "persist state to this file after each change and restore it at start")
    .addOption(new Option("--seed <seed>", "seed data at start").choices(["demo", "none"]).default("none"))
    .option("--credentials <path>", "write the demo credentials as JSON (mode 0600) to this file")
    // Not `--env-file`: Node.js 22 takes that flag for itself wherever it stands in the arguments of
    // a single executable application (the release's standalone command), and exits with code 9.
    .option(
      "--shell-env <path>",
      "write the provider's settings for the demo admin as `export GPURENTAL_...=` lines (mode 0600) to this file, for a shell to read with `. <path>`; written last, once everything else is",
    )
    .addOption(
      new Option(
        "--control-token <token>",
        "token of the /_control API, 16+ characters (random when absent)",
      ).argParser(parseControlToken),
    )
    .addOption(
      new Option("--transitions <mode>", "immediate | realistic | manual | <milliseconds>")
        .argParser(parseTransitions)
        .default("realistic"),
    )
    .option("--quiet", "do not log a line per request")
    .option("--tls", "serve HTTPS with a generated CA and server certificate (the CA goes to --ca-file)")
    .option("--tls-cert <file>", "serve HTTPS with this certificate (PEM); needs --tls-key")
    .option("--tls-key <file>", "the private key (PEM) of --tls-cert")
    .option(
      "--tls-name <name>",
      "a further DNS name (an international one in its xn-- form, a wildcard as *.example.test) or IP address of the generated certificate (repeatable); localhost, 127.0.0.1 and ::1 are always in it",
      (v: string, prev: string[]) => [...prev, parseTlsName(v)],
      [] as string[],
    )
    .option(
      "--ca-file <path>",
      `where --tls writes the CA certificate; default ${CA_FILE_NAME} beside --credentials`,
    )
    .action(async (flags: FakeBackendFlags, cmd: Command) => {
      if (flags.credentials && flags.seed !== "demo") {
        cmd.error("error: --credentials needs --seed demo", { exitCode: 1 });
      }
      if (flags.shellEnv && flags.seed !== "demo") {
        cmd.error("error: --shell-env needs --seed demo", { exitCode: 1 });
      }
      if (!!flags.tlsCert !== !!flags.tlsKey) {
        cmd.error("error: --tls-cert and --tls-key go together", { exitCode: 1 });
      }
      if (flags.tls && flags.tlsCert) {
        cmd.error("error: --tls generates a certificate; leave it out with --tls-cert and --tls-key", {
          exitCode: 1,
        });
      }
      if (flags.tls && !flags.caFile && !flags.credentials && !flags.shellEnv) {
        cmd.error(
          "error: --tls needs --ca-file, --credentials or --shell-env (the CA is written beside it)",
          {
            exitCode: 1,
          },
        );
      }
      await run(flags);
    });
}

/** The most a certificate or key file is read: PEM of a few KiB, and /dev/zero never ends. */
const MAX_PEM_FILE_BYTES = 1024 * 1024;

/** A file a flag names, read; why not, naming the flag and the path, when it cannot be. */
function readFlagFile(flag: string, path: string): string | { problem: string } {
  try {
    return readBounded(path, MAX_PEM_FILE_BYTES).toString("utf8");
  } catch (err) {
    if (err instanceof TooLargeError) {
      return {
        problem: `${flag} ${path} gives more than ${formatBytes(MAX_PEM_FILE_BYTES)}: it is no PEM file`,
      };
    }
    const e = err as NodeJS.ErrnoException;
    return { problem: `${flag} ${path} cannot be read (${e.code ?? e.message})` };
  }
}

/**
 * The certificate and key of --tls-cert and --tls-key, checked before anything listens: each a
 * PEM file of its kind (not TLS's "PEM routines::no start line"), the key the certificate's.
 * Returns why not, naming the flag and the path, when they cannot serve HTTPS.
 */
function ownCertificate(certFile: string, keyFile: string): { certPem: string; keyPem: string } | string {
  const certPem = readFlagFile("--tls-cert", certFile);
  if (typeof certPem !== "string") return certPem.problem;
  const keyPem = readFlagFile("--tls-key", keyFile);
  if (typeof keyPem !== "string") return keyPem.problem;
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    return `--tls-cert ${certFile} is not a PEM certificate: it must hold a "-----BEGIN CERTIFICATE-----" block`;
  }
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(keyPem)) {
    return `--tls-key ${keyFile} is encrypted with a passphrase, which the fake backend cannot take: give the key unencrypted`;
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    return `--tls-key ${keyFile} is not a PEM private key: it must hold a "-----BEGIN PRIVATE KEY-----" block (or an RSA or EC one)`;
  }
  if (!cert.checkPrivateKey(key)) {
    return `--tls-key ${keyFile} is not the private key of the certificate of --tls-cert ${certFile}`;
  }
  return { certPem, keyPem };
}

async function run(flags: FakeBackendFlags): Promise<void> {
  const { startFakeBackend } = await import("../fake-backend");
  let backend: Awaited<ReturnType<typeof startFakeBackend>>;
  let own: { certPem: string; keyPem: string } | undefined;
  if (flags.tlsCert && flags.tlsKey) {
    const pair = ownCertificate(flags.tlsCert, flags.tlsKey);
    if (typeof pair === "string") {
      printErr(`error: ${pair}\n`);
      process.exitCode = 1;
      return;
    }
    own = pair;
  }
  try {
    backend = await startFakeBackend({
      port: flags.port,
      host: flags.host,
      stateFile: flags.stateFile,
      seed: flags.seed,
      controlToken: flags.controlToken,
      transitions: flags.transitions,
      tickMs: 250,
      ...(flags.tls ? { tls: true as const, tlsNames: flags.tlsName } : own ? { tls: own } : {}),
      logger: flags.quiet ? undefined : (line) => printOut(`${new Date().toISOString()} ${line}\n`),
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "EADDRINUSE") {
      printErr(`error: port ${flags.port} on ${flags.host} is already in use\n`);
    } else if (code === "EADDRNOTAVAIL" || code === "EACCES") {
      printErr(`error: cannot listen on ${flags.host}:${flags.port} (${code})\n`);
    } else if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
      printErr(`error: --host ${flags.host} is not an address of this machine (${code})\n`);
    } else if (err instanceof Error && err.name === "StateFileError") {
      // It may quote the file around a damaged record, and the file holds the demo's tokens.
      printErr(`error: --state-file: ${redactText(err.message)}\n`);
    } else {
      printErr(`error: the fake backend could not start: ${(err as Error).message}\n`);
    }
    process.exitCode = 1;
    return;
  }
  if (flags.credentials && backend.credentials) {
    try {
      writeFileSync(flags.credentials, `${JSON.stringify(backend.credentials, null, 2)}\n`, { mode: 0o600 });
      // `mode` only applies to a new file: an older, wider-open file must not keep its mode.
      chmodSync(flags.credentials, 0o600);
    } catch (err) {
      // Without its credentials file the demo is of no use: stop instead of serving on unseen.
      const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      printErr(`error: --credentials ${flags.credentials} cannot be written (${reason})\n`);
      await backend.close();
      process.exitCode = 1;
      return;
    }
  }
  const beside = flags.credentials ?? flags.shellEnv;
  const caFile = flags.caFile ?? (beside ? join(dirname(beside), CA_FILE_NAME) : undefined);
  if (backend.caCertPem && caFile) {
    try {
      writeFileSync(caFile, backend.caCertPem);
    } catch (err) {
      const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      printErr(`error: the CA certificate cannot be written to ${caFile} (${reason})\n`);
      await backend.close();
      process.exitCode = 1;
      return;
    }
  }
  // Last, so that a script waiting for it finds everything else written.
  if (flags.shellEnv && backend.credentials) {
    try {
      const ca = backend.caCertPem && caFile ? resolve(caFile) : undefined;
      writeShellEnv(flags.shellEnv, backend.url, backend.credentials, ca);
    } catch (err) {
      const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      printErr(`error: --shell-env ${flags.shellEnv} cannot be written (${reason})\n`);
      await backend.close();
      process.exitCode = 1;
      return;
    }
  }
  // The URL only: tokens go to the credentials file, never to the terminal.
  printOut(`gpurental fake backend listening on ${backend.url}\n`);
  if (flags.credentials) printOut(`credentials written to ${flags.credentials}\n`);
  if (flags.shellEnv)
    printOut(`settings for a shell written to ${flags.shellEnv} (read them with: . ${flags.shellEnv})\n`);
  if (backend.caCertPem && caFile) {
    printOut(`CA certificate written to ${caFile} (point GPURENTAL_CA_CERT_FILE or ca_cert_file at it)\n`);
  }

  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await backend.close();
  printOut("gpurental fake backend stopped\n");
}
