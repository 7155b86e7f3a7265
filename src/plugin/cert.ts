import { generateKeyPairSync, randomBytes, sign } from "node:crypto";

// go-plugin's client makes the server certificate its only trusted root and then checks the host
// name "localhost" against the SAN (Go never falls back to the CN). So the certificate must be a
// self-signed CA carrying SAN DNS:localhost and, since it has an EKU extension, serverAuth in it.
//
// The key pair and the signature come from node:crypto (P-256: well under a millisecond, where
// go-plugin's P-521 is slower and buys nothing for a loopback connection). Node has no way to
// build a certificate, and this one is made before the handshake line on every launch, which
// Terraform does 2-5 times per command: the DER is written here with a few lines of tag-length-
// value encoding, where the smallest encoder library (asn1js) cost about 7 ms per launch to load
// and run. Only the fields below vary, and the tests check the result with Node's X.509 parser
// and with asn1js as an independent DER decoder; Go's parser, the strictest, checks it end to end.

const OID = {
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  keyUsage: "2.5.29.15",
  subjectAltName: "2.5.29.17",
  basicConstraints: "2.5.29.19",
  extKeyUsage: "2.5.29.37",
  serverAuth: "1.3.6.1.5.5.7.3.1",
  clientAuth: "1.3.6.1.5.5.7.3.2",
} as const;

/** A freshly generated server certificate and its key. */
export interface ServerCertificate {
  /** The certificate in PEM form, for the TLS server. */
  certPem: string;
  /** The private key in PKCS#8 PEM form, for the TLS server. */
  keyPem: string;
  /** The DER bytes of the certificate. */
  der: Buffer;
}

/** Options of generateServerCertificate, mainly for tests. */
export interface CertificateOptions {
  /** The time the certificate is made; defaults to now. */
  now?: Date;
  /** How long the certificate stays valid; defaults to ten years. */
  validForMs?: number;
}

const TEN_YEARS_MS = 10 * 365 * 24 * 3600 * 1000;

/** Generates a self-signed ECDSA P-256 certificate that go-plugin's AutoMTLS client accepts. */
export function generateServerCertificate(options: CertificateOptions = {}): ServerCertificate {
  const now = options.now ?? new Date();
  const notBefore = new Date(now.getTime() - 30_000); // slack for clocks that disagree, as go-plugin
  const notAfter = new Date(now.getTime() + (options.validForMs ?? TEN_YEARS_MS));
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const spki = publicKey.export({ type: "spki", format: "der" });

  // A positive 128-bit serial: a clear top bit keeps the DER INTEGER non-negative, a set low bit
  // in the first byte keeps it minimal (no leading zero byte to strip).
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01;

  const signatureAlgorithm = sequence(oid(OID.ecdsaWithSha256)); // no parameters for ECDSA
  const name = sequence(rdn(OID.organization, "gpurental"), rdn(OID.commonName, "localhost"));
  const tbs = sequence(
    tlv(0xa0, tlv(TAG.integer, Buffer.from([2]))), // [0] EXPLICIT version: v3
    tlv(TAG.integer, serial),
    signatureAlgorithm,
    name,
    sequence(time(notBefore), time(notAfter)),
    name,
    spki,
    tlv(
      0xa3, // [3] EXPLICIT extensions
      sequence(
        // digitalSignature(0) keyEncipherment(2) keyAgreement(4) keyCertSign(5): 101011, 2 unused bits
        extension(OID.keyUsage, true, tlv(TAG.bitString, Buffer.from([2, 0xac]))),
        extension(OID.extKeyUsage, false, sequence(oid(OID.serverAuth), oid(OID.clientAuth))),
        extension(OID.basicConstraints, true, sequence(tlv(TAG.boolean, Buffer.from([0xff])))),
        // GeneralName dNSName is [2] IMPLICIT IA5String.
        extension(OID.subjectAltName, false, sequence(tlv(0x82, Buffer.from("localhost", "ascii")))),
      ),
    ),
  );
  const signature = sign("sha256", tbs, { key: privateKey, dsaEncoding: "der" });
  const cert = sequence(tbs, signatureAlgorithm, bitString(signature));
  const keyPem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  return { certPem: derToPem(cert), keyPem, der: cert };
}

/** The certificate field of the handshake line: standard base64 of the DER with the padding removed. */
export function handshakeCertificate(der: Buffer): string {
  // go-plugin decodes with RawStdEncoding: the '+/' alphabet without '=' padding (not base64url).
  return der.toString("base64").replace(/=+$/, "");
}

/** Wraps DER certificate bytes in PEM armour. */
export function derToPem(der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}

const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  oid: 0x06,
  utf8String: 0x0c,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
} as const;

/** One DER element: tag, definite length in the shortest form, contents. */
function tlv(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  let length: Buffer;
  if (body.length < 0x80) {
    length = Buffer.from([body.length]);
  } else {
    const bytes: number[] = [];
    for (let n = body.length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
    length = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), length, body]);
}

function sequence(...items: Buffer[]): Buffer {
  return tlv(TAG.sequence, ...items);
}

function bitString(bytes: Buffer): Buffer {
  return tlv(TAG.bitString, Buffer.from([0]), bytes); // no unused bits
}

/** An OBJECT IDENTIFIER: the first two arcs as 40a+b, then every arc in base 128, high bit = more. */
function oid(dotted: string): Buffer {
  const arcs = dotted.split(".").map(Number);
  const out: number[] = [];
  [40 * arcs[0]! + arcs[1]!, ...arcs.slice(2)].forEach((arc) => {
    const groups = [arc & 0x7f];
    for (let n = Math.floor(arc / 128); n > 0; n = Math.floor(n / 128)) groups.unshift((n & 0x7f) | 0x80);
    out.push(...groups);
  });
  return tlv(TAG.oid, Buffer.from(out));
}

function rdn(type: string, value: string): Buffer {
  return tlv(TAG.set, sequence(oid(type), tlv(TAG.utf8String, Buffer.from(value, "utf8"))));
}

/** RFC 5280: UTCTime (YYMMDDHHMMSSZ) up to 2049, GeneralizedTime (YYYYMMDDHHMMSSZ) from 2050 on. */
function time(date: Date): Buffer {
  const digits = date
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replace(/[-T:]/g, "");
  return date.getUTCFullYear() < 2050
    ? tlv(TAG.utcTime, Buffer.from(digits.slice(2), "ascii"))
    : tlv(TAG.generalizedTime, Buffer.from(digits, "ascii"));
}

function extension(extnID: string, critical: boolean, value: Buffer): Buffer {
  return sequence(
    oid(extnID),
    ...(critical ? [tlv(TAG.boolean, Buffer.from([0xff]))] : []),
    tlv(TAG.octetString, value),
  );
}
