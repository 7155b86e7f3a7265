import { Annotations, Token } from "cdktf";
import type { Construct } from "constructs";
import { z } from "zod";
import { parseApiAddress } from "../api/ids";
import { maskUrl } from "../api/redact";
import { provider } from "../bindings/cdktf";
import { apiId, type PropList, problems, readProps, show, unlessToken } from "./validation";

/** Settings of {@link GpurentalProvider}; every one falls back to a GPURENTAL_* variable when the provider runs. */
export interface GpurentalProviderProps {
  /**
   * Base address of the gpurental API, e.g. `https://api.example.com`.
   * @default the provider reads GPURENTAL_BASE_URL when Terraform runs it
   */
  readonly baseUrl?: string;
  /**
   * A session token or an API key secret. Best left out, for GPURENTAL_TOKEN: a literal is written
   * into the synthesized configuration, and a `TerraformVariable`'s value, sensitive or not, into
   * every saved plan (`cdktf diff` and `deploy` save one in cdktf.out) in clear text.
   * @default the provider reads GPURENTAL_TOKEN when Terraform runs it
   */
  readonly token?: string;
  /**
   * Organization to act in (sent as X-Org-Id).
   * @default GPURENTAL_ORG_ID, or else the credential's own organization
   */
  readonly orgId?: string;
  /**
   * Where the deploy journal is kept (relative paths from the stack's working directory,
   * `cdktf.out/stacks/<stack>`): keep it outside `cdktf.out` if you clean that folder.
   * @default GPURENTAL_JOURNAL_DIR, or else `.terraform/gpurental-journal` in the stack's directory
   */
  readonly journalDir?: string;
  /**
   * PostgreSQL database of the deploy journal, a `postgres://` URL (the `pg` backend's form), in
   * place of journalDir: shared by every runner, so a runner that is lost leaves nothing behind.
   * Best left out, for GPURENTAL_JOURNAL_URL: a literal (and its password) is written into the
   * synthesized configuration.
   * @default GPURENTAL_JOURNAL_URL, or else the journal directory
   */
  readonly journalUrl?: string;
  /**
   * How long a deploy or key creation whose answer was lost is looked for, e.g. "2m".
   * @default GPURENTAL_RECONCILE_TIMEOUT, or else "2m"
   */
  readonly reconcileTimeout?: string;
  /**
   * A PEM file of CA certificates to trust for the API, beside the system's (a private CA, a
   * TLS-inspecting proxy). Relative paths are taken from the stack's working directory.
   * @default GPURENTAL_CA_CERT_FILE, or else only the system's and Node's roots
   */
  readonly caCertFile?: string;
  /**
   * Proxy for an https baseUrl, e.g. `http://proxy.example:3128`. Best left to HTTPS_PROXY when it
   * holds credentials: a literal is written into the synthesized configuration.
   * @default the HTTPS_PROXY (or https_proxy) environment variable where Terraform runs
   */
  readonly httpsProxy?: string;
  /**
   * Proxy for an http baseUrl.
   * @default the HTTP_PROXY (or http_proxy) environment variable where Terraform runs
   */
  readonly httpProxy?: string;
  /**
   * Hosts reached without the proxy, comma-separated, as Go reads NO_PROXY.
   * @default the NO_PROXY (or no_proxy) environment variable where Terraform runs
   */
  readonly noProxy?: string;
  /**
   * Alias, to configure several gpurental providers in one stack.
   * @default no alias
   */
  readonly alias?: string;
}

/** The props of {@link GpurentalProviderProps}, for {@link problems}. */
const PROPS = {
  baseUrl: true,
  token: true,
  orgId: true,
  journalDir: true,
  journalUrl: true,
  reconcileTimeout: true,
  caCertFile: true,
  httpsProxy: true,
  httpProxy: true,
  noProxy: true,
  alias: true,
} as const satisfies PropList<GpurentalProviderProps>;

const schema = z.object({
  baseUrl: unlessToken(
    z.unknown().check((ctx) => {
      const v = ctx.value;
      // Only the scheme is checked at synth time; the provider reports the rest where it runs.
      const problem = typeof v === "string" ? parseApiAddress(v).problem : "not-url";
      if (problem === "not-url" || problem === "scheme") {
        ctx.issues.push({
          code: "custom",
          message: `baseUrl must be an http:// or https:// address, got ${typeof v === "string" ? show(maskUrl(v)) : show(v)}`,
          input: v,
        });
      }
    }),
  ).optional(),
  token: unlessToken(
    z.unknown().check((ctx) => {
      if (typeof ctx.value === "string" && ctx.value.length > 0) return;
      ctx.issues.push({ code: "custom", message: "token must be a non-empty string", input: undefined });
    }),
  ).optional(),
  // The provider refuses an org_id that is no organization ID at plan; here it fails at synth.
  orgId: apiId("orgId").optional(),
  journalDir: unlessToken(
    z.unknown().check((ctx) => {
      if (typeof ctx.value === "string" && ctx.value.length > 0) return;
      ctx.issues.push({
        code: "custom",
        message: `journalDir must be a non-empty path, got ${show(ctx.value)}`,
        input: ctx.value,
      });
    }),
  ).optional(),
  journalUrl: unlessToken(
    z.unknown().check((ctx) => {
      if (typeof ctx.value === "string" && /^postgres(ql)?:\/\/./.test(ctx.value)) return;
      ctx.issues.push({
        code: "custom",
        // The value may hold a password: never shown.
        message: "journalUrl must be a postgres:// (or postgresql://) URL",
        input: undefined,
      });
    }),
  ).optional(),
  reconcileTimeout: unlessToken(
    z.unknown().check((ctx) => {
      if (typeof ctx.value === "string" && /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/.test(ctx.value)) return;
      ctx.issues.push({
        code: "custom",
        message: `reconcileTimeout must be a duration such as "2m" or "30s", got ${show(ctx.value)}`,
        input: ctx.value,
      });
    }),
  ).optional(),
  caCertFile: nonEmpty("caCertFile"),
  alias: nonEmpty("alias"),
  httpsProxy: nonEmpty("httpsProxy"),
  httpProxy: nonEmpty("httpProxy"),
  noProxy: nonEmpty("noProxy"),
});

function nonEmpty(name: string) {
  return unlessToken(
    z.unknown().check((ctx) => {
      if (typeof ctx.value === "string" && ctx.value.trim().length > 0) return;
      ctx.issues.push({
        code: "custom",
        message: `${name} must be a non-empty string, got ${show(ctx.value)}`,
        input: ctx.value,
      });
    }),
  ).optional();
}

/**
 * The gpurental provider. Settings left out are read by the provider process from GPURENTAL_BASE_URL,
 * GPURENTAL_TOKEN and GPURENTAL_ORG_ID when Terraform runs it, so credentials from the environment
 * never end up in the synthesized configuration.
 */
export class GpurentalProvider extends provider.GpurentalProvider {
  /** The settings as given, for inspection, a null one left out: null is unset, as in Terraform. */
  public readonly props: GpurentalProviderProps;

  /** Declares the provider in `scope`. */
  public constructor(scope: Construct, id: string, props: GpurentalProviderProps = {}) {
    const read = readProps(props, PROPS);
    super(scope, id, {
      baseUrl: read.baseUrl,
      token: read.token,
      orgId: read.orgId,
      journalDir: read.journalDir,
      journalUrl: read.journalUrl,
      reconcileTimeout: read.reconcileTimeout,
      caCertFile: read.caCertFile,
      httpsProxy: read.httpsProxy,
      httpProxy: read.httpProxy,
      noProxy: read.noProxy,
      alias: read.alias,
    });
    this.props = read;
    // A literal token would sit in cdk.tf.json in plain text; tokens (variables) are fine.
    if (typeof read.token === "string" && read.token.length > 0 && !Token.isUnresolved(read.token)) {
      Annotations.of(this).addWarning(
        "token is a literal string and will be written into the synthesized configuration; leave it out and set GPURENTAL_TOKEN where Terraform runs (not a TerraformVariable: saved plans keep variable values in clear text)",
      );
    }
    if (
      typeof read.journalUrl === "string" &&
      read.journalUrl.includes("@") &&
      !Token.isUnresolved(read.journalUrl)
    ) {
      Annotations.of(this).addWarning(
        "journalUrl holds credentials and will be written into the synthesized configuration; leave it out and set GPURENTAL_JOURNAL_URL where Terraform runs",
      );
    }
    for (const [name, v] of [
      ["httpsProxy", read.httpsProxy],
      ["httpProxy", read.httpProxy],
    ] as const) {
      if (typeof v === "string" && v.includes("@") && !Token.isUnresolved(v)) {
        Annotations.of(this).addWarning(
          `${name} holds credentials and will be written into the synthesized configuration; leave it out and set ${name === "httpsProxy" ? "HTTPS_PROXY" : "HTTP_PROXY"} where Terraform runs`,
        );
      }
    }
    this.node.addValidation({ validate: () => problems("GpurentalProvider", schema, props, PROPS) });
  }
}
