import { isCredentialKey, maskUrl, REDACTED, redactText, redactValue } from "./redact";
import { CREDENTIAL_TEXTS, CREDENTIAL_VALUES, CREDENTIALS } from "./testing/credentials";

describe("redactText", () => {
  it.each(CREDENTIAL_TEXTS)("masks %s", (_shape, text, secret) => {
    const out = redactText(text);
    expect(out).not.toContain(secret);
    expect(out).toMatch(/\[REDACTED\]|:\/\/\*\*\*@/);
  });

  it.each([
    [`token ${CREDENTIALS.keySecret} rejected`, `token ${REDACTED} rejected`],
    [`a ${CREDENTIALS.session}, b ${CREDENTIALS.keySecret}`, `a ${REDACTED}, b ${REDACTED}`],
    [`GPS_${"ab".repeat(24)}`, `GPS_${"ab".repeat(24)}`],
    ["gpr_0a0a0a0", "gpr_0a0a0a0"],
    ["gpr_0a0a0a0a", REDACTED],
    ["xgpr_0a0a0a0a0a", `x${REDACTED}`],
    [`/v1/instances/id_${CREDENTIALS.session}`, `/v1/instances/id_${REDACTED}`],
    [`/v1/instances/%20${CREDENTIALS.session}`, `/v1/instances/%20${REDACTED}`],
    ["Authorization: Bearer abc.def", `Authorization: ${REDACTED}`],
    ["sent Bearer xyz123, then", `sent Bearer ${REDACTED}, then`],
    ['{"authorization":"Bearer q"}', `{"authorization":"${REDACTED}"}`],
    ["authorization=Basic dXNlcjpwYXNz done", `authorization=${REDACTED} done`],
    ["authorization = 'x'", `authorization = '${REDACTED}'`],
    [`lab?token=${CREDENTIALS.accessToken}&tab=2`, `lab?token=${REDACTED}&tab=2`],
    [`"access_token": "${CREDENTIALS.accessToken}"`, `"access_token": "${REDACTED}"`],
    ["X-Control-Token:abc;next", `X-Control-Token:${REDACTED};next`],
    ["password = hunter2", `password = ${REDACTED}`],
    ["PASSWD=hunter2", `PASSWD=${REDACTED}`],
    ["PGPASSWORD=hunter2 sslpassword='k3y'", `PGPASSWORD=${REDACTED} sslpassword='${REDACTED}'`],
    ["apikey=k1 api_key=k2", `apikey=${REDACTED} api_key=${REDACTED}`],
    ["private_key: -----BEGIN", `private_key: ${REDACTED}`],
    ["secret:'s3' and secret=\"s4\"", `secret:'${REDACTED}' and secret="${REDACTED}"`],
    ['"secret":truex', `"secret":${REDACTED}`],
    ["Bearer  two-spaces.value", `Bearer ${REDACTED}`],
    ["authorization=Basic  dXNlcjpwYXNz", `authorization=${REDACTED}`],
  ])("%j becomes %j", (input, output) => {
    expect(redactText(input)).toBe(output);
  });

  it.each([
    "nothing here",
    "TOKEN_INVALID: the credential was not accepted",
    "the token was revoked",
    "bearer",
    '{"key":"A","value":"1","secret":false}',
    '{"secret": true, "token": null}',
    "tokens=5 mytoken=6",
    "secret_env_wo_version=2",
  ])("leaves %j readable", (text) => {
    expect(redactText(text)).toBe(text);
  });

  it("masks the caller's own secrets whatever their shape, but not strings shorter than 8", () => {
    expect(
      redactText("opaque-session-value-1234 leaked twice: opaque-session-value-1234", [
        "opaque-session-value-1234",
      ]),
    ).toBe(`${REDACTED} leaked twice: ${REDACTED}`);
    expect(redactText("abcdefgh!", ["abcdefgh"])).toBe(`${REDACTED}!`);
    // Echoed inside JSON, its quotes and backslashes escaped.
    expect(redactText('{"value":"p\\"ss\\\\word-long"}', ['p"ss\\word-long'])).toBe(
      `{"value":"${REDACTED}"}`,
    );
    expect(redactText("abcdefg and the rest", ["abcdefg"])).toBe("abcdefg and the rest");
  });
});

describe("isCredentialKey", () => {
  it.each([
    "token",
    "Token",
    "secret",
    "password",
    "passwd",
    "authorization",
    "Authorization",
    "access_token",
    "jupyter-token",
    "client_secret",
    "X-Control-Token",
    "set-cookie",
    "cookie",
    "api_key",
    "apikey",
    "private_key",
    "secret_env",
    "secret_env_wo",
  ])("%s names a credential", (key) => {
    expect(isCredentialKey(key)).toBe(true);
  });

  it.each([
    "tokens",
    "token_from",
    "uses_secret_env",
    "mytoken",
    "prefix",
    "secretary",
    "key",
    "value",
    "env",
    "org_id",
    "credential",
  ])("%s does not", (key) => {
    expect(isCredentialKey(key)).toBe(false);
  });
});

describe("redactValue", () => {
  it.each(CREDENTIAL_VALUES)("masks %s", (_shape, value, secret) => {
    const out = JSON.stringify(redactValue(value));
    expect(out).not.toContain(secret);
    expect(out).toContain(REDACTED);
  });

  it("keeps the shape and every other value", () => {
    expect(
      redactValue({
        Authorization: "x",
        nested: [{ secret: "s", note: `see ${CREDENTIALS.keySecret}` }],
        n: 1,
        ok: true,
        none: null,
        skip: undefined,
        env_overrides: [
          { key: "A", value: "1", secret: false },
          { key: "B", value: "2", secret: true },
          { key: "C", value: null, secret: true },
        ],
        flags: { secret: true, token: null, password: false },
      }),
    ).toEqual({
      Authorization: REDACTED,
      nested: [{ secret: REDACTED, note: `see ${REDACTED}` }],
      n: 1,
      ok: true,
      none: null,
      skip: undefined,
      env_overrides: [
        { key: "A", value: "1", secret: false },
        { key: "B", value: REDACTED, secret: true },
        { key: "C", value: null, secret: true },
      ],
      flags: { secret: true, token: null, password: false },
    });
  });

  it("masks the caller's secrets in nested strings", () => {
    expect(redactValue({ a: ["x opaque-value-123 y"] }, ["opaque-value-123"])).toEqual({
      a: [`x ${REDACTED} y`],
    });
    expect(redactValue(new Error("opaque-value-123 refused"), ["opaque-value-123"])).toBe(
      `Error: ${REDACTED} refused`,
    );
  });

  it("turns errors, buffers and bigints into text", () => {
    const err = new TypeError(`bad ${CREDENTIALS.session}`);
    expect(redactValue(err)).toBe(`TypeError: bad ${REDACTED}`);
    expect(redactValue({ body: Buffer.from("gps_secret-bytes") })).toEqual({ body: "<16 bytes>" });
    expect(redactValue(12345678901234567890n)).toBe("12345678901234567890");
    expect(redactValue(42)).toBe(42);
    expect(redactValue(undefined)).toBeUndefined();
  });

  it("counts arrays as levels too", () => {
    let v: unknown = "innermost";
    for (let i = 0; i < 10; i++) v = [v];
    expect(JSON.stringify(redactValue(v))).toBe(`${"[".repeat(9)}"[…]"${"]".repeat(9)}`);
  });

  it("copies nine levels of nesting and cuts the tenth", () => {
    const nest = (levels: number): unknown => {
      let v: unknown = { token: "deep-secret-value" };
      for (let i = 1; i < levels; i++) v = { d: v };
      return v;
    };
    expect(JSON.stringify(redactValue(nest(10)))).toBe(`${'{"d":'.repeat(9)}"[…]"${"}".repeat(9)}`);
    expect(JSON.stringify(redactValue(nest(9)))).toBe(
      `${'{"d":'.repeat(8)}{"token":"${REDACTED}"}${"}".repeat(8)}`,
    );
  });
});

describe("maskUrl, the one rule for every address printed", () => {
  it.each([
    ["http://user:s3cr3tPASS@127.0.0.1:18801", "http://***@127.0.0.1:18801"],
    ["https://s3cr3tTOKEN@git.example/x", "https://***@git.example/x"],
    ["http://u:p@ss@host:1/a@b", "http://***@host:1/a@b"],
    ["http://u:pa/ss@host", "http://***@host"],
    ["http://u:pa?ss@host/x", "http://***@host/x"],
    ["user:s3cr3t@proxy:3128", "***@proxy:3128"],
    ["postgres://tf:s3cr3t@db:5432/state?sslmode=require", "postgres://***@db:5432/state?sslmode=require"],
    [
      "postgresql://db/state?user=tf&password=s3cr3t&sslpassword=s3cr3t2",
      `postgresql://db/state?user=tf&password=${REDACTED}&sslpassword=${REDACTED}`,
    ],
    // libpq decodes a parameter's name: %70assword is its password.
    [
      "postgres://u@h/tf?%70assword=s3cr3t&%73slmode=disable&pass%zz=s3cr3t2",
      `postgres://***@h/tf?%70assword=${REDACTED}&%73slmode=disable&pass%zz=${REDACTED}`,
    ],
    ["https://relay.example/lab?token=s3cr3t&tab=2", `https://relay.example/lab?token=${REDACTED}&tab=2`],
    ["https://app.example/cb#access_token=s3cr3t", `https://app.example/cb#access_token=${REDACTED}`],
    ["https://b.example/o?X-Amz-Signature=s3cr3t", `https://b.example/o?X-Amz-Signature=${REDACTED}`],
    ["  http://u:s3cr3t@h  ", "  http://***@h  "],
    ["postgres://u:my s3cr3t%@h/db", "postgres://***@h/db"],
    ["postgres://u:my s3cr/et@h/db", "postgres://***@h/db"],
    ["postgres://u:a\\s3cr3t@h/db", "postgres://***@h/db"],
    ["http://u:a\\b@h/x", "http://***@h/x"],
    ["postgres://my user:s3 cr3t@h:5432/db?sslmode=require", "postgres://***@h:5432/db?sslmode=require"],
  ])("%j is shown as %j", (input, output) => {
    expect(maskUrl(input)).toBe(output);
  });

  it.each([
    "https://api.gpurental.example",
    "http://127.0.0.1:8787/base?page=2",
    "https://host/users/me",
    "proxy.example:3128",
    "not a url at all",
    "",
  ])("leaves %j as it is", (input) => {
    expect(maskUrl(input)).toBe(input);
  });

  it("takes URL objects", () => {
    expect(maskUrl(new URL("https://a:b@h.example/p"))).toBe("https://***@h.example/p");
  });

  it("masks the same way inside free text, as every sink masks it", () => {
    expect(redactText('got "http://user:s3cr3tPASS@127.0.0.1:18801".')).toBe(
      'got "http://***@127.0.0.1:18801".',
    );
    expect(redactText("see https://host/a and ssh://git@host")).toBe("see https://host/a and ssh://***@host");
  });

  it("is whole before a message cuts it to a length", () => {
    const long = `http://u:${"x".repeat(500)}@api.example.com`;
    expect(maskUrl(long).slice(0, 200)).toBe("http://***@api.example.com");
  });
});
