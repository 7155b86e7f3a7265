import type { Logger } from "../log";
import { generateServerCertificate, handshakeCertificate } from "./cert";
import type { TlsMaterial } from "./grpc-server";
import { checkMagicCookie, clientCertificate, negotiateProtocol } from "./handshake";
import { removeStaleSockets } from "./stale-sockets";

// The steps every session of the provider goes through, whether a provider process serves it
// (server.ts, serveProvider) or a session of the resident process does (src/resident/
// resident-daemon.ts): the host's handshake variables checked, the certificate made and paired with
// the host's, Terraform's Shutdown handed to the executable's hook, and the sockets of processes
// killed outright swept away. Where and how each listens, and when it exits, stay theirs.

/** What the host's environment says of a session: the protocol to speak and the host's certificate. */
export interface HostHandshake {
  protocolVersion: number;
  /** The host's certificate (AutoMTLS), when it sent one. */
  clientCert: string | undefined;
}

/** Checks the host's handshake variables; throws HandshakeError as go-plugin would refuse. */
export function checkHost(env: NodeJS.ProcessEnv): HostHandshake {
  checkMagicCookie(env);
  const protocolVersion = negotiateProtocol(env);
  return { protocolVersion, clientCert: clientCertificate(env) };
}

/** A server certificate as a session shows it: the key pair and the handshake line's field. */
export interface ServerCertificate {
  certPem: string;
  keyPem: string;
  /** The certificate as the handshake line carries it. */
  handshake: string;
}

/** Makes a server certificate for the handshake line (see cert.ts). */
export function serverCertificate(): ServerCertificate {
  const cert = generateServerCertificate();
  return { certPem: cert.certPem, keyPem: cert.keyPem, handshake: handshakeCertificate(cert.der) };
}

/**
 * The TLS of a session: none without the host's certificate (plaintext, an empty field in the
 * handshake line); else the host's certificate as the only client accepted and `own()` shown.
 */
export function sessionTls(
  clientCert: string | undefined,
  own: () => ServerCertificate,
): { tls: TlsMaterial | undefined; certField: string } {
  if (!clientCert) return { tls: undefined, certField: "" };
  const cert = own();
  return {
    tls: { clientCertPem: clientCert, certPem: cert.certPem, keyPem: cert.keyPem },
    certField: cert.handshake,
  };
}

/** Removes the sockets in `dir` named like `pattern` that nobody listens on (but `keep`), and says how many. */
export function sweepStaleSockets(
  dir: string,
  pattern: RegExp,
  keep: readonly string[],
  log: Logger,
  fields: Record<string, unknown> = {},
): void {
  void removeStaleSockets(dir, pattern, keep).then(
    (n) => n > 0 && log.debug("removed stale sockets", { ...fields, count: n }),
  );
}
