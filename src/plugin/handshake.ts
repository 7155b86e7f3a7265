import { X509Certificate } from "node:crypto";

// The go-plugin handshake: the environment the host sets before it starts a plugin, and the one
// line the plugin answers with on stdout.

/** The magic cookie Terraform and OpenTofu set; a UX check that the binary was started by them. */
export const MAGIC_COOKIE_KEY = "TF_PLUGIN_MAGIC_COOKIE";
/** The value of the magic cookie. */
export const MAGIC_COOKIE_VALUE = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";
/** go-plugin's core protocol version, the first handshake field. */
export const CORE_PROTOCOL_VERSION = 1;
/** The plugin protocol major this provider speaks (tfplugin6). */
export const APP_PROTOCOL_VERSION = 6;

/** The message printed when the executable is run by hand instead of by Terraform. */
export const NOT_BY_HAND_MESSAGE = `This binary is a Terraform provider plugin (terraform-provider-gpurental).
It is not meant to be executed directly: Terraform starts it when a configuration uses the
gpurental/gpurental provider. To install it for Terraform, run:

  gpurental provider install

To debug it, run it with --debug and set TF_REATTACH_PROVIDERS as it prints.
`;

/** Why the handshake cannot go ahead. */
export class HandshakeError extends Error {
  override readonly name = "HandshakeError";
}

/** Throws HandshakeError unless the host set Terraform's magic cookie. */
export function checkMagicCookie(env: NodeJS.ProcessEnv): void {
  if (env[MAGIC_COOKIE_KEY] !== MAGIC_COOKIE_VALUE) throw new HandshakeError(NOT_BY_HAND_MESSAGE);
}

/**
 * Picks the protocol version from PLUGIN_PROTOCOL_VERSIONS (a comma-separated list in random
 * order, e.g. "6,5"). Absent means a host older than version negotiation; such a host would
 * expect protocol 5, which this provider cannot speak.
 */
export function negotiateProtocol(env: NodeJS.ProcessEnv): number {
  const raw = env.PLUGIN_PROTOCOL_VERSIONS;
  const offered = (raw ?? "")
    .split(",")
    .map((v) => Number.parseInt(v.trim(), 10))
    .filter((v) => Number.isInteger(v));
  if (offered.includes(APP_PROTOCOL_VERSION)) return APP_PROTOCOL_VERSION;
  throw new HandshakeError(
    `terraform-provider-gpurental speaks plugin protocol ${APP_PROTOCOL_VERSION} only, but the host offered ` +
      `${raw ? `"${raw}"` : "none"}. Use Terraform 1.0 or later, or OpenTofu.`,
  );
}

/**
 * The host's certificate for AutoMTLS (PLUGIN_CLIENT_CERT, PEM), or undefined when the host asked
 * for plaintext. Throws HandshakeError, naming the variable, when it is not a certificate: the
 * provider could never accept the host's connection.
 */
export function clientCertificate(env: NodeJS.ProcessEnv): string | undefined {
  const pem = env.PLUGIN_CLIENT_CERT;
  if (!pem) return undefined;
  try {
    new X509Certificate(pem);
  } catch (err) {
    throw new HandshakeError(
      `PLUGIN_CLIENT_CERT must be the host's certificate in PEM, as Terraform sets it; it cannot be read (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  return pem;
}

/** Fields of the handshake line. */
export interface HandshakeFields {
  /** The negotiated app protocol, 6. */
  protocolVersion: number;
  /** "tcp" or "unix". */
  network: "tcp" | "unix";
  /** host:port for tcp, an absolute socket path for unix. */
  address: string;
  /** The unpadded standard base64 DER of the server certificate, or "" for plaintext. */
  serverCert: string;
}

/** The handshake line, newline included: CORE|APP|NETWORK|ADDRESS|grpc|CERT. */
export function handshakeLine(f: HandshakeFields): string {
  return `${[CORE_PROTOCOL_VERSION, f.protocolVersion, f.network, f.address, "grpc", f.serverCert].join("|")}\n`;
}

/** The provider's source address, the key of TF_REATTACH_PROVIDERS. */
export const DEFAULT_PROVIDER_ADDRESS = "registry.terraform.io/gpurental/gpurental";

/** The TF_REATTACH_PROVIDERS value for a provider served in debug mode. */
export function reattachConfig(opts: {
  providerAddress?: string;
  pid: number;
  network: "tcp" | "unix";
  address: string;
}): string {
  // Test must be true for protocol 6: without it go-plugin never records the negotiated version,
  // Terraform assumes protocol 5 and crashes. It also keeps Terraform from killing the process.
  return JSON.stringify({
    [opts.providerAddress ?? DEFAULT_PROVIDER_ADDRESS]: {
      Protocol: "grpc",
      ProtocolVersion: APP_PROTOCOL_VERSION,
      Pid: opts.pid,
      Test: true,
      Addr: { Network: opts.network, String: opts.address },
    },
  });
}
