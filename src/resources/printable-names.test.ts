import { apiKeyEphemeral } from "../ephemeral-resources/api-key";
import { createHarness } from "../framework/testing";
import { type CtyValue, toDynamicValue } from "../plugin/cty";
import { createProvider } from "../provider";

// Names people read (an instance's label, an API key's name) with a control character or a
// bidirectional override are an error at plan (ValidateResourceConfig): the API accepts them, and
// then every console, terminal and plan report shows them escaped or obeys them. Why an error and
// not a warning: README, "What the provider trusts".

const h = createHarness(createProvider({ env: {} }));
const ID = "00000000-0000-4000-8000-000000000041";
const instance = (label: CtyValue) => ({ offer_id: ID, template_id: ID, disk_gb: 50, label });

describe("names with control characters", () => {
  test.each([
    ["ESC and BEL (a window title and a cleared screen)", "evil\u001b]0;PWNED\u0007\u001b[2Jx", "\\x1b", 5],
    ["a line break", "web\nfront", "\\x0a", 4],
    ["NUL", "a\u0000", "\\x00", 2],
    ["a C1 control", "a\u009bb", "\\x9b", 2],
    ["a right-to-left override", "invoice\u202etxt.exe", "\\u202e", 8],
  ])("an instance label with %s is an error naming the character", async (_what, label, shown, at) => {
    const diags = await h.validate("gpurental_instance", instance(label));
    expect(diags).toEqual([
      expect.objectContaining({
        severity: "error",
        path: [{ attribute: "label" }],
        detail: expect.stringContaining(`label contains the character ${shown} (at character ${at} of`),
      }),
    ]);
  });

  test("a printable label of any script passes", async () => {
    expect(await h.validate("gpurental_instance", instance("ノード-1 Größe ✓"))).toEqual([]);
  });

  test("an API key name, managed or ephemeral, follows the same rule", async () => {
    const diags = await h.validate("gpurental_api_key", { name: "ci\tkey" });
    expect(diags).toEqual([expect.objectContaining({ severity: "error", path: [{ attribute: "name" }] })]);
    const { schema } = apiKeyEphemeral;
    const config = Object.fromEntries(Object.keys(schema.attributes).map((k) => [k, null]));
    const res = await h.service.ValidateEphemeralResourceConfig({
      type_name: apiKeyEphemeral.typeName,
      config: {
        msgpack: toDynamicValue({ ...config, name: "ci\u001bkey" }, schema.type).msgpack!,
        json: Buffer.alloc(0),
      },
    });
    expect(res.diagnostics?.[0]).toMatchObject({ summary: "Invalid attribute value" });
  });
});
