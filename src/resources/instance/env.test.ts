import { ACCESS_TOKEN_REFERENCE, toEnvOverrides, validateEnv } from "./env";

describe("toEnvOverrides", () => {
  it("maps the three arguments onto env_overrides, sorted by key", () => {
    expect(
      toEnvOverrides({ env: { B: "2", A: "1" }, secret_env: { TOKEN: "s3cret" }, unset_env: ["TZ"] }),
    ).toEqual([
      { key: "A", value: "1", secret: false },
      { key: "B", value: "2", secret: false },
      { key: "TOKEN", value: "s3cret", secret: true },
      { key: "TZ", value: null, secret: false },
    ]);
  });

  it("sends the write-only secrets as secrets, like secret_env", () => {
    expect(
      toEnvOverrides({ secret_env: { A: "1" }, secret_env_wo: { B: "wo-secret" }, unset_env: ["C"] }),
    ).toEqual([
      { key: "A", value: "1", secret: true },
      { key: "B", value: "wo-secret", secret: true },
      { key: "C", value: null, secret: false },
    ]);
  });

  it("accepts nulls", () => {
    expect(toEnvOverrides({ env: null, secret_env: undefined, unset_env: null })).toEqual([]);
  });

  it("leaves out null values and elements: they are not set, never an unset", () => {
    expect(
      toEnvOverrides({
        env: { A: "1", B: null },
        secret_env: { C: null },
        secret_env_wo: { D: null },
        unset_env: [null, "E"],
      }),
    ).toEqual([
      { key: "A", value: "1", secret: false },
      { key: "E", value: null, secret: false },
    ]);
  });
});

describe("validateEnv", () => {
  it("neither counts nor checks null values and elements", () => {
    expect(validateEnv({ env: { A: null, "B=C": null }, secret_env: { A: "1" }, unset_env: [null] })).toEqual(
      [],
    );
    const env: Record<string, string | null> = {};
    for (let i = 0; i < 150; i++) env[`E${i}`] = i < 100 ? "x" : null;
    expect(validateEnv({ env })).toEqual([]);
  });

  it("accepts a valid configuration", () => {
    expect(validateEnv({ env: { A: "1" }, secret_env: { B: "2" }, unset_env: ["C"] })).toEqual([]);
  });

  it("counts the entries of all three together", () => {
    const env: Record<string, string> = {};
    for (let i = 0; i < 60; i++) env[`E${i}`] = "x";
    const secret_env: Record<string, string> = {};
    for (let i = 0; i < 40; i++) secret_env[`S${i}`] = "x";
    expect(validateEnv({ env, secret_env })).toEqual([]);
    const d = validateEnv({ env, secret_env, unset_env: ["ONE_MORE"] });
    expect(d).toHaveLength(1);
    expect(d[0]).toMatchObject({ severity: "error", path: [{ attribute: "env" }] });
    expect(d[0]?.detail).toContain("101");
  });

  it("limits key and value lengths", () => {
    const d = validateEnv({ env: { ["K".repeat(257)]: "v" }, secret_env: { LONG: "v".repeat(4097) } });
    expect(d.map((x) => x.summary)).toEqual([
      "Environment variable name too long",
      "Environment variable value too long",
    ]);
    expect(d[1]?.path).toEqual([{ attribute: "secret_env" }, { key: "LONG" }]);
    // The secret value itself never appears in a diagnostic.
    expect(JSON.stringify(d)).not.toContain("v".repeat(100));
    expect(validateEnv({ env: { ["K".repeat(256)]: "v".repeat(4096) } })).toEqual([]);
  });

  it.each([
    ["env", { env: { "A=B": "1" } }, '"="', [{ attribute: "env" }, { key: "A=B" }]],
    ["secret_env", { secret_env: { "=X": "1" } }, '"="', [{ attribute: "secret_env" }, { key: "=X" }]],
    ["env", { env: { "A\u0000B": "1" } }, "a NUL character", [{ attribute: "env" }, { key: "A\u0000B" }]],
    ["unset_env", { unset_env: ["TZ=UTC"] }, '"="', [{ attribute: "unset_env" }]],
  ])("refuses a name in %s containing = or NUL, stating the rule", (attribute, args, what, path) => {
    const d = validateEnv(args);
    expect(d).toHaveLength(1);
    expect(d[0]).toMatchObject({
      severity: "error",
      summary: `Environment variable name contains ${what}`,
      path,
    });
    expect(d[0]?.detail).toContain(`of ${attribute} contains`);
    expect(d[0]?.detail).toContain(
      'An environment variable name cannot contain "=" (it separates the name from the value) or NUL (it ends the entry)',
    );
  });

  it("shows a NUL in a name escaped, and refuses a NUL in a value without showing the value", () => {
    const [name] = validateEnv({ env: { "A\u0000B": "1" } });
    expect(name?.detail).toContain('The name "A\\u0000B" of env');
    expect(name?.detail).not.toContain("\u0000");
    const d = validateEnv({ secret_env: { PIN: "12\u000034" } });
    expect(d).toMatchObject([
      {
        severity: "error",
        summary: "Environment variable value contains a NUL character",
        path: [{ attribute: "secret_env" }, { key: "PIN" }],
      },
    ]);
    expect(JSON.stringify(d)).not.toContain("12");
  });

  it("rejects a key in two of the maps", () => {
    const d = validateEnv({ env: { A: "1" }, secret_env: { A: "2" }, unset_env: ["A"] });
    expect(d.filter((x) => x.severity === "error")).toHaveLength(2);
    expect(d[0]).toMatchObject({ path: [{ attribute: "secret_env" }, { key: "A" }] });
    expect(d[1]).toMatchObject({ path: [{ attribute: "unset_env" }] });
    expect(d[0]?.detail).toMatch(/both env and secret_env/);
  });

  it("checks secret_env_wo like the others: limits, shared count, one map per key, no value shown", () => {
    const d = validateEnv({
      secret_env: { A: "1" },
      secret_env_wo: { A: "2", LONG: "w".repeat(4097) },
    });
    expect(d.map((x) => [x.summary, x.path])).toEqual([
      ["Environment variable set twice", [{ attribute: "secret_env_wo" }, { key: "A" }]],
      ["Environment variable value too long", [{ attribute: "secret_env_wo" }, { key: "LONG" }]],
    ]);
    expect(JSON.stringify(d)).not.toContain("w".repeat(100));
    const many: Record<string, string> = {};
    for (let i = 0; i < 100; i++) many[`W${i}`] = "x";
    expect(validateEnv({ secret_env_wo: many })).toEqual([]);
    expect(validateEnv({ secret_env_wo: many, env: { ONE: "1" } })[0]?.detail).toContain("101");
  });

  it("warns about variables the platform overlay wins over", () => {
    const d = validateEnv({
      env: { JUPYTER_TOKEN: "x" },
      unset_env: ["GPU_COUNT"],
      secret_env: { SERVICE_ACCESS_TOKEN: "y" },
    });
    expect(d.map((x) => x.severity)).toEqual(["warning", "warning", "warning"]);
    expect(d[0]?.summary).toBe("JUPYTER_TOKEN is set by the platform");
  });

  it("warns about a template variable that carries the access token", () => {
    const d = validateEnv({ env: { APP_KEY: "x" } }, [{ key: "APP_KEY", value: ACCESS_TOKEN_REFERENCE }]);
    expect(d).toHaveLength(1);
    expect(d[0]?.severity).toBe("warning");
  });
});
