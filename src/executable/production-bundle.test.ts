import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildProvider } from "../../scripts/build/bundle-provider";
import { startFakeBackend } from "../fake-backend";
import type { CtyValue } from "../framework";
import type { Schema } from "../framework/schema";
import { fullObject } from "../framework/testing";
import { derToPem, generateServerCertificate } from "../plugin/cert";
import { encodeMsgpack } from "../plugin/cty";
import { encodeResponse } from "../plugin/grpc-server";
import { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE } from "../plugin/handshake";
import { CONVERSION } from "../plugin/proto";
import { messageType } from "../plugin/proto/reflection";
import { connect, parseHandshake, tlsCredentials } from "../plugin/testing/grpc-client";
import { provider } from "../provider";
import { handshakeLine, startExecutable } from "../testing/provider-executable";
import { createService } from "./provider-impl";

// The production build as `npm run build` makes it and `gpurental provider install` ships it: five
// bundles and the GetProviderSchema answer encoded at build time. Built here into a temporary
// directory, from the sources under test.

jest.setTimeout(120_000);

const work = mkdtempSync(join(tmpdir(), "gpurental-production-bundle-"));
const out = join(work, "bundle");
const hostCert = generateServerCertificate();
const children: ChildProcess[] = [];

/** The bundles as built, read before any test removes one. */
const built = new Map<string, string>();

beforeAll(async () => {
  await buildProvider(out);
  for (const part of ["provider.js", "provider-transport.js", "provider-impl.js", "provider-journal-pg.js"])
    built.set(part, readFileSync(join(out, part), "utf8"));
  writeFileSync(
    join(work, "run.js"),
    `require(${JSON.stringify(join(out, "provider-launcher.js"))}).launch(${JSON.stringify(join(out, "provider.js"))}, []);\n`,
  );
});

afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

async function startProvider() {
  const started = startExecutable(join(work, "run.js"), {
    PATH: process.env.PATH,
    // The provider's socket goes into this suite's folder, which is removed with it, even when the provider is killed.
    TMPDIR: work,
    GPURENTAL_PROVIDER_CODE_CACHE: "off",
    GPURENTAL_PROVIDER_RESIDENT: "off",
    [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE,
    PLUGIN_PROTOCOL_VERSIONS: "6",
    PLUGIN_CLIENT_CERT: hostCert.certPem,
  });
  children.push(started.child);
  const hs = parseHandshake(await handshakeLine(started));
  const creds = tlsCredentials(derToPem(Buffer.from(hs.cert, "base64")), hostCert);
  return { provider: connect(hs.address, "tfplugin6.Provider", creds), stderr: started.stderr };
}

/** A response as the client decodes it: what Terraform receives. */
function asReceived(bytes: Buffer): object {
  const type = messageType("tfplugin6.GetProviderSchema.Response");
  return type.toObject(type.decode(bytes), CONVERSION);
}

describe("the production build", () => {
  it("keeps the PostgreSQL client out of the provider's bundles: only the journal's worker carries it", () => {
    // pg's SCRAM authentication, a part of its client no other code of the provider has.
    const marker = "SCRAM-SHA-256";
    // Read before any test removes a part.
    for (const part of ["provider.js", "provider-transport.js", "provider-impl.js"])
      expect(built.get(part)).not.toContain(marker);
    expect(built.get("provider-journal-pg.js")).toContain(marker);
  });
  it("answers GetProviderSchema with exactly the schema the provider builds", async () => {
    const live = encodeResponse(
      "tfplugin6.Provider",
      "GetProviderSchema",
      await createService().GetProviderSchema({}),
    );
    const { provider } = await startProvider();
    try {
      const res = await provider.call("GetProviderSchema");
      expect(res).toEqual(asReceived(live));
      // The rest of the provider loads on the first call that needs it.
      await expect(
        provider.call("ValidateResourceConfig", { type_name: "gpurental_nope" }),
      ).resolves.toMatchObject({
        diagnostics: [expect.objectContaining({ detail: expect.stringMatching(/gpurental_nope/) })],
      });
    } finally {
      provider.close();
    }
  });

  it("reaches the API with the bundle's own HTTP client (undici's request alone)", async () => {
    // provider-impl.js carries the API client with the cut-down undici (scripts/build/undici-request.js).
    const { createService: createBundled } = require(join(out, "provider-impl.js")) as {
      createService: typeof createService;
    };
    const service = createBundled();
    const dv = (values: Record<string, CtyValue>, schema: Schema) => ({
      msgpack: encodeMsgpack(fullObject(schema, values), schema.type),
      json: Buffer.alloc(0),
    });
    const backend = await startFakeBackend({ port: 0, seed: "demo" });
    try {
      const configure = await service.ConfigureProvider({
        terraform_version: "1.11.4",
        config: dv(
          { base_url: backend.url, token: backend.credentials!.admin_session_token },
          provider.schema,
        ),
        client_capabilities: null,
      });
      expect(configure.diagnostics).toEqual([]);
      const templates = provider.dataSources.find((d) => d.typeName === "gpurental_templates")!.schema;
      const read = await service.ReadDataSource({
        type_name: "gpurental_templates",
        config: dv({}, templates),
        provider_meta: null,
        client_capabilities: null,
      });
      expect(read.diagnostics).toEqual([]);
      expect(read.state?.msgpack?.toString("latin1")).toMatch(/PyTorch 2\.5/);
    } finally {
      await backend.close();
    }
  });

  it("answers GetProviderSchema without loading the provider itself", async () => {
    // Without provider-impl.js only the pre-encoded answer can be given; any other call fails.
    rmSync(join(out, "provider-impl.js"));
    const { provider, stderr } = await startProvider();
    try {
      const res = (await provider.call("GetProviderSchema")) as { resource_schemas: Record<string, unknown> };
      expect(Object.keys(res.resource_schemas).sort()).toEqual(["gpurental_api_key", "gpurental_instance"]);
      await expect(provider.call("ValidateProviderConfig")).rejects.toThrow(/INTERNAL/);
      // The log line travels on another pipe than the answer and may come a moment later.
      for (let i = 0; i < 100 && !/provider-impl\.js/.test(stderr()); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(stderr()).toMatch(/provider-impl\.js/);
    } finally {
      provider.close();
    }
  });
});
