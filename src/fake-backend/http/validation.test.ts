import { useFakeBackend } from "../../testing/fake-backend";
import { ApiFailure } from "../errors";
import {
  deployBody,
  logsQuery,
  offersQuery,
  parseOr422,
  spendDailyQuery,
  transactionsQuery,
} from "./validation";

// 422 VALIDATION_ERROR names the field, the limit and the value (docs/api-shapes.md): the limit of
// the API, never one of zod's own, and the value as it was sent.

const fake = useFakeBackend();

/** The refusal of `data` by `schema`, as its error body carries it. */
function refusal(...args: Parameters<typeof parseOr422>): Record<string, unknown> {
  try {
    parseOr422(...args);
  } catch (err) {
    if (!(err instanceof ApiFailure)) throw err;
    return { status: err.status, code: err.code, message: err.message, ...err.extras };
  }
  throw new Error("accepted");
}

/** POST /v1/instances with the demo's deploy body, `disk_gb` written as `diskText` in the JSON. */
async function deployWithDisk(diskText: string): Promise<{ status: number; error: Record<string, unknown> }> {
  const { offer_id, template_id, ssh_key_id } = fake.creds;
  const res = await fetch(`${fake.url}/v1/instances`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${fake.creds.admin_session_token}`,
      "content-type": "application/json",
    },
    body: `{"offer_id":"${offer_id}","template_id":"${template_id}","ssh_key_id":"${ssh_key_id}","disk_gb":${diskText}}`,
  });
  return { status: res.status, error: ((await res.json()) as { error: Record<string, unknown> }).error };
}

describe("an integer out of range is refused with the API's limit, not zod's safe-integer bound", () => {
  const body = {
    offer_id: "00000000-0000-4000-8000-000000000041",
    template_id: "00000000-0000-4000-8000-000000000051",
  };

  test.each([
    [1e300, 20000, /^disk_gb: .*<=20000; got 1e\+300$/],
    [-1e300, 10, /^disk_gb: .*>=10; got -1e\+300$/],
    [2 ** 53, 20000, /^disk_gb: .*<=20000; got 9007199254740992$/],
  ])("disk_gb %p: limit %p", (disk_gb, limit, message) => {
    const e = refusal(deployBody, { ...body, disk_gb }, "body");
    expect(e).toMatchObject({
      status: 422,
      code: "VALIDATION_ERROR",
      field: "disk_gb",
      limit,
      value: disk_gb,
    });
    expect(e.message).toMatch(message);
  });

  test.each([
    ["tail", "1e300", 1000, logsQuery],
    ["tail", "-1e300", 1, logsQuery],
    ["num_gpus", "-1e300", 1, offersQuery],
    ["limit", "1e300", 1000, transactionsQuery],
    ["limit", "-1e300", 1, transactionsQuery],
    ["days", "1e300", 90, spendDailyQuery],
    ["days", "-1e300", 1, spendDailyQuery],
  ] as const)("query %s=%s: limit %p", (field, value, limit, schema) => {
    const e = refusal(schema, { [field]: value }, "query");
    expect(e).toMatchObject({ status: 422, code: "VALIDATION_ERROR", field, limit, value });
    expect(e.message).toMatch(new RegExp(`^${field}: .*${limit}; got "${value}"$`));
  });

  test("what is in range is still an integer, and the defaults stand", () => {
    expect(refusal(deployBody, { ...body, disk_gb: 50.5 }, "body")).toMatchObject({
      field: "disk_gb",
      value: 50.5,
    });
    expect(refusal(logsQuery, { tail: "2.5" }, "query")).toMatchObject({ field: "tail", value: "2.5" });
    expect(refusal(deployBody, body, "body")).toMatchObject({ field: "disk_gb" });
    expect(parseOr422(logsQuery, {}, "query")).toEqual({ tail: 200 });
    expect(parseOr422(transactionsQuery, { limit: "1000" }, "query")).toEqual({ limit: 1000 });
    expect(parseOr422(spendDailyQuery, {}, "query")).toEqual({ days: 30 });
    expect(parseOr422(offersQuery, { num_gpus: "2" }, "query")).toMatchObject({ num_gpus: 2 });
    expect(parseOr422(deployBody, { ...body, disk_gb: 20000 }, "body")).toMatchObject({ disk_gb: 20000 });
  });

  test("over HTTP: POST /v1/instances with disk_gb 1e300 and -1e300", async () => {
    expect(await deployWithDisk("1e300")).toMatchObject({
      status: 422,
      error: { code: "VALIDATION_ERROR", field: "disk_gb", limit: 20000, value: 1e300 },
    });
    expect(await deployWithDisk("-1e300")).toMatchObject({
      status: 422,
      error: { code: "VALIDATION_ERROR", field: "disk_gb", limit: 10, value: -1e300 },
    });
  });
});

describe("a body number beyond every double (1e999, read as Infinity) is named as sent", () => {
  test.each([
    ["1e999", "Infinity", 20000, "<=20000"],
    ["-1e999", "-Infinity", 10, ">=10"],
  ])("disk_gb %s: value %j, limit %p", async (text, value, limit, bound) => {
    const a = await deployWithDisk(text);
    expect(a).toMatchObject({
      status: 422,
      error: { code: "VALIDATION_ERROR", field: "disk_gb", limit, value },
    });
    expect(a.error.message).toMatch(new RegExp(`^disk_gb: .*${bound}; got "${value}"$`));
  });

  test("in a field that is no number, and in a query, too", async () => {
    const res = await fetch(`${fake.url}/v1/api-keys`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${fake.creds.admin_session_token}`,
        "content-type": "application/json",
      },
      body: '{"name":1e999}',
    });
    const { error } = (await res.json()) as { error: Record<string, unknown> };
    expect(error).toMatchObject({ code: "VALIDATION_ERROR", field: "name", value: "Infinity" });
    expect(error.message).toMatch(/^name: .*; got "Infinity"$/);
    expect(refusal(logsQuery, { tail: "1e999" }, "query")).toMatchObject({
      field: "tail",
      limit: 1000,
      value: "1e999",
    });
  });
});

test("the control API refuses a number out of range with its own limit", async () => {
  for (const text of ["1e300", "-1"]) {
    const res = await fetch(`${fake.url}/_control/faults`, {
      method: "POST",
      headers: { "x-control-token": fake.backend.controlToken, "content-type": "application/json" },
      body: `{"route":"GET /v1/me","kind":"latency","latencyMs":${text}}`,
    });
    expect(res.status).toBe(422);
    const { error } = (await res.json()) as { error: Record<string, unknown> };
    expect(error).toMatchObject({
      code: "VALIDATION_ERROR",
      field: "latencyMs",
      limit: text === "-1" ? 0 : 2_147_483_647,
    });
  }
});
