import { client, deployBody, fail, json, ORG, ok, server, TOKEN } from "../testing/scripted-server";
import { version } from "../version";
import { GpurentalClient } from "./client";
import { ApiError, ClientConfigError, ResponseValidationError } from "./errors";
import { makeInstance } from "./testing/fixtures";

// Transport-level behaviour (dropped connections, timeouts, odd bodies) against a tiny scripted
// server; behaviour of the real API is tested against the fake backend in client.fake-backend.test.ts.

describe("construction", () => {
  test.each([
    ["not a url", /baseUrl.*"not a url"/],
    ["ftp://example.com", /baseUrl must use http or https, got "ftp:\/\/example.com"/],
    ["", /baseUrl/],
    ["https://example.com/?x=1", /query or fragment/],
  ])("rejects baseUrl %j naming field and value", (baseUrl, message) => {
    let err: unknown;
    try {
      new GpurentalClient({ baseUrl, token: TOKEN });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ClientConfigError);
    expect((err as ClientConfigError).field).toBe("baseUrl");
    expect((err as Error).message).toMatch(message);
  });

  test("rejects an orgId that is not a UUID, naming the field and the value", () => {
    for (const orgId of ["org-1", "", "00000000-0000-4000-8000-00000000000g"]) {
      let err: unknown;
      try {
        new GpurentalClient({ baseUrl: "https://x.example", token: TOKEN, orgId });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ClientConfigError);
      expect((err as ClientConfigError).field).toBe("orgId");
      expect((err as Error).message).toBe(
        `orgId must be an organization ID (a UUID), got ${JSON.stringify(orgId)}`,
      );
    }
  });

  test("rejects an empty token without echoing it", () => {
    expect(() => new GpurentalClient({ baseUrl: "https://x.example", token: "" })).toThrow(/token must be/);
    expect(() => new GpurentalClient({ baseUrl: "https://x.example", token: "bad token" })).toThrow(
      ClientConfigError,
    );
  });

  test("normalises a trailing slash and keeps a path prefix", async () => {
    server.queue(ok({ items: [] }));
    const c = client({ baseUrl: `${server.url}/prefix/` });
    expect(c.baseUrl).toBe(`${server.url}/prefix`);
    await c.listApiKeys();
    expect(server.seen[0]?.url).toBe("/prefix/v1/api-keys");
  });
});

describe("requests", () => {
  test("sends auth, org, user agent, accept and content type", async () => {
    server.queue(ok(makeInstance(), 201));
    const c = client({ orgId: ORG, userAgent: "Terraform/1.9.0" });
    await c.deployInstance(deployBody);
    const s = server.seen[0]!;
    expect(s.method).toBe("POST");
    expect(s.url).toBe("/v1/instances");
    expect(s.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(s.headers["x-org-id"]).toBe(ORG);
    expect(s.headers["user-agent"]).toBe(`gpurental/${version} Terraform/1.9.0`);
    expect(s.headers.accept).toBe("application/json");
    expect(s.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(s.body)).toEqual(deployBody);
  });

  test("GET has no content type and no X-Org-Id unless configured", async () => {
    server.queue(ok({ items: [] }));
    await client().listInstances();
    const s = server.seen[0]!;
    expect(s.headers["content-type"]).toBeUndefined();
    expect(s.headers["x-org-id"]).toBeUndefined();
    expect(s.headers["user-agent"]).toBe(`gpurental/${version}`);
  });

  test.each([
    [
      "listInstances",
      (c: GpurentalClient) => c.listInstances({ include_destroyed: true }),
      "/v1/instances?include_destroyed=true",
    ],
    [
      "getInstanceLogs",
      (c: GpurentalClient) => c.getInstanceLogs("i/1", { tail: 5 }),
      "/v1/instances/i%2F1/logs?tail=5",
    ],
    [
      "listOffers",
      (c: GpurentalClient) => c.listOffers({ gpu_model: "RTX 4090", num_gpus: 2, sort: "price_asc" }),
      "/v1/offers?gpu_model=RTX+4090&num_gpus=2&sort=price_asc",
    ],
    [
      "listTemplates",
      (c: GpurentalClient) => c.listTemplates({ tab: "recommended", mode: "ssh" }),
      "/v1/templates?tab=recommended&mode=ssh",
    ],
    [
      "listTransactions",
      (c: GpurentalClient) => c.listTransactions({ instance_id: "i1", limit: 3 }),
      "/v1/billing/transactions?instance_id=i1&limit=3",
    ],
    ["getSpendDaily", (c: GpurentalClient) => c.getSpendDaily({ days: 7 }), "/v1/billing/spend-daily?days=7"],
  ])("%s builds its path and query", async (_name, call, path) => {
    server.always((_req, res) => json(res, 200, { items: [], lines: [] }));
    await call(client());
    expect(server.seen[0]?.url).toBe(path);
  });

  test("a 204 resolves to undefined", async () => {
    server.queue((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    await expect(client().revokeApiKey("k1")).resolves.toBeUndefined();
    expect(server.seen[0]?.method).toBe("DELETE");
  });

  test("unknown fields are tolerated and dropped", async () => {
    server.queue(ok({ ...makeInstance(), brand_new_field: 1 }));
    const inst = await client().getInstance("i1");
    expect(inst.status).toBe("running");
    expect("brand_new_field" in inst).toBe(false);
  });
});

describe("errors", () => {
  test("coded error with carried fields", async () => {
    server.queue(fail(422, "DISK_TOO_LARGE", { max_disk_gb: 500, request_id: "req-body" }));
    const err = await client()
      .deployInstance({ ...deployBody, disk_gb: 800 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e.status).toBe(422);
    expect(e.code).toBe("DISK_TOO_LARGE");
    expect(e.max_disk_gb).toBe(500);
    expect("balance_micro" in e).toBe(false);
    expect(e.requestId).toBe("req-1");
    expect(e.endpoint).toBe("POST /v1/instances");
    expect(e.message).toContain("DISK_TOO_LARGE");
    expect(server.seen).toHaveLength(1);
  });

  test("every carried field becomes a typed property", async () => {
    server.queue(
      fail(402, "INSUFFICIENT_BALANCE", {
        balance_micro: 1,
        required_micro: 2,
        available_disk_gb: 3,
        requested_disk_gb: 4,
        next_maintenance: "2026-11-22T09:00:00.000Z",
        limit: 25,
      }),
    );
    const e = (await client()
      .deployInstance(deployBody)
      .catch((x: unknown) => x)) as ApiError;
    expect([e.balance_micro, e.required_micro, e.available_disk_gb, e.requested_disk_gb, e.limit]).toEqual([
      1, 2, 3, 4, 25,
    ]);
    expect(e.next_maintenance).toBe("2026-11-22T09:00:00.000Z");
  });

  test("VALIDATION_ERROR carries field and value", async () => {
    server.queue(fail(422, "VALIDATION_ERROR", { field: "tail", value: 5000, limit: 1000 }));
    const e = (await client()
      .getInstanceLogs("i1", { tail: 5000 })
      .catch((x: unknown) => x)) as ApiError;
    expect(e.field).toBe("tail");
    expect(e.value).toBe(5000);
    expect(e.limit).toBe(1000);
    expect(e.endpoint).toBe("GET /v1/instances/{id}/logs");
  });

  test.each([
    ["an HTML body", "text/html", "<html>bad gateway</html>", 404, "NOT_FOUND"],
    ["an empty body", "text/plain", "", 409, "CONFLICT"],
    ["JSON without error", "application/json", '{"detail":"nope"}', 403, "FORBIDDEN"],
    ["an unknown status", "text/plain", "", 418, "HTTP_418"],
  ])("tolerates %s", async (_what, type, body, status, code) => {
    server.queue((_req, res) => {
      res.writeHead(status, { "content-type": type });
      res.end(body);
    });
    const e = (await client()
      .getInstance("i1")
      .catch((x: unknown) => x)) as ApiError;
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(status);
    expect(e.code).toBe(code);
    expect(e.requestId).toBeUndefined();
  });

  test("a response that does not fit names the endpoint and the field", async () => {
    server.queue(ok({ ...makeInstance(), status: "exploded" }));
    const e = (await client()
      .getInstance("i1")
      .catch((x: unknown) => x)) as ResponseValidationError;
    expect(e).toBeInstanceOf(ResponseValidationError);
    expect(e.endpoint).toBe("GET /v1/instances/{id}");
    expect(e.issues[0]?.path).toBe("status");
    expect(e.message).toMatch(/^GET \/v1\/instances\/\{id\}: .* at status/);
  });

  test("a missing contract field in a list item is reported with its index", async () => {
    const { ssh_port: _drop, ...noPort } = makeInstance();
    server.queue(ok({ items: [makeInstance(), noPort] }));
    const e = (await client()
      .listInstances()
      .catch((x: unknown) => x)) as ResponseValidationError;
    expect(e.endpoint).toBe("GET /v1/instances");
    expect(e.issues.map((i) => i.path)).toContain("items.1.ssh_port");
  });

  test("a 2xx body that is not JSON is a validation error", async () => {
    server.queue((_req, res) => {
      res.writeHead(200);
      res.end("<html>");
    });
    await expect(client().getMe()).rejects.toThrow(ResponseValidationError);
  });
});
