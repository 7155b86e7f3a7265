import { CREDENTIAL_TEXTS, CREDENTIAL_VALUES } from "./api/testing/credentials";
import { firstUnsafeCharacter } from "./display";
import { hclogTimestamp, Logger, levelFromEnv, logger, REDACTED, redactText } from "./log";

/** Either mark of a masked credential: `[REDACTED]`, or `***@` for a URL's user and password. */
const MASKED = /\[REDACTED\]|:\/\/\*\*\*@/;

function capture(level: "trace" | "warn" = "trace") {
  const lines: string[] = [];
  const log = new Logger("gpurental", level, (l) => lines.push(l));
  return { log, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe("hclog lines", () => {
  it("writes one JSON object per line with hclog's keys", () => {
    const { log, lines, records } = capture();
    log.child("plugin", { tf_rpc: "PlanResourceChange" }).info("planned", { resource: "gpurental_instance" });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.endsWith("\n")).toBe(true);
    expect(records()[0]).toMatchObject({
      "@level": "info",
      "@message": "planned",
      "@module": "gpurental.plugin",
      tf_rpc: "PlanResourceChange",
      resource: "gpurental_instance",
    });
  });

  it("writes no character a terminal obeys, in the message or any field, once decoded", () => {
    // Terraform decodes the JSON and writes the strings as they are.
    const hostile = "id\u001b]0;owned\u0007 \u009b2J \u202edesrever\u2028next\rline";
    const { log, records } = capture();
    log.warn(`instance ${hostile} created`, {
      id: hostile,
      nested: { error: hostile, list: [hostile], [hostile]: "a key from outside" },
      stack: "Error: x\n    at f (file.js:1:1)",
    });
    const record = records()[0]!;
    const strings: string[] = [];
    JSON.stringify(record, (_k, v: unknown) => {
      if (typeof v === "string") strings.push(v);
      return v;
    });
    for (const text of strings) expect(firstUnsafeCharacter(text.replace(/[\n\t]/g, " "))).toBeUndefined();
    for (const key of Object.keys(record.nested as object)) expect(firstUnsafeCharacter(key)).toBeUndefined();
    expect(record["@message"]).toBe(
      "instance id\\x1b]0;owned\\x07 \\x9b2J \\u202edesrever\\u2028next\\x0dline created",
    );
    expect(record.nested).toEqual({
      error: "id\\x1b]0;owned\\x07 \\x9b2J \\u202edesrever\\u2028next\\x0dline",
      list: ["id\\x1b]0;owned\\x07 \\x9b2J \\u202edesrever\\u2028next\\x0dline"],
      "id\\x1b]0;owned\\x07 \\x9b2J \\u202edesrever\\u2028next\\x0dline": "a key from outside",
    });
    // A stack keeps its lines, which hclog shows as a block.
    expect(record.stack).toBe("Error: x\n    at f (file.js:1:1)");
  });

  it("stamps exactly six fractional digits, the layout Go parses", () => {
    expect(hclogTimestamp(new Date("2026-01-02T03:04:05.678Z"))).toBe("2026-01-02T03:04:05.678000Z");
    const { log, records } = capture();
    log.warn("x");
    expect(records()[0]!["@timestamp"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it.each(["trace", "debug", "info", "warn", "error"] as const)("%s() writes a record at %s", (level) => {
    const { log, records } = capture();
    log[level]("m");
    expect(records()).toEqual([expect.objectContaining({ "@level": level, "@message": "m" })]);
  });

  it("changes level with setLevel; children made afterwards take the new level", () => {
    const { log, lines } = capture("warn");
    log.setLevel("debug");
    log.debug("shown");
    log.child("sub").debug("shown too");
    log.setLevel("off");
    log.error("hidden");
    expect(lines).toHaveLength(2);
  });

  it("writes to stderr unless told otherwise, never to stdout", () => {
    const err = jest.spyOn(process.stderr, "write").mockImplementation(() => true);
    const out = jest.spyOn(process.stdout, "write").mockImplementation(() => true);
    try {
      new Logger("gpurental", "info").info("to stderr");
      expect(err).toHaveBeenCalledWith(expect.stringMatching(/"@message":"to stderr"/));
      expect(out).not.toHaveBeenCalled();
    } finally {
      err.mockRestore();
      out.mockRestore();
    }
  });

  it("the provider's root logger is the gpurental module", () => {
    expect(logger.module).toBe("gpurental");
  });

  it("writes a record without its fields when they cannot be serialized or read", () => {
    const { log, records } = capture();
    const throwing = () => {
      throw new Error("no");
    };
    log.info("one", { bad: { toJSON: throwing } });
    log.info("two", { bad: Object.defineProperty({}, "x", { enumerable: true, get: throwing }) });
    expect(records()).toEqual([
      expect.objectContaining({ "@message": "one", fields: "[unserializable]" }),
      expect.objectContaining({ "@message": "two", fields: "[unserializable]" }),
    ]);
  });

  it("drops records below the level", () => {
    const { log, lines } = capture("warn");
    log.debug("hidden");
    log.info("hidden");
    log.warn("shown");
    log.error("shown");
    expect(lines).toHaveLength(2);
  });
});

describe("level from the environment", () => {
  it.each([
    [{}, "warn"],
    [{ TF_LOG: "debug" }, "debug"],
    [{ TF_LOG: "DEBUG", TF_LOG_PROVIDER: "error" }, "error"],
    [{ TF_LOG: "json" }, "trace"],
    [{ TF_LOG: "off" }, "off"],
    [{ TF_LOG: "whatever" }, "trace"],
    [{ TF_LOG: " Debug\n" }, "debug"],
    [{ TF_LOG: "OFF" }, "off"],
    [{ TF_LOG_PROVIDER: "INFO", TF_LOG: "trace" }, "info"],
    [{ TF_LOG: "constructor" }, "trace"],
  ])("%j gives %s", (env, level) => {
    expect(levelFromEnv(env)).toBe(level);
  });
});

describe("redaction", () => {
  const secret = "gpr_0123456789abcdef0123456789abcdef0123456789abcdef";

  it("masks credential-named fields at any depth", () => {
    const { log, lines } = capture();
    log.info("configure", {
      token: "plain-token-value",
      secret: "plain-secret-value",
      config: {
        base_url: "http://x",
        access_token: "abc",
        nested: { password: "pw", Authorization: "Bearer q" },
      },
    });
    expect(lines[0]).not.toMatch(/plain-token-value|plain-secret-value|"abc"|"pw"|Bearer q/);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      token: REDACTED,
      secret: REDACTED,
      config: {
        base_url: "http://x",
        access_token: REDACTED,
        nested: { password: REDACTED, Authorization: REDACTED },
      },
    });
  });

  it("masks fields a child logger carries on every record", () => {
    const { log, lines } = capture();
    log.child("api", { secret: "carried-secret-value", endpoint: "GET /v1/me" }).warn("x");
    expect(JSON.parse(lines[0]!)).toMatchObject({ secret: REDACTED, endpoint: "GET /v1/me" });
  });

  it("masks gpr_/gps_ secrets and bearer tokens inside text, messages included", () => {
    const { log, lines } = capture();
    log.error(`request failed with ${secret}`, {
      error: new Error(`401 for gps_${"ab".repeat(24)}`),
      header: "Authorization: Bearer zzz.yyy",
    });
    expect(lines[0]).not.toContain(secret);
    expect(lines[0]).not.toContain("gps_abab");
    expect(lines[0]).not.toContain("zzz.yyy");
    expect(redactText(`token=${secret}&x=1`)).toBe(`token=${REDACTED}&x=1`);
  });

  it.each(CREDENTIAL_TEXTS)("masks %s in the message and in a field", (_shape, text, credential) => {
    const { log, lines } = capture();
    log.warn(text, { detail: text, list: [text] });
    expect(lines[0]).not.toContain(credential);
    expect(JSON.parse(lines[0]!)["@message"]).toMatch(MASKED);
  });

  it.each(CREDENTIAL_VALUES)("masks %s given as fields", (_shape, value, credential) => {
    const { log, lines } = capture();
    log.info("fields", value as Record<string, unknown>);
    expect(lines[0]).not.toContain(credential);
    expect(lines[0]).toContain(REDACTED);
  });

  it("keeps hclog's own keys out of the caller's hands", () => {
    const { log, records } = capture();
    log.info("m", { "@message": "spoofed", "@level": "error", n: 1 });
    expect(records()[0]).toMatchObject({ "@message": "m", "@level": "info", n: 1 });
  });
});
