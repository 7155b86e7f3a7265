// https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs
// generated from terraform resource schema

import { Construct } from 'constructs';
import * as cdktn from 'cdktn';

// Configuration

export interface GpurentalProviderConfig {
  /**
  * Base address of the gpurental API, `http` or `https`, without the `/v1` path (e.g. `https://api.gpurental.example`). Falls back to the `GPURENTAL_BASE_URL` environment variable; one of the two is required.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs#base_url GpurentalProvider#base_url}
  */
  readonly baseUrl?: string;
  /**
  * Path of a PEM file of CA certificates to trust for the API, in addition to Node's roots, the system's (`SSL_CERT_FILE` or the system bundle, `SSL_CERT_DIR` or the system directories, as Go programs read them) and `NODE_EXTRA_CA_CERTS`: for an API behind a private CA or a TLS-inspecting proxy. Falls back to `GPURENTAL_CA_CERT_FILE`. A relative path is taken from the working directory. Certificate verification cannot be turned off.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs#ca_cert_file GpurentalProvider#ca_cert_file}
  */
  readonly caCertFile?: string;
  /**
  * Proxy for an `http` base_url. Overrides the `HTTP_PROXY` (or `http_proxy`) environment variable.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs#http_proxy GpurentalProvider#http_proxy}
  */
  readonly httpProxy?: string;
  /**
  * Proxy for an `https` base_url, e.g. `http://proxy.example:3128`; credentials may be given in it (`http://user:password@proxy.example:3128`) and are never logged. Overrides the `HTTPS_PROXY` (or `https_proxy`) environment variable, which is otherwise used as Go providers use it. `localhost` and loopback addresses are never proxied.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs#https_proxy GpurentalProvider#https_proxy}
  */
  readonly httpsProxy?: string;
  /**
  * Directory of the deploy journal, where every deploy and API key creation is recorded before it is sent, so that the next apply adopts an instance (or revokes a key) that an interrupted or late request created instead of creating another. Falls back to `GPURENTAL_JOURNAL_DIR`, else `gpurental-journal` in Terraform's data directory (`TF_DATA_DIR`, default `.terraform`). A relative path is taken from the working directory. Each workspace and backend has its own file in it. Keep it with the working directory. On CI runners, which may be lost with their disk, keep the journal in PostgreSQL instead (`journal_url`). A directory that cannot be created or written (under a file, read-only) is an error when the provider is configured, so the plan fails rather than the apply.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs#journal_dir GpurentalProvider#journal_dir}
  */
  readonly journalDir?: string;
  /**
  * PostgreSQL database of the deploy journal, in place of `journal_dir`: a `postgres://user:password@host:5432/database?sslmode=verify-full` URL of the same form as the `pg` backend's `conn_str` (libpq's parameters; `sslmode` defaults to `require`, and `PGUSER`, `PGPASSWORD` and the `PGSSL*` variables fill what the URL leaves out). Every runner that reaches the database shares the journal, so a runner that is lost (a job killed, a machine gone) leaves nothing the next runner cannot adopt. The journal keeps its own schema, `gpurental_journal`, created on first use; entries are kept per workspace and backend, as in the directory. If the database cannot be reached, a create fails before anything is sent. Falls back to `GPURENTAL_JOURNAL_URL`; prefer the variable, since a password written in the configuration is kept in saved plans.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs#journal_url GpurentalProvider#journal_url}
  */
  readonly journalUrl?: string;
  /**
  * Comma-separated hosts reached without the proxy, as Go reads `NO_PROXY`: `example.com` (and its subdomains), `.example.com` (subdomains only), IPs, CIDRs such as `10.0.0.0/8`, each with an optional `:port`, or `*`. Overrides the `NO_PROXY` (or `no_proxy`) environment variable.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs#no_proxy GpurentalProvider#no_proxy}
  */
  readonly noProxy?: string;
  /**
  * ID of the organization to act in, sent as `X-Org-Id`. Falls back to `GPURENTAL_ORG_ID`. When unset, the credential's own organization is used; an organization the credential does not belong to is refused with `ORG_MISMATCH`.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs#org_id GpurentalProvider#org_id}
  */
  readonly orgId?: string;
  /**
  * How long a deploy or key creation whose answer was lost is looked for by listing before the apply fails with "outcome unknown" (it is never sent twice), e.g. `"2m"` or `"30s"`; bounded by the create timeout. Falls back to `GPURENTAL_RECONCILE_TIMEOUT`; default `"2m"`.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs#reconcile_timeout GpurentalProvider#reconcile_timeout}
  */
  readonly reconcileTimeout?: string;
  /**
  * Credential sent as `Authorization: Bearer`: an API key secret (`gpr_…`) or a signed-in session token (`gps_…`). Falls back to `GPURENTAL_TOKEN`; one of the two is required. Creating or revoking API keys (`gpurental_api_key`) needs a session token, and team keys an admin's session.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs#token GpurentalProvider#token}
  */
  readonly token?: string;
  /**
  * Alias name
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs#alias GpurentalProvider#alias}
  */
  readonly alias?: string;
}

/**
* Represents a {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs gpurental}
*/
export class GpurentalProvider extends cdktn.TerraformProvider {

  // =================
  // STATIC PROPERTIES
  // =================
  public static readonly tfResourceType = "gpurental";

  // ==============
  // STATIC Methods
  // ==============
  /**
  * Generates CDKTN code for importing a GpurentalProvider resource upon running "cdktn plan <stack-name>"
  * @param scope The scope in which to define this construct
  * @param importToId The construct id used in the generated config for the GpurentalProvider to import
  * @param importFromId The id of the existing GpurentalProvider that should be imported. Refer to the {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs#import import section} in the documentation of this resource for the id to use
  * @param provider? Optional instance of the provider where the GpurentalProvider to import is found
  */
  public static generateConfigForImport(scope: Construct, importToId: string, importFromId: string, provider?: cdktn.TerraformProvider) {
        return new cdktn.ImportableResource(scope, importToId, { terraformResourceType: "gpurental", importId: importFromId, provider });
      }

  // ===========
  // INITIALIZER
  // ===========

  /**
  * Create a new {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs gpurental} Resource
  *
  * @param scope The scope in which to define this construct
  * @param id The scoped construct ID. Must be unique amongst siblings in the same scope
  * @param options GpurentalProviderConfig = {}
  */
  public constructor(scope: Construct, id: string, config: GpurentalProviderConfig = {}) {
    super(scope, id, {
      terraformResourceType: 'gpurental',
      terraformGeneratorMetadata: {
        providerName: 'gpurental',
        providerVersion: '0.1.0',
        providerVersionConstraint: '~> 0.1'
      },
      terraformProviderSource: 'registry.terraform.io/gpurental/gpurental'
    });
    this._baseUrl = config.baseUrl;
    this._caCertFile = config.caCertFile;
    this._httpProxy = config.httpProxy;
    this._httpsProxy = config.httpsProxy;
    this._journalDir = config.journalDir;
    this._journalUrl = config.journalUrl;
    this._noProxy = config.noProxy;
    this._orgId = config.orgId;
    this._reconcileTimeout = config.reconcileTimeout;
    this._token = config.token;
    this._alias = config.alias;
  }

  // ==========
  // ATTRIBUTES
  // ==========

  // base_url - computed: false, optional: true, required: false
  private _baseUrl?: string; 
  public get baseUrl() {
    return this._baseUrl;
  }
  public set baseUrl(value: string | undefined) {
    this._baseUrl = value;
  }
  public resetBaseUrl() {
    this._baseUrl = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get baseUrlInput() {
    return this._baseUrl;
  }

  // ca_cert_file - computed: false, optional: true, required: false
  private _caCertFile?: string; 
  public get caCertFile() {
    return this._caCertFile;
  }
  public set caCertFile(value: string | undefined) {
    this._caCertFile = value;
  }
  public resetCaCertFile() {
    this._caCertFile = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get caCertFileInput() {
    return this._caCertFile;
  }

  // http_proxy - computed: false, optional: true, required: false
  private _httpProxy?: string; 
  public get httpProxy() {
    return this._httpProxy;
  }
  public set httpProxy(value: string | undefined) {
    this._httpProxy = value;
  }
  public resetHttpProxy() {
    this._httpProxy = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get httpProxyInput() {
    return this._httpProxy;
  }

  // https_proxy - computed: false, optional: true, required: false
  private _httpsProxy?: string; 
  public get httpsProxy() {
    return this._httpsProxy;
  }
  public set httpsProxy(value: string | undefined) {
    this._httpsProxy = value;
  }
  public resetHttpsProxy() {
    this._httpsProxy = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get httpsProxyInput() {
    return this._httpsProxy;
  }

  // journal_dir - computed: false, optional: true, required: false
  private _journalDir?: string; 
  public get journalDir() {
    return this._journalDir;
  }
  public set journalDir(value: string | undefined) {
    this._journalDir = value;
  }
  public resetJournalDir() {
    this._journalDir = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get journalDirInput() {
    return this._journalDir;
  }

  // journal_url - computed: false, optional: true, required: false
  private _journalUrl?: string; 
  public get journalUrl() {
    return this._journalUrl;
  }
  public set journalUrl(value: string | undefined) {
    this._journalUrl = value;
  }
  public resetJournalUrl() {
    this._journalUrl = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get journalUrlInput() {
    return this._journalUrl;
  }

  // no_proxy - computed: false, optional: true, required: false
  private _noProxy?: string; 
  public get noProxy() {
    return this._noProxy;
  }
  public set noProxy(value: string | undefined) {
    this._noProxy = value;
  }
  public resetNoProxy() {
    this._noProxy = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get noProxyInput() {
    return this._noProxy;
  }

  // org_id - computed: false, optional: true, required: false
  private _orgId?: string; 
  public get orgId() {
    return this._orgId;
  }
  public set orgId(value: string | undefined) {
    this._orgId = value;
  }
  public resetOrgId() {
    this._orgId = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get orgIdInput() {
    return this._orgId;
  }

  // reconcile_timeout - computed: false, optional: true, required: false
  private _reconcileTimeout?: string; 
  public get reconcileTimeout() {
    return this._reconcileTimeout;
  }
  public set reconcileTimeout(value: string | undefined) {
    this._reconcileTimeout = value;
  }
  public resetReconcileTimeout() {
    this._reconcileTimeout = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get reconcileTimeoutInput() {
    return this._reconcileTimeout;
  }

  // token - computed: false, optional: true, required: false
  private _token?: string; 
  public get token() {
    return this._token;
  }
  public set token(value: string | undefined) {
    this._token = value;
  }
  public resetToken() {
    this._token = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get tokenInput() {
    return this._token;
  }

  // alias - computed: false, optional: true, required: false
  private _alias?: string; 
  public override get alias() {
    return this._alias;
  }
  public override set alias(value: string | undefined) {
    this._alias = value;
  }
  public resetAlias() {
    this._alias = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get aliasInput() {
    return this._alias;
  }

  // =========
  // SYNTHESIS
  // =========

  protected override synthesizeAttributes(): { [name: string]: any } {
    return {
      base_url: cdktn.stringToTerraform(this._baseUrl),
      ca_cert_file: cdktn.stringToTerraform(this._caCertFile),
      http_proxy: cdktn.stringToTerraform(this._httpProxy),
      https_proxy: cdktn.stringToTerraform(this._httpsProxy),
      journal_dir: cdktn.stringToTerraform(this._journalDir),
      journal_url: cdktn.stringToTerraform(this._journalUrl),
      no_proxy: cdktn.stringToTerraform(this._noProxy),
      org_id: cdktn.stringToTerraform(this._orgId),
      reconcile_timeout: cdktn.stringToTerraform(this._reconcileTimeout),
      token: cdktn.stringToTerraform(this._token),
      alias: cdktn.stringToTerraform(this._alias),
    };
  }

  protected override synthesizeHclAttributes(): { [name: string]: any } {
    const attrs = {
      base_url: {
        value: cdktn.stringToHclTerraform(this._baseUrl),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      ca_cert_file: {
        value: cdktn.stringToHclTerraform(this._caCertFile),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      http_proxy: {
        value: cdktn.stringToHclTerraform(this._httpProxy),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      https_proxy: {
        value: cdktn.stringToHclTerraform(this._httpsProxy),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      journal_dir: {
        value: cdktn.stringToHclTerraform(this._journalDir),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      journal_url: {
        value: cdktn.stringToHclTerraform(this._journalUrl),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      no_proxy: {
        value: cdktn.stringToHclTerraform(this._noProxy),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      org_id: {
        value: cdktn.stringToHclTerraform(this._orgId),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      reconcile_timeout: {
        value: cdktn.stringToHclTerraform(this._reconcileTimeout),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      token: {
        value: cdktn.stringToHclTerraform(this._token),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      alias: {
        value: cdktn.stringToHclTerraform(this._alias),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
    };

    // remove undefined attributes
    return Object.fromEntries(Object.entries(attrs).filter(([_, value]) => value !== undefined && value.value !== undefined ))
  }
}
