import { X509Certificate } from "node:crypto";
import type { AddressInfo } from "node:net";
import { connect, createServer } from "node:tls";
import { createTestPki, ipBytes, issueCertificate } from "./issue";

describe("test certificates", () => {
  const pki = createTestPki(["api.gpurental.test"]);
  const ca = new X509Certificate(pki.ca.der);
  const server = new X509Certificate(pki.server.der);

  it("makes a self-signed CA that signs the server certificate", () => {
    expect(ca.ca).toBe(true);
    expect(ca.verify(ca.publicKey)).toBe(true);
    expect(server.ca).toBe(false);
    expect(server.checkIssued(ca)).toBe(true);
    expect(server.verify(ca.publicKey)).toBe(true);
  });

  it("names the asked host and the local names and addresses", () => {
    expect(server.checkHost("api.gpurental.test")).toBe("api.gpurental.test");
    expect(server.checkHost("localhost")).toBe("localhost");
    expect(server.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(server.checkIP("::1")).toBe("::1");
    expect(server.checkHost("other.test")).toBeUndefined();
  });

  it("takes any validity period", () => {
    const expired = issueCertificate({
      commonName: "old",
      notBefore: new Date("2020-01-01T00:00:00Z"),
      notAfter: new Date("2020-02-01T00:00:00Z"),
      issuer: pki.ca,
    });
    expect(new X509Certificate(expired.der).validTo).toMatch(/Feb\s+1 00:00:00 2020/);
  });

  it("encodes IP addresses in 4 or 16 bytes", () => {
    expect([...ipBytes("10.1.2.3")]).toEqual([10, 1, 2, 3]);
    expect(ipBytes("::1").toString("hex")).toBe(`${"0".repeat(30)}01`);
    expect(ipBytes("fe80::1:2").toString("hex")).toBe("fe800000000000000000000000010002");
    expect(() => ipBytes("::ffff:1.2.3.4")).toThrow(/not an IPv4 or plain IPv6/);
  });

  it("is accepted by a TLS client that trusts the CA", async () => {
    const srv = createServer({ cert: pki.server.certPem, key: pki.server.keyPem }, (s) => s.end("hi"));
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const port = (srv.address() as AddressInfo).port;
    try {
      const text = await new Promise<string>((resolve, reject) => {
        const c = connect({ port, host: "127.0.0.1", servername: "api.gpurental.test", ca: pki.ca.certPem });
        let out = "";
        c.on("data", (d) => (out += d));
        c.on("end", () => resolve(out));
        c.on("error", reject);
      });
      expect(text).toBe("hi");
    } finally {
      srv.close();
    }
  });
});
