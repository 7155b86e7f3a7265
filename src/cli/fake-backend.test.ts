import { X509Certificate } from "node:crypto";
import { runCommandInProcess } from "../testing/command-run";
import { createTestPki } from "../tls/issue";
import { parseTlsName } from "./fake-backend";

// Flags of `gpurental fake-backend` refused before anything listens, as every bad flag of the
// command is: commander's "argument ... is invalid" and the flag's own words, naming the flag, the
// value and what it takes, with exit code 1. Every command line ends with a later refusal
// (--credentials without --seed demo): a value taken meets that one, and nothing here starts a
// server.

const run = runCommandInProcess;

/** Flags the command refuses once its flags are parsed: whatever a test gives, nothing listens. */
const NEVER_STARTS = ["--credentials", "c.json"];

describe("--transitions", () => {
  test.each([
    ["400 digits", "9".repeat(400)],
    ["2147483648", "2147483648"],
    ["20 digits", "99999999999999999999"],
  ])("%s of milliseconds is refused", async (_, value) => {
    const { printed, code } = await run(["fake-backend", "--transitions", value, ...NEVER_STARTS]);
    expect(code).toBe(1);
    expect(printed).toContain(
      `error: option '--transitions <mode>' argument '${value}' is invalid. --transitions must be at most 2147483647 milliseconds (about 24.8 days), got '${value}'.`,
    );
    expect(printed).not.toContain("listening");
  });

  test.each(["2147483647", "0", "1500"])("%s milliseconds is taken", async (value) => {
    const { printed, code } = await run(["fake-backend", "--transitions", value, ...NEVER_STARTS]);
    expect(code).toBe(1);
    expect(printed).toMatch(/^error: --credentials needs --seed demo\n/);
  });
});

describe("--tls-name", () => {
  const longLabel = `${"a".repeat(64)}.example`;
  const longName = `${"a.".repeat(126)}example`;

  const refused = [
    "a b.example",
    "*.*",
    "*.example",
    "a.*.example",
    "**.example",
    "-a.example",
    "a-.example",
    "a..example",
    "example.com..",
    "1.2.3",
    "0x7f.0.0.1",
    "256.1.1.1",
    "[::1]",
    "ü .example",
    "https://a.example",
  ];

  test.each([
    ...refused.map((v) => [JSON.stringify(v), v]),
    ["a label of 64 characters", longLabel],
    ["a name of 259 characters", longName],
  ])("%s is refused naming the flag, the value and the rule", async (_, value) => {
    const { printed, code } = await run(["fake-backend", "--tls-name", value, ...NEVER_STARTS]);
    expect(code).toBe(1);
    expect(printed).toContain(
      `error: option '--tls-name <name>' argument '${value}' is invalid. --tls-name must be a DNS name (dot-separated labels of 1 to 63 letters, digits, underscores and hyphens, no hyphen first or last, 253 characters at most, one final dot allowed; an international name is taken in its xn-- form), optionally after one leading "*." with at least two labels after it, or an IP address, got '${value}'.`,
    );
    expect(printed).not.toContain("listening");
  });

  test("an IPv6 address with a zone is refused: a certificate holds none", async () => {
    const { printed, code } = await run(["fake-backend", "--tls-name", "fe80::1%eth0", ...NEVER_STARTS]);
    expect(code).toBe(1);
    expect(printed).toContain(
      "--tls-name must be an IP address without a zone (no %), got 'fe80::1%eth0': a certificate holds none.",
    );
  });

  test.each([
    ["api.gpurental.test", "api.gpurental.test"],
    ["API.Gpurental.TEST", "api.gpurental.test"],
    ["ü.example", "xn--tda.example"],
    ["bücher.example", "xn--bcher-kva.example"],
    ["*.ü.example", "*.xn--tda.example"],
    ["*.a.example", "*.a.example"],
    ["myhost", "myhost"],
    // A compose service name, and a fully qualified name's final dot.
    ["fake_backend", "fake_backend"],
    ["api.gpurental.test.", "api.gpurental.test"],
    ["10.0.0.1", "10.0.0.1"],
    ["::ffff:1.2.3.4", "1.2.3.4"],
    ["::FFFF:0102:0304", "1.2.3.4"],
    ["::1.2.3.4", "::102:304"],
    ["FE80:0:0::1", "fe80::1"],
  ])("%j is taken as %j", async (value, name) => {
    expect(parseTlsName(value)).toBe(name);
    const { printed, code } = await run(["fake-backend", "--tls-name", value, ...NEVER_STARTS]);
    expect(code).toBe(1);
    expect(printed).toMatch(/^error: --credentials needs --seed demo\n/);
  });

  test("the names taken make a certificate that a client checks them against", () => {
    const names = ["ü.example", "*.bücher.example", "::ffff:1.2.3.4", "::1.2.3.4"].map(parseTlsName);
    const cert = new X509Certificate(createTestPki(names).server.der);
    expect(cert.checkHost("xn--tda.example")).toBe("xn--tda.example");
    expect(cert.checkHost("shop.xn--bcher-kva.example")).toBe("*.xn--bcher-kva.example");
    expect(cert.checkIP("1.2.3.4")).toBe("1.2.3.4");
    expect(cert.checkIP("::1.2.3.4")).toBeDefined();
  });
});
