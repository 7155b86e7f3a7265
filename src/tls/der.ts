import { generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";

// The few DER encoders an X.509 certificate needs (tag-length-value elements, object identifiers,
// names, times and extensions) and the assembly of a signed certificate from them: key pair,
// serial, validity, signature, PEM. Shared by the plugin's AutoMTLS certificate (src/plugin/cert.ts,
// made on every launch, which is why it is written by hand) and the certificates the fake backend
// serves HTTPS with (src/tls/issue.ts); their tests check the output with Node's X.509 parser and
// with asn1js as an independent decoder.

/** The object identifiers our certificates use. */
export const OID = {
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

/** DER tags used by the encoders. */
export const TAG = {
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
export function tlv(tag: number, ...contents: Buffer[]): Buffer {
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

/** A SEQUENCE of the items. */
export function sequence(...items: Buffer[]): Buffer {
  return tlv(TAG.sequence, ...items);
}

/** A BIT STRING of whole bytes. */
export function bitString(bytes: Buffer): Buffer {
  return tlv(TAG.bitString, Buffer.from([0]), bytes); // no unused bits
}

/** An OBJECT IDENTIFIER: the first two arcs as 40a+b, then every arc in base 128, high bit = more. */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split(".").map(Number);
  const out: number[] = [];
  [40 * arcs[0]! + arcs[1]!, ...arcs.slice(2)].forEach((arc) => {
    const groups = [arc & 0x7f];
    for (let n = Math.floor(arc / 128); n > 0; n = Math.floor(n / 128)) groups.unshift((n & 0x7f) | 0x80);
    out.push(...groups);
  });
  return tlv(TAG.oid, Buffer.from(out));
}

/** One relative distinguished name: an attribute type and its UTF-8 value. */
export function rdn(type: string, value: string): Buffer {
  return tlv(TAG.set, sequence(oid(type), tlv(TAG.utf8String, Buffer.from(value, "utf8"))));
}

/** RFC 5280: UTCTime (YYMMDDHHMMSSZ) up to 2049, GeneralizedTime (YYYYMMDDHHMMSSZ) from 2050 on. */
export function time(date: Date): Buffer {
  const digits = date
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replace(/[-T:]/g, "");
  return date.getUTCFullYear() < 2050
    ? tlv(TAG.utcTime, Buffer.from(digits.slice(2), "ascii"))
    : tlv(TAG.generalizedTime, Buffer.from(digits, "ascii"));
}

/** One certificate extension, its value wrapped in an OCTET STRING. */
export function extension(extnID: string, critical: boolean, value: Buffer): Buffer {
  return sequence(
    oid(extnID),
    ...(critical ? [tlv(TAG.boolean, Buffer.from([0xff]))] : []),
    tlv(TAG.octetString, value),
  );
}

/** How long a certificate stays valid unless told otherwise. */
export const TEN_YEARS_MS = 10 * 365 * 24 * 3600 * 1000;

/** A fresh ECDSA P-256 key pair: the public key as SubjectPublicKeyInfo DER, and the private key. */
export function p256KeyPair(): { spki: Buffer; privateKey: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { spki: publicKey.export({ type: "spki", format: "der" }), privateKey };
}

/** What a certificate says and who signs it. */
export interface CertificateFields {
  /** The DER of the issuer's name (the subject's own when self-signed). */
  issuer: Buffer;
  /** The DER of the subject's name. */
  subject: Buffer;
  notBefore: Date;
  notAfter: Date;
  /** The subject's public key, SubjectPublicKeyInfo DER. */
  spki: Buffer;
  /** The extensions, each made by {@link extension}. */
  extensions: readonly Buffer[];
  /** The issuer's private key (P-256). */
  signingKey: KeyObject;
}

/** Assembles and signs an X.509 v3 certificate (ECDSA with SHA-256, a random serial); returns its DER. */
export function signCertificate(f: CertificateFields): Buffer {
  // A positive 128-bit serial: a clear top bit keeps the DER INTEGER non-negative, a set low bit
  // in the first byte keeps it minimal (no leading zero byte to strip).
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  const signatureAlgorithm = sequence(oid(OID.ecdsaWithSha256)); // no parameters for ECDSA
  const tbs = sequence(
    tlv(0xa0, tlv(TAG.integer, Buffer.from([2]))), // [0] EXPLICIT version: v3
    tlv(TAG.integer, serial),
    signatureAlgorithm,
    f.issuer,
    sequence(time(f.notBefore), time(f.notAfter)),
    f.subject,
    f.spki,
    tlv(0xa3, sequence(...f.extensions)), // [3] EXPLICIT extensions
  );
  const signature = sign("sha256", tbs, { key: f.signingKey, dsaEncoding: "der" });
  return sequence(tbs, signatureAlgorithm, bitString(signature));
}

/** Wraps DER certificate bytes in PEM armour. */
export function certificatePem(der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}
