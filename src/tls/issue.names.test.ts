import { X509Certificate } from "node:crypto";
import { createTestPki, issueCertificate } from "./issue";

// A dNSName is an IA5String: ASCII. A name that is not would be written with only the low byte of
// each other character, a certificate no client matches; it is refused instead, naming it.

describe("DNS names of a certificate", () => {
  test.each(["ü.example", "bücher.example", "a b.example", "tab\t.example", ""])(
    "%j is refused, not truncated",
    (name) => {
      expect(() => issueCertificate({ commonName: "x", dnsNames: [name] })).toThrow(
        `not a DNS name a certificate can hold: ${JSON.stringify(name)}`,
      );
      expect(() => createTestPki([name])).toThrow(/printable ASCII without spaces .*xn-- form/);
    },
  );

  test("an international name in its xn-- form is written as given", () => {
    const { server } = createTestPki(["xn--tda.example", "*.xn--bcher-kva.example"]);
    const cert = new X509Certificate(server.der);
    expect(cert.subjectAltName).toContain("DNS:xn--tda.example");
    expect(cert.checkHost("xn--tda.example")).toBe("xn--tda.example");
    expect(cert.checkHost("a.xn--bcher-kva.example")).toBe("*.xn--bcher-kva.example");
  });
});
