// The few DER encoders an X.509 certificate needs: tag-length-value elements, object identifiers,
// names, times and extensions. Shared by the plugin's AutoMTLS certificate (src/plugin/cert.ts) and
// the certificates the fake backend serves HTTPS with (src/tls/issue.ts); their tests check the
// output with Node's X.509 parser and with asn1js as an independent decoder.

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
