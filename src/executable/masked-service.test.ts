import { CREDENTIAL_TEXTS } from "../api/testing/credentials";
import { createStubProviderService } from "../plugin/testing/stub-service";
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
