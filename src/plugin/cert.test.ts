import { createPrivateKey, X509Certificate } from "node:crypto";
import * as asn1 from "asn1js";
import { derToPem, generateServerCertificate, handshakeCertificate } from "./cert";

describe("server certificate", () => {
  const now = new Date("2026-06-01T12:00:00.000Z");
  const cert = generateServerCertificate({ now });
  const x509 = new X509Certificate(cert.der);

  it("names localhost in the SAN, which Go checks instead of the CN", () => {
    expect(x509.subjectAltName).toBe("DNS:localhost");
    expect(x509.checkHost("localhost")).toBe("localhost");
  });

  it("is a self-signed CA, since the client makes it its only root", () => {
    expect(x509.ca).toBe(true);
    expect(x509.issuer).toBe(x509.subject);
    expect(x509.verify(x509.publicKey)).toBe(true);
  });

  it("allows server and client authentication", () => {
    expect(x509.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"]);
  });

  it("uses an ECDSA key", () => {
    expect(x509.publicKey.asymmetricKeyType).toBe("ec");
  });

  it("is valid from 30 seconds before now for years", () => {
    expect(new Date(x509.validFrom).getTime()).toBe(now.getTime() - 30_000);
    expect(new Date(x509.validTo).getTime()).toBeGreaterThan(now.getTime() + 5 * 365 * 24 * 3600 * 1000);
  });

  it("comes with a matching PEM and private key", () => {
    expect(cert.certPem).toBe(derToPem(cert.der));
    expect(new X509Certificate(cert.certPem).checkPrivateKey(createPrivateKey(cert.keyPem))).toBe(true);
  });

  it("is fresh every time", () => {
    const other = new X509Certificate(generateServerCertificate().der);
    expect(other.serialNumber).not.toBe(x509.serialNumber);
    expect(other.publicKey.export({ format: "der", type: "spki" })).not.toEqual(
      x509.publicKey.export({ format: "der", type: "spki" }),
    );
  });
});

describe("certificate encoding", () => {
  // asn1js decodes independently of the encoder under test; re-encoding what it read gives the
  // shortest length forms, so equal bytes mean the certificate is DER, not just BER.
  function decode(der: Buffer): asn1.Sequence {
    const parsed = asn1.fromBER(new Uint8Array(der));
    expect(parsed.offset).toBe(der.length);
    expect(Buffer.from(parsed.result.toBER(false))).toEqual(der);
    return parsed.result as asn1.Sequence;
  }

  it("is DER with the X.509 v3 layout", () => {
    const { der } = generateServerCertificate();
    const [tbs, algorithm, signature] = decode(der).valueBlock.value as [
      asn1.Sequence,
      asn1.Sequence,
      asn1.BitString,
    ];
    const fields = tbs.valueBlock.value;
    expect(fields).toHaveLength(8); // version, serial, signature, issuer, validity, subject, key, extensions
    const version = (fields[0] as asn1.Constructed).valueBlock.value[0] as asn1.Integer;
    expect(version.valueBlock.valueDec).toBe(2);
    const serial = fields[1] as asn1.Integer;
    expect(serial.valueBlock.valueHexView.length).toBe(16);
    expect(serial.valueBlock.valueHexView[0]! & 0x80).toBe(0); // positive
    const oidOf = (seq: asn1.Sequence) =>
      (seq.valueBlock.value[0] as asn1.ObjectIdentifier).valueBlock.toString();
    expect(oidOf(algorithm)).toBe("1.2.840.10045.4.3.2");
    expect(oidOf(fields[2] as asn1.Sequence)).toBe("1.2.840.10045.4.3.2");
    expect(signature.valueBlock.unusedBits).toBe(0);
  });

  it("switches to GeneralizedTime from 2050, as RFC 5280 requires", () => {
    const now = new Date("2045-03-04T05:06:07.890Z");
    const later = generateServerCertificate({ now, validForMs: 10 * 365 * 24 * 3600 * 1000 });
    const tbs = (decode(later.der).valueBlock.value[0] as asn1.Sequence).valueBlock.value;
    const [from, to] = (tbs[4] as asn1.Sequence).valueBlock.value;
    expect(from).toBeInstanceOf(asn1.UTCTime);
    expect(to).toBeInstanceOf(asn1.GeneralizedTime);
    const x509 = new X509Certificate(later.der);
    expect(new Date(x509.validFrom).toISOString()).toBe("2045-03-04T05:05:37.000Z");
    expect(new Date(x509.validTo).getUTCFullYear()).toBe(2055);
  });
});

describe("handshake certificate field", () => {
  it("is unpadded standard base64 of the DER, for every DER length modulo 3", () => {
    const remainders = new Set<number>();
    for (let i = 0; i < 30 && remainders.size < 3; i++) {
      const { der } = generateServerCertificate();
      remainders.add(der.length % 3);
      const field = handshakeCertificate(der);
      expect(field).toMatch(/^[A-Za-z0-9+/]+$/); // standard alphabet, no '=', not base64url
      expect(Buffer.from(field, "base64")).toEqual(der);
      expect(new X509Certificate(Buffer.from(field, "base64")).subjectAltName).toBe("DNS:localhost");
    }
    expect(remainders.size).toBeGreaterThan(1);
  });
});
