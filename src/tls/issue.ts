import { type KeyObject, randomBytes } from "node:crypto";
import { isIPv4, isIPv6 } from "node:net";
import {
  certificatePem,
  extension,
  OID,
  oid,
  p256KeyPair,
  rdn,
  sequence,
  signCertificate,
  TAG,
  TEN_YEARS_MS,
  tlv,
} from "./der";

// Certificates for serving HTTPS in tests and demos: a private CA and server certificates it signs,
// with DNS and IP subject alternative names and any validity period (an expired one included, to
// prove the client's error). ECDSA P-256 keys from node:crypto; the DER is written with der.ts,
// since Node can parse a certificate but not build one.

/** A certificate, its key, and what signing with it needs. */
export interface IssuedCertificate {
  /** The certificate, PEM. */
  certPem: string;
  /** Its private key, PKCS#8 PEM. */
  keyPem: string;
  /** The certificate's DER bytes. */
  der: Buffer;
  /** The DER of its subject name: the issuer name of what it signs. */
  subject: Buffer;
  /** The private key, to sign with when it is a CA. */
  key: KeyObject;
}

/** What {@link issueCertificate} makes. */
export interface IssueOptions {
  /** The subject's common name. */
  commonName: string;
  /** DNS names of the subject alternative name extension. */
  dnsNames?: readonly string[];
  /** IPv4 or IPv6 addresses of the subject alternative name extension. */
  ipAddresses?: readonly string[];
  /** A CA certificate (may sign others) rather than a server certificate. */
  ca?: boolean;
  /** The CA that signs it; self-signed when absent. */
  issuer?: IssuedCertificate;
  /** Start of validity; default 30 seconds ago (slack for clocks that disagree). */
  notBefore?: Date;
  /** End of validity; default ten years from now. */
  notAfter?: Date;
}

/** Issues a certificate as described by `opts`. */
export function issueCertificate(opts: IssueOptions): IssuedCertificate {
  const now = Date.now();
  const notBefore = opts.notBefore ?? new Date(now - 30_000);
  const notAfter = opts.notAfter ?? new Date(now + TEN_YEARS_MS);
  const { spki, privateKey } = p256KeyPair();
  const subject = sequence(rdn(OID.organization, "gpurental test"), rdn(OID.commonName, opts.commonName));
  const names = [
    ...(opts.dnsNames ?? []).map((n) => tlv(0x82, dnsNameBytes(n))),
    ...(opts.ipAddresses ?? []).map((ip) => tlv(0x87, ipBytes(ip))),
  ];
  const extensions = opts.ca
    ? [
        // keyCertSign(5) cRLSign(6): 0000011, 1 unused bit
        extension(OID.keyUsage, true, tlv(TAG.bitString, Buffer.from([1, 0x06]))),
        extension(OID.basicConstraints, true, sequence(tlv(TAG.boolean, Buffer.from([0xff])))),
      ]
    : [
        // digitalSignature(0): 1, 7 unused bits
        extension(OID.keyUsage, true, tlv(TAG.bitString, Buffer.from([7, 0x80]))),
        extension(OID.extKeyUsage, false, sequence(oid(OID.serverAuth))),
        extension(OID.basicConstraints, true, sequence()),
      ];
  if (names.length > 0) extensions.push(extension(OID.subjectAltName, false, sequence(...names)));
  const der = signCertificate({
    issuer: opts.issuer?.subject ?? subject,
    subject,
    notBefore,
    notAfter,
    spki,
    extensions,
    signingKey: opts.issuer?.key ?? privateKey,
  });
  return {
    certPem: certificatePem(der),
    keyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    der,
    subject,
    key: privateKey,
  };
}

/** A private CA and a server certificate it signs for `names` (host names and IP addresses). */
export interface TestPki {
  ca: IssuedCertificate;
  server: IssuedCertificate;
}

/** Names every local server certificate carries, beside those asked for. */
export const LOCAL_NAMES: readonly string[] = ["localhost", "127.0.0.1", "::1"];

/** Makes a CA and a server certificate for `names` plus {@link LOCAL_NAMES}. */
export function createTestPki(
  names: readonly string[] = [],
  // A name of its own: OpenSSL finds an issuer by name, so two test CAs trusted together (two
  // fake backends in one test run) must not share one.
  commonName = `gpurental test CA ${randomBytes(4).toString("hex")}`,
): TestPki {
  const ca = issueCertificate({ commonName, ca: true });
  const all = [...new Set([...LOCAL_NAMES, ...names])];
  const server = issueCertificate({
    commonName: all.find((n) => !isIPv4(n) && !isIPv6(n)) ?? "localhost",
    dnsNames: all.filter((n) => !isIPv4(n) && !isIPv6(n)),
    ipAddresses: all.filter((n) => isIPv4(n) || isIPv6(n)),
    issuer: ca,
  });
  return { ca, server };
}

/**
 * The bytes of a DNS name, as the dNSName general name holds them: an IA5String, so ASCII. Node's
 * "ascii" encoding would keep the low byte of any other character (a name no client matches);
 * such a name, or one with a space or a control character, is refused instead.
 */
function dnsNameBytes(name: string): Buffer {
  if (!/^[\x21-\x7e]+$/.test(name)) {
    throw new Error(
      `not a DNS name a certificate can hold: ${JSON.stringify(name)}; it must be printable ASCII without spaces (give an international name in its xn-- form, as domainToASCII of node:url converts it)`,
    );
  }
  return Buffer.from(name, "ascii");
}

/** The 4 or 16 bytes of an IP address, as the iPAddress general name holds them. */
export function ipBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split(".").map(Number));
  if (!isIPv6(ip) || ip.includes(".")) throw new Error(`not an IPv4 or plain IPv6 address: ${ip}`);
  const [head = "", tail] = ip.split("::");
  const groups = (s: string) => (s === "" ? [] : s.split(":"));
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const words = [...h, ...Array<string>(8 - h.length - t.length).fill("0"), ...t];
  const out = Buffer.alloc(16);
  for (const [i, w] of words.entries()) out.writeUInt16BE(Number.parseInt(w, 16), i * 2);
  return out;
}
