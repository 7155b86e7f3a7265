import { generateServerCertificate } from "./cert";
import {
  checkMagicCookie,
  clientCertificate,
  HandshakeError,
  handshakeLine,
  MAGIC_COOKIE_KEY,
  MAGIC_COOKIE_VALUE,
  negotiateProtocol,
  reattachConfig,
} from "./handshake";

describe("magic cookie", () => {
  it("accepts Terraform's cookie", () => {
    expect(() => checkMagicCookie({ [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE })).not.toThrow();
  });

  it.each([
    ["missing", {}],
    ["wrong", { [MAGIC_COOKIE_KEY]: "nope" }],
  ])("refuses a %s cookie with a message for humans", (_name, env) => {
    expect(() => checkMagicCookie(env)).toThrow(HandshakeError);
    expect(() => checkMagicCookie(env)).toThrow(/Terraform provider plugin/);
  });
});

describe("protocol negotiation", () => {
  it.each(["6", "6,5", "5,6", " 5 , 6 "])("picks 6 from %j", (offered) => {
    expect(negotiateProtocol({ PLUGIN_PROTOCOL_VERSIONS: offered })).toBe(6);
  });

  it.each([
    ["5", /offered "5"/],
    ["", /offered none/],
    [undefined, /offered none/],
  ])("refuses %j clearly", (offered, message) => {
    expect(() => negotiateProtocol({ PLUGIN_PROTOCOL_VERSIONS: offered })).toThrow(HandshakeError);
    expect(() => negotiateProtocol({ PLUGIN_PROTOCOL_VERSIONS: offered })).toThrow(message);
  });
});

describe("the host's certificate", () => {
  it("is the PEM the host passed, or undefined for plaintext", () => {
    const { certPem } = generateServerCertificate();
    expect(clientCertificate({ PLUGIN_CLIENT_CERT: certPem })).toBe(certPem);
    expect(clientCertificate({})).toBeUndefined();
    expect(clientCertificate({ PLUGIN_CLIENT_CERT: "" })).toBeUndefined();
  });

  it.each(["not a certificate", "-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n"])(
    "refuses %j, naming the variable",
    (pem) => {
      expect(() => clientCertificate({ PLUGIN_CLIENT_CERT: pem })).toThrow(HandshakeError);
      expect(() => clientCertificate({ PLUGIN_CLIENT_CERT: pem })).toThrow(
        /^PLUGIN_CLIENT_CERT must be the host's certificate in PEM, as Terraform sets it; it cannot be read \(/,
      );
    },
  );
});

describe("handshake line", () => {
  it("has go-plugin's six fields and ends in a newline", () => {
    expect(
      handshakeLine({ protocolVersion: 6, network: "tcp", address: "127.0.0.1:1234", serverCert: "QUJD" }),
    ).toBe("1|6|tcp|127.0.0.1:1234|grpc|QUJD\n");
  });

  it("leaves the certificate field empty for plaintext", () => {
    expect(
      handshakeLine({ protocolVersion: 6, network: "unix", address: "/tmp/x.sock", serverCert: "" }),
    ).toBe("1|6|unix|/tmp/x.sock|grpc|\n");
  });
});

describe("reattach config", () => {
  it("is keyed by the provider address and sets Test (required for protocol 6) and the real pid", () => {
    const parsed = JSON.parse(reattachConfig({ pid: 4242, network: "tcp", address: "127.0.0.1:5555" }));
    expect(parsed).toEqual({
      "registry.terraform.io/gpurental/gpurental": {
        Protocol: "grpc",
        ProtocolVersion: 6,
        Pid: 4242,
        Test: true,
        Addr: { Network: "tcp", String: "127.0.0.1:5555" },
      },
    });
  });
});
