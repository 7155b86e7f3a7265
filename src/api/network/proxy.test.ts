import { displayProxy, NoProxy, parseProxyUrl, proxyFor, proxySettingsFromEnv } from "./proxy";

// The cases follow Go's httpproxy tests: what NO_PROXY means must not depend on which program reads it.
describe("NO_PROXY, as Go matches it", () => {
  const cases: [noProxy: string, url: string, proxied: boolean][] = [
    ["", "https://api.example.com", true],
    ["", "http://localhost:8080", false],
    ["", "https://127.0.0.1:8443", false],
    ["", "https://127.9.9.9", false],
    ["", "https://[::1]:8443", false],
    ["*", "https://api.example.com", false],
    ["*", "https://10.0.0.1", false],
    ["example.com", "https://example.com", false],
    ["example.com", "https://api.example.com", false],
    ["example.com", "https://api.example.com.evil.test", true],
    ["example.com", "https://badexample.com", true],
    [".example.com", "https://example.com", true],
    [".example.com", "https://api.example.com", false],
    ["*.example.com", "https://example.com", true],
    ["*.example.com", "https://a.b.example.com", false],
    ["example.com:443", "https://api.example.com", false],
    ["example.com:8443", "https://api.example.com", true],
    ["example.com:80", "http://api.example.com", false],
    ["EXAMPLE.com", "https://Api.Example.COM", false],
    [" foo.test , example.com ", "https://api.example.com", false],
    ["10.0.0.0/8", "https://10.20.30.40", false],
    ["10.0.0.0/8", "https://11.0.0.1", true],
    ["10.0.0.0/8", "https://ten.example", true],
    ["fd00::/8", "https://[fd12::1]", false],
    ["192.168.1.1", "https://192.168.1.1:9000", false],
    ["192.168.1.1:9000", "https://192.168.1.1:9000", false],
    ["192.168.1.1:9000", "https://192.168.1.1:9001", true],
    ["[2001:db8::1]:443", "https://[2001:db8::1]", false],
    ["2001:db8::1", "https://[2001:db8:0::1]:8443", false],
    [":443", "https://api.example.com", true],
    ["bücher.example", "https://xn--bcher-kva.example", false],
  ];
  it.each(cases)("NO_PROXY=%j, %s proxied: %s", (noProxy, url, proxied) => {
    expect(new NoProxy(noProxy).useProxy(new URL(url))).toBe(proxied);
  });
});

describe("choosing the proxy", () => {
  it("reads the upper-case variable first and the lower-case one otherwise", () => {
    expect(proxySettingsFromEnv({ HTTPS_PROXY: "a:1", https_proxy: "b:1" }).httpsProxy).toEqual({
      value: "a:1",
      source: "HTTPS_PROXY",
    });
    expect(proxySettingsFromEnv({ HTTPS_PROXY: "", https_proxy: "b:1" }).httpsProxy?.source).toBe(
      "https_proxy",
    );
    expect(proxySettingsFromEnv({ no_proxy: "x" }).noProxy?.source).toBe("no_proxy");
  });

  it("uses HTTPS_PROXY for https and HTTP_PROXY for http, never one for the other", () => {
    const env = proxySettingsFromEnv({ HTTPS_PROXY: "https-proxy:3128" });
    expect(proxyFor(new URL("https://api.example.com"), env)?.url.href).toBe("http://https-proxy:3128/");
    expect(proxyFor(new URL("http://api.example.com"), env)).toBeUndefined();
    const httpOnly = proxySettingsFromEnv({ HTTP_PROXY: "http://p:1" });
    expect(proxyFor(new URL("https://api.example.com"), httpOnly)).toBeUndefined();
    expect(proxyFor(new URL("http://api.example.com"), httpOnly)?.source).toBe("HTTP_PROXY");
  });

  it("skips hosts NO_PROXY names and loopback whatever NO_PROXY says", () => {
    const s = proxySettingsFromEnv({ HTTPS_PROXY: "p:1", NO_PROXY: "internal.example" });
    expect(proxyFor(new URL("https://api.internal.example"), s)).toBeUndefined();
    expect(proxyFor(new URL("https://localhost:1"), s)).toBeUndefined();
    expect(proxyFor(new URL("https://api.example.com"), s)?.url.host).toBe("p:1");
  });

  it("refuses an address it cannot use, naming the setting and hiding credentials", () => {
    expect(() => parseProxyUrl({ value: "socks5://p:1080", source: "HTTPS_PROXY" })).toThrow(
      /HTTPS_PROXY names a SOCKS proxy/,
    );
    let msg = "";
    try {
      parseProxyUrl({ value: "http://user:s3cret@p:1/path", source: "https_proxy" });
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg).toMatch(/^https_proxy must be a proxy address/);
    expect(msg).not.toContain("s3cret");
    // Credentials that would not decode when sent: refused here, masked.
    for (const value of ["http://u:%E0%A4%A@proxy.example:3128", "http://%zz@proxy.example:3128"]) {
      expect(() => parseProxyUrl({ value, source: "HTTPS_PROXY" })).toThrow(
        /^HTTPS_PROXY: the proxy's (user name|password) holds a percent escape that does not decode .*"http:\/\/\*\*\*@proxy\.example:3128"$/,
      );
    }
    expect(
      parseProxyUrl({ value: "http://u:p%40ss@proxy.example:3128", source: "HTTPS_PROXY" }).password,
    ).toBe("p%40ss");
  });

  it("keeps credentials of a proxy URL out of its display form", () => {
    expect(displayProxy(new URL("http://user:pa%40ss@proxy:3128"))).toBe("http://***@proxy:3128");
    expect(displayProxy("user:pw@proxy:3128")).toBe("***@proxy:3128");
    expect(displayProxy(new URL("http://proxy:3128"))).toBe("http://proxy:3128");
  });
});
