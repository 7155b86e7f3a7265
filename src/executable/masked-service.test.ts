import { instancePowerAction } from "../actions";
import { CREDENTIAL_TEXTS, CREDENTIALS } from "../api/testing/credentials";
import { UNSAFE_CHARACTERS } from "../display";
import type { Schema } from "../framework";
import { instanceList } from "../list-resources";
import { type CtyType, type CtyValue, encodeMsgpack } from "../plugin/cty";
import { createStubProviderService } from "../plugin/testing/stub-service";
import type { EventStream } from "../plugin/tfplugin6";
import { providerSchema } from "../provider";
import { useFakeBackend } from "../testing/fake-backend";
import { maskedService } from "./masked-service";
import { createService } from "./provider-impl";

const everyText = CREDENTIAL_TEXTS.map(([, text]) => text).join(" | ");
const secrets = [...new Set(CREDENTIAL_TEXTS.map(([, , secret]) => secret))];

function expectNoCredential(text: string): void {
  for (const secret of secrets)
    expect({ secret, leaked: text.includes(secret) }).toEqual({ secret, leaked: false });
}

describe("maskedService", () => {
  it("masks every credential in the diagnostics of any RPC and keeps the rest of the answer", async () => {
    const stub = createStubProviderService();
    stub.PlanResourceChange = async () => ({
      planned_state: { msgpack: Buffer.from([0xc0]) },
      diagnostics: [
        { severity: 1, summary: `refused: ${everyText}`, detail: everyText, attribute: { steps: [] } },
        { severity: 2, summary: "no detail" },
      ],
    });
    const res = await maskedService(stub).PlanResourceChange({ type_name: "x" } as never);
    expectNoCredential(JSON.stringify(res));
    expect(res.planned_state).toEqual({ msgpack: Buffer.from([0xc0]) });
    expect(res.diagnostics).toHaveLength(2);
    expect(res.diagnostics?.[0]).toMatchObject({ severity: 1, attribute: { steps: [] } });
    expect(res.diagnostics?.[0]?.summary).toMatch(/^refused: 401 for \[REDACTED\] on GET \/v1\/me/);
    expect(res.diagnostics?.[1]).toEqual({ severity: 2, summary: "no detail" });
  });

  it("masks the message of an error a handler throws", async () => {
    const stub = createStubProviderService();
    stub.ApplyResourceChange = async () => {
      throw new TypeError(`boom ${everyText}`);
    };
    const err = await maskedService(stub)
      .ApplyResourceChange({ type_name: "x" } as never)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toMatch(/^boom /);
    expectNoCredential((err as Error).message);
  });

  it("masks the diagnostics of listed objects and the progress and diagnostics of actions", async () => {
    const stub = createStubProviderService();
    stub.ListResource = async (_req, stream) => {
      await stream.send({ display_name: "kept", diagnostic: [{ severity: 2, summary: everyText }] });
    };
    stub.InvokeAction = async (_req, stream) => {
      await stream.send({ progress: { message: `stopping ${everyText}` } });
      await stream.send({ completed: { diagnostics: [{ severity: 1, summary: "x", detail: everyText }] } });
    };
    const sent: unknown[] = [];
    const sink = {
      signal: new AbortController().signal,
      send: async (e: unknown) => {
        sent.push(e);
      },
    };
    const masked = maskedService(stub);
    await masked.ListResource!({ type_name: "x" } as never, sink);
    await masked.InvokeAction!({ action_type: "x" } as never, sink);
    expect(sent).toHaveLength(3);
    expectNoCredential(JSON.stringify(sent));
    expect(sent[0]).toMatchObject({ display_name: "kept", diagnostic: [{ severity: 2 }] });
    expect(JSON.stringify(sent[1])).toMatch(/"message":"stopping 401 for \[REDACTED\]/);
    expect(sent[2]).toMatchObject({ completed: { diagnostics: [{ severity: 1, summary: "x" }] } });
  });

  it("keeps what is not an RPC as it is", () => {
    const service = { ...createStubProviderService(), version: "1.2.3" };
    expect((maskedService(service) as unknown as { version: string }).version).toBe("1.2.3");
  });

  it("passes answers without diagnostics through unchanged", async () => {
    const stub = createStubProviderService();
    await expect(maskedService(stub).StopProvider({})).resolves.toEqual(await stub.StopProvider({}));
  });

  it("is what the provider executable serves", async () => {
    const res = await createService().ValidateResourceConfig({
      type_name: `gpurental_nothing ${everyText}`,
      config: { msgpack: Buffer.from([0xc0]) },
    } as never);
    expect(res.diagnostics?.[0]?.summary).toBe("Unknown resource type");
    expectNoCredential(JSON.stringify(res));
  });
});

describe("what Terraform prints of a diagnostic", () => {
  it("shows control characters and overrides escaped, keeping the detail's lines", async () => {
    const stub = createStubProviderService();
    stub.PlanResourceChange = async () => ({
      diagnostics: [
        {
          severity: 1,
          summary: "Instance evil\u001b]0;PWNED\u0007 is in error\r\nfake line",
          detail: "first line\nsecond \u001b[2J line \u202eright-to-left",
        },
      ],
    });
    const res = await maskedService(stub).PlanResourceChange({ type_name: "x" } as never);
    expect(res.diagnostics?.[0]).toMatchObject({
      summary: "Instance evil\\x1b]0;PWNED\\x07 is in error\\x0d\\x0afake line",
      detail: "first line\nsecond \\x1b[2J line \\u202eright-to-left",
    });
  });
});

describe("what Terraform prints of an instance's label, from the provider the executable serves", () => {
  const fake = useFakeBackend({ workDir: "file" });
  // An organization member's label (the API takes 64 characters): it sets the window title and
  // rings (ESC ] ... BEL), turns what follows right-to-left (U+202E), and holds an API key secret.
  const LABEL = `\u001b]0;PWNED\u0007\u202e ${CREDENTIALS.keySecret}`;
  /** Control characters and overrides (src/display.ts); a progress message may keep its lines. */
  const UNSAFE = new RegExp(`[${UNSAFE_CHARACTERS}]`);
  const UNSAFE_BUT_LINES = new RegExp(`(?![\\n\\t])[${UNSAFE_CHARACTERS}]`);
  const SHOWN = `\\x1b]0;PWNED\\x07\\u202e [REDACTED]`;

  const msgpack = (value: Record<string, CtyValue>, type: CtyType) => ({
    msgpack: encodeMsgpack(value, type),
    json: Buffer.alloc(0),
  });
  const nulls = (schema: Schema, values: Record<string, CtyValue>) => ({
    ...Object.fromEntries(Object.keys(schema.attributes).map((k) => [k, null])),
    ...values,
  });

  /** The executable's service, configured for the fake backend, and an instance with LABEL. */
  async function setUp() {
    expect(LABEL.length).toBe(64);
    const client = fake.client();
    const inst = await client.deployInstance({
      offer_id: fake.creds.offer_id,
      template_id: fake.creds.template_id,
      disk_gb: 20,
      label: LABEL,
    });
    const service = createService({
      cwd: fake.workDir,
      env: {},
      clientOptions: { dispatcher: fake.agent },
    });
    const schema = providerSchema as Schema;
    const configured = await service.ConfigureProvider({
      terraform_version: "1.14.0",
      config: msgpack(
        nulls(schema, { base_url: fake.url, token: fake.creds.admin_session_token }),
        schema.type,
      ),
      client_capabilities: { deferral_allowed: false, write_only_attributes_allowed: true },
    });
    expect(configured.diagnostics ?? []).toEqual([]);
    return { service, inst };
  }

  function sink<E>(): EventStream<E> & { events: E[] } {
    const events: E[] = [];
    return {
      events,
      signal: new AbortController().signal,
      send: async (e) => {
        events.push(e);
      },
    };
  }

  it("reaches terraform query's display name escaped and masked", async () => {
    const { service } = await setUp();
    const listSchema = instanceList.schema as Schema;
    const stream = sink<{ display_name?: string; diagnostic?: unknown[] }>();
    await service.ListResource!(
      {
        type_name: "gpurental_instance",
        config: msgpack(nulls(listSchema, {}), listSchema.type),
        include_resource_object: false,
        limit: 100,
      },
      stream,
    );
    const names = stream.events.map((e) => e.display_name).filter((n) => n !== undefined);
    expect(names).toContain(`${SHOWN} (RTX 4090 x1, running)`);
    for (const name of names) {
      expect(name).not.toMatch(UNSAFE);
      expect(name).not.toContain(CREDENTIALS.keySecret);
    }
  });

  it("reaches an action's progress messages escaped and masked", async () => {
    const { service, inst } = await setUp();
    const actionSchema = instancePowerAction.schema as Schema;
    const stream = sink<{ progress?: { message: string }; completed?: { diagnostics?: unknown[] } }>();
    await service.InvokeAction!(
      {
        action_type: "gpurental_instance_power",
        config: msgpack(nulls(actionSchema, { instance_id: inst.id, state: "stopped" }), actionSchema.type),
        client_capabilities: null,
      },
      stream,
    );
    expect(stream.events.at(-1)).toEqual({ completed: { diagnostics: [] } });
    const messages = stream.events.flatMap((e) => (e.progress ? [e.progress.message] : []));
    // The first names the instance as it is found, before the stop.
    const first = `instance ${inst.id} (${SHOWN}): running, `;
    expect(messages[0]?.slice(0, first.length)).toBe(first);
    expect(messages.some((m) => m.includes(`(${SHOWN}): stopped, `))).toBe(true);
    for (const m of messages) {
      expect(m).not.toMatch(UNSAFE_BUT_LINES);
      expect(m).not.toContain(CREDENTIALS.keySecret);
    }
  });
});
