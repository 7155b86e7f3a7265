import { generateKeyPairSync, randomBytes, sign } from "node:crypto";
import * as asn1 from "asn1js";

// go-plugin's client makes the server certificate its only trusted root and then checks the host
// name "localhost" against the SAN (Go never falls back to the CN). So the certificate must be a
// self-signed CA carrying SAN DNS:localhost and, since it has an EKU extension, serverAuth in it.
//
// The key pair and the signature come from node:crypto (P-256: well under a millisecond, where
// go-plugin's P-521 is slower and buys nothing for a loopback connection). The DER structure is
// built with asn1js, the encoder under PKI.js: it loads in about 5 ms bundled, where the
// schema-driven @peculiar/asn1-x509 took about 30 ms to load and 20 ms to first use, and
// @peculiar/x509 also needs reflect-metadata. Start-up time matters: Terraform launches the
// provider 2-5 times per command.

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

  const signatureAlgorithm = () => new asn1.Sequence({ value: [oid(OID.ecdsaWithSha256)] });
  const tbs = new asn1.Sequence({
    value: [
      explicit(0, new asn1.Integer({ value: 2 })), // v3
      new asn1.Integer({ valueHex: bytes(serial) }),
      signatureAlgorithm(),
      distinguishedName(),
      new asn1.Sequence({ value: [time(notBefore), time(notAfter)] }),
      distinguishedName(),
      fromDer(spki),
      explicit(
        3,
        new asn1.Sequence({
          value: [
            // digitalSignature(0) keyEncipherment(2) keyAgreement(4) keyCertSign(5): 1010 11xx
            extension(
              OID.keyUsage,
              true,
              new asn1.BitString({ valueHex: new Uint8Array([0xac]), unusedBits: 2 }),
            ),
            extension(
              OID.extKeyUsage,
              false,
              new asn1.Sequence({ value: [oid(OID.serverAuth), oid(OID.clientAuth)] }),
            ),
            extension(
              OID.basicConstraints,
              true,
              new asn1.Sequence({ value: [new asn1.Boolean({ value: true })] }),
            ),
            extension(
              OID.subjectAltName,
              false,
              // GeneralName dNSName is [2] IMPLICIT IA5String.
              new asn1.Sequence({
                value: [
                  new asn1.Primitive({
                    idBlock: { tagClass: 3, tagNumber: 2 },
                    valueHex: bytes(Buffer.from("localhost", "ascii")),
                  }),
                ],
              }),
            ),
          ],
        }),
      ),
    ],
  });
  const tbsDer = Buffer.from(tbs.toBER(false));
  const signature = sign("sha256", tbsDer, { key: privateKey, dsaEncoding: "der" });
  const cert = new asn1.Sequence({
    value: [fromDer(tbsDer), signatureAlgorithm(), new asn1.BitString({ valueHex: bytes(signature) })],
  });
  const der = Buffer.from(cert.toBER(false));
  const keyPem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  return { certPem: derToPem(der), keyPem, der };
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

function oid(value: string): asn1.ObjectIdentifier {
  return new asn1.ObjectIdentifier({ value });
}

function bytes(buf: Buffer): Uint8Array {
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

function explicit(tagNumber: number, inner: asn1.BaseBlock): asn1.Constructed {
  return new asn1.Constructed({ idBlock: { tagClass: 3, tagNumber }, value: [inner] });
}

function fromDer(der: Buffer): asn1.BaseBlock {
  const parsed = asn1.fromBER(bytes(der));
  if (parsed.offset === -1) throw new Error(`cannot parse DER: ${parsed.result.error}`);
  return parsed.result;
}

function distinguishedName(): asn1.Sequence {
  const rdn = (type: string, value: string) =>
    new asn1.Set({ value: [new asn1.Sequence({ value: [oid(type), new asn1.Utf8String({ value })] })] });
  return new asn1.Sequence({ value: [rdn(OID.organization, "gpurental"), rdn(OID.commonName, "localhost")] });
}

function time(date: Date): asn1.BaseBlock {
  // RFC 5280: UTCTime up to 2049, GeneralizedTime from 2050 on.
  return date.getUTCFullYear() < 2050
    ? new asn1.UTCTime({ valueDate: date })
    : new asn1.GeneralizedTime({ valueDate: date });
}

function extension(extnID: string, critical: boolean, value: asn1.BaseBlock): asn1.Sequence {
  return new asn1.Sequence({
    value: [
      oid(extnID),
      ...(critical ? [new asn1.Boolean({ value: true })] : []),
      new asn1.OctetString({ valueHex: value.toBER(false) }),
    ],
  });
}
