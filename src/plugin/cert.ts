import * as x509 from "../tls/der";

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

/** Generates a self-signed ECDSA P-256 certificate that go-plugin's AutoMTLS client accepts. */
export function generateServerCertificate(options: CertificateOptions = {}): ServerCertificate {
  const now = options.now ?? new Date();
  const notBefore = new Date(now.getTime() - 30_000); // slack for clocks that disagree, as go-plugin
  const notAfter = new Date(now.getTime() + (options.validForMs ?? x509.TEN_YEARS_MS));
  const { spki, privateKey } = x509.p256KeyPair();
  const name = x509.sequence(
    x509.rdn(x509.OID.organization, "gpurental"),
    x509.rdn(x509.OID.commonName, "localhost"),
  );
  const cert = x509.signCertificate({
    issuer: name,
    subject: name,
    notBefore,
    notAfter,
    spki,
    extensions: [
      // digitalSignature(0) keyEncipherment(2) keyAgreement(4) keyCertSign(5): 101011, 2 unused bits
      x509.extension(x509.OID.keyUsage, true, x509.tlv(x509.TAG.bitString, Buffer.from([2, 0xac]))),
      x509.extension(
        x509.OID.extKeyUsage,
        false,
        x509.sequence(x509.oid(x509.OID.serverAuth), x509.oid(x509.OID.clientAuth)),
      ),
      x509.extension(
        x509.OID.basicConstraints,
        true,
        x509.sequence(x509.tlv(x509.TAG.boolean, Buffer.from([0xff]))),
      ),
      // GeneralName dNSName is [2] IMPLICIT IA5String.
      x509.extension(
        x509.OID.subjectAltName,
        false,
        x509.sequence(x509.tlv(0x82, Buffer.from("localhost", "ascii"))),
      ),
    ],
    signingKey: privateKey,
  });
  const keyPem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  return { certPem: derToPem(cert), keyPem, der: cert };
}

/** The certificate field of the handshake line: standard base64 of the DER with the padding removed. */
export function handshakeCertificate(der: Buffer): string {
  // go-plugin decodes with RawStdEncoding: the '+/' alphabet without '=' padding (not base64url).
  return der.toString("base64").replace(/=+$/, "");
}

/** Wraps DER certificate bytes in PEM armour. */
export const derToPem = x509.certificatePem;
