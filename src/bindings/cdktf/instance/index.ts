// https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance
// generated from terraform resource schema

import { Construct } from 'constructs';
import * as cdktf from 'cdktf';

// Configuration

export interface InstanceConfig extends cdktf.TerraformMetaArguments {
  /**
  * `running` (default) or `stopped`. Changing it starts or stops the instance in place and waits. A refresh sets it from the instance's real power state, so an instance stopped outside Terraform (e.g. automatically when the balance ran out) plans a start when the configuration says `running`. A stopped instance keeps its disk and pays storage.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#desired_status Instance#desired_status}
  */
  readonly desiredStatus?: string;
  /**
  * Disk in GB, 10 to 20000 and at most the offer's machine disk. Billed per GB and hour while the instance is stopped. Changing it replaces the instance.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#disk_gb Instance#disk_gb}
  */
  readonly diskGb: number;
  /**
  * Environment variables merged over the template's, by name. Together with `secret_env` and `unset_env` at most 100 entries; names up to 256 characters, values up to 4096. A name may appear in only one of the three. `JUPYTER_TOKEN`, `GPU_COUNT`, `SERVICE_ACCESS_TOKEN` and template variables carrying the access token are always set by the platform (a warning says so). A null value (an optional variable left unset) leaves its variable out, as if the name were not in the map; it never drops the template's variable (that is `unset_env`). Changing it replaces the instance.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#env Instance#env}
  */
  readonly env?: { [key: string]: string };
  /**
  * Label shown in the console, at most 64 characters, without control characters (line breaks, tabs, ESC, NUL) or bidirectional overrides, which no console or terminal can show as they are (an error at plan). Unset (or `""`) for no label. Changing it replaces the instance.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#label Instance#label}
  */
  readonly label?: string;
  /**
  * The market filter the offer is chosen by when the instance is created or replaced; set either this or `offer_id`. The cheapest matching offer a deploy of this template and `disk_gb` would not be refused on is rented; see the resource description. Changing it replaces the instance only when the instance no longer satisfies it.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#offer_filter Instance#offer_filter}
  */
  readonly offerFilter?: InstanceOfferFilter;
  /**
  * ID of the offer to pin (see the `gpurental_offers` data source); set either this or `offer_filter`. With `offer_filter`, the ID of the offer the provider chose when the instance was created, kept as long as the instance lives. Changing a configured `offer_id` replaces the instance.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#offer_id Instance#offer_id}
  */
  readonly offerId?: string;
  /**
  * Environment variables like `env`, whose values are sent as secrets and hidden in Terraform's output (a null value leaves its variable out, as in `env`). They are kept in state (and in saved plans) in clear text: protect the state, or use `secret_env_wo` with Terraform 1.11 or later. Changing them replaces the instance.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#secret_env Instance#secret_env}
  */
  readonly secretEnv?: { [key: string]: string };
  /**
  * Secret environment variables like `secret_env`, but write-only (Terraform 1.11 or later): the values are sent to the API when the instance is deployed and are never stored in the plan or the state. Feed them from an `ephemeral` variable (a non-ephemeral variable's value is kept in saved plan files). Terraform cannot see them change: a change of the values alone plans nothing; change `secret_env_wo_version` to redeploy the instance (a replacement, which destroys its disk) with the current values. Use this rather than `secret_env` wherever Terraform 1.11 or later runs the configuration.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#secret_env_wo Instance#secret_env_wo}
  */
  readonly secretEnvWo?: { [key: string]: string };
  /**
  * Required with `secret_env_wo`: any whole number, stored in state. Changing it replaces the instance, deploying it with the current `secret_env_wo` values; that is the only way to rotate them, since env is only sent when an instance is deployed.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#secret_env_wo_version Instance#secret_env_wo_version}
  */
  readonly secretEnvWoVersion?: number;
  /**
  * ID of the SSH key to authorize. With a session or a personal API key: one of the caller's own keys; with a team key: a key of any current member. Without it SSH is impossible. Changing it replaces the instance.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#ssh_key_id Instance#ssh_key_id}
  */
  readonly sshKeyId?: string;
  /**
  * Whether `access_token`, `jupyter_url` and `open_url` are kept in the state (default `true`, as before). With `false` they are always null in plans and states (the API puts the token into both addresses), and the run that needs them reads them with the `gpurental_instance_access` ephemeral resource (Terraform 1.10 or later); `jupyter_address`, the SSH attributes and everything else stay. Changing it updates the state in place, never the instance. An import reads the instance before the configuration is known, so an imported state (and a saved plan that imports) holds them until the first apply records `false`: apply right after importing.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#store_access_secrets Instance#store_access_secrets}
  */
  readonly storeAccessSecrets?: boolean | cdktf.IResolvable;
  /**
  * ID of the template to run: a system or public template, or one of the organization's own (see `gpurental_templates`). Changing it replaces the instance.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#template_id Instance#template_id}
  */
  readonly templateId: string;
  /**
  * Time limits for the resource's operations, e.g. `create = "30m"`.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#timeouts Instance#timeouts}
  */
  readonly timeouts?: InstanceTimeouts;
  /**
  * Names of template environment variables to drop. A null element is ignored. Changing it replaces the instance.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#unset_env Instance#unset_env}
  */
  readonly unsetEnv?: string[];
}
export interface InstanceDeployedViaApiKey {
}

export function instanceDeployedViaApiKeyToTerraform(struct?: InstanceDeployedViaApiKey): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  return {
  }
}


export function instanceDeployedViaApiKeyToHclTerraform(struct?: InstanceDeployedViaApiKey): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  const attrs = {
  };
  return attrs;
}

export class InstanceDeployedViaApiKeyOutputReference extends cdktf.ComplexObject {
  private isEmptyObject = false;

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  */
  public constructor(terraformResource: cdktf.IInterpolatingParent, terraformAttribute: string) {
    super(terraformResource, terraformAttribute, false);
  }

  public get internalValue(): InstanceDeployedViaApiKey | undefined {
    let hasAnyValues = this.isEmptyObject;
    const internalValueResult: any = {};
    return hasAnyValues ? internalValueResult : undefined;
  }

  public set internalValue(value: InstanceDeployedViaApiKey | undefined) {
    if (value === undefined) {
      this.isEmptyObject = false;
    }
    else {
      this.isEmptyObject = Object.keys(value).length === 0;
    }
  }

  // id - computed: true, optional: false, required: false
  public get id() {
    return this.getStringAttribute('id');
  }

  // kind - computed: true, optional: false, required: false
  public get kind() {
    return this.getStringAttribute('kind');
  }

  // name - computed: true, optional: false, required: false
  public get name() {
    return this.getStringAttribute('name');
  }

  // prefix - computed: true, optional: false, required: false
  public get prefix() {
    return this.getStringAttribute('prefix');
  }

  // revoked - computed: true, optional: false, required: false
  public get revoked() {
    return this.getBooleanAttribute('revoked');
  }
}
export interface InstanceOffer {
}

export function instanceOfferToTerraform(struct?: InstanceOffer): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  return {
  }
}


export function instanceOfferToHclTerraform(struct?: InstanceOffer): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  const attrs = {
  };
  return attrs;
}

export class InstanceOfferOutputReference extends cdktf.ComplexObject {
  private isEmptyObject = false;

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  */
  public constructor(terraformResource: cdktf.IInterpolatingParent, terraformAttribute: string) {
    super(terraformResource, terraformAttribute, false);
  }

  public get internalValue(): InstanceOffer | undefined {
    let hasAnyValues = this.isEmptyObject;
    const internalValueResult: any = {};
    return hasAnyValues ? internalValueResult : undefined;
  }

  public set internalValue(value: InstanceOffer | undefined) {
    if (value === undefined) {
      this.isEmptyObject = false;
    }
    else {
      this.isEmptyObject = Object.keys(value).length === 0;
    }
  }

  // gpu_model - computed: true, optional: false, required: false
  public get gpuModel() {
    return this.getStringAttribute('gpu_model');
  }

  // num_gpus - computed: true, optional: false, required: false
  public get numGpus() {
    return this.getNumberAttribute('num_gpus');
  }

  // region - computed: true, optional: false, required: false
  public get region() {
    return this.getStringAttribute('region');
  }
}
export interface InstanceOfferFilter {
  /**
  * GPU model, matched exactly but case-insensitively, e.g. `"RTX 4090"`.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#gpu_model Instance#gpu_model}
  */
  readonly gpuModel: string;
  /**
  * Highest GPU price per hour, in micro-yuan (1 ¥ = 1,000,000), e.g. `3000000` for ¥3.00/h. Unset: no limit.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#max_price_per_hour_micro Instance#max_price_per_hour_micro}
  */
  readonly maxPricePerHourMicro?: number;
  /**
  * Number of GPUs the offer rents together.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#num_gpus Instance#num_gpus}
  */
  readonly numGpus: number;
  /**
  * Region of the machine, matched exactly but case-insensitively, e.g. `"cn-east-1"`. Unset: any region.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#region Instance#region}
  */
  readonly region?: string;
}

export function instanceOfferFilterToTerraform(struct?: InstanceOfferFilter | cdktf.IResolvable): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  return {
    gpu_model: cdktf.stringToTerraform(struct!.gpuModel),
    max_price_per_hour_micro: cdktf.numberToTerraform(struct!.maxPricePerHourMicro),
    num_gpus: cdktf.numberToTerraform(struct!.numGpus),
    region: cdktf.stringToTerraform(struct!.region),
  }
}


export function instanceOfferFilterToHclTerraform(struct?: InstanceOfferFilter | cdktf.IResolvable): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  const attrs = {
    gpu_model: {
      value: cdktf.stringToHclTerraform(struct!.gpuModel),
      isBlock: false,
      type: "simple",
      storageClassType: "string",
    },
    max_price_per_hour_micro: {
      value: cdktf.numberToHclTerraform(struct!.maxPricePerHourMicro),
      isBlock: false,
      type: "simple",
      storageClassType: "number",
    },
    num_gpus: {
      value: cdktf.numberToHclTerraform(struct!.numGpus),
      isBlock: false,
      type: "simple",
      storageClassType: "number",
    },
    region: {
      value: cdktf.stringToHclTerraform(struct!.region),
      isBlock: false,
      type: "simple",
      storageClassType: "string",
    },
  };

  // remove undefined attributes
  return Object.fromEntries(Object.entries(attrs).filter(([_, value]) => value !== undefined && value.value !== undefined));
}

export class InstanceOfferFilterOutputReference extends cdktf.ComplexObject {
  private isEmptyObject = false;
  private resolvableValue?: cdktf.IResolvable;

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  */
  public constructor(terraformResource: cdktf.IInterpolatingParent, terraformAttribute: string) {
    super(terraformResource, terraformAttribute, false);
  }

  public get internalValue(): InstanceOfferFilter | cdktf.IResolvable | undefined {
    if (this.resolvableValue) {
      return this.resolvableValue;
    }
    let hasAnyValues = this.isEmptyObject;
    const internalValueResult: any = {};
    if (this._gpuModel !== undefined) {
      hasAnyValues = true;
      internalValueResult.gpuModel = this._gpuModel;
    }
    if (this._maxPricePerHourMicro !== undefined) {
      hasAnyValues = true;
      internalValueResult.maxPricePerHourMicro = this._maxPricePerHourMicro;
    }
    if (this._numGpus !== undefined) {
      hasAnyValues = true;
      internalValueResult.numGpus = this._numGpus;
    }
    if (this._region !== undefined) {
      hasAnyValues = true;
      internalValueResult.region = this._region;
    }
    return hasAnyValues ? internalValueResult : undefined;
  }

  public set internalValue(value: InstanceOfferFilter | cdktf.IResolvable | undefined) {
    if (value === undefined) {
      this.isEmptyObject = false;
      this.resolvableValue = undefined;
      this._gpuModel = undefined;
      this._maxPricePerHourMicro = undefined;
      this._numGpus = undefined;
      this._region = undefined;
    }
    else if (cdktf.Tokenization.isResolvable(value)) {
      this.isEmptyObject = false;
      this.resolvableValue = value;
    }
    else {
      this.isEmptyObject = Object.keys(value).length === 0;
      this.resolvableValue = undefined;
      this._gpuModel = value.gpuModel;
      this._maxPricePerHourMicro = value.maxPricePerHourMicro;
      this._numGpus = value.numGpus;
      this._region = value.region;
    }
  }

  // gpu_model - computed: false, optional: false, required: true
  private _gpuModel?: string; 
  public get gpuModel() {
    return this.getStringAttribute('gpu_model');
  }
  public set gpuModel(value: string) {
    this._gpuModel = value;
  }
  // Temporarily expose input value. Use with caution.
  public get gpuModelInput() {
    return this._gpuModel;
  }

  // max_price_per_hour_micro - computed: false, optional: true, required: false
  private _maxPricePerHourMicro?: number; 
  public get maxPricePerHourMicro() {
    return this.getNumberAttribute('max_price_per_hour_micro');
  }
  public set maxPricePerHourMicro(value: number) {
    this._maxPricePerHourMicro = value;
  }
  public resetMaxPricePerHourMicro() {
    this._maxPricePerHourMicro = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get maxPricePerHourMicroInput() {
    return this._maxPricePerHourMicro;
  }

  // num_gpus - computed: false, optional: false, required: true
  private _numGpus?: number; 
  public get numGpus() {
    return this.getNumberAttribute('num_gpus');
  }
  public set numGpus(value: number) {
    this._numGpus = value;
  }
  // Temporarily expose input value. Use with caution.
  public get numGpusInput() {
    return this._numGpus;
  }

  // region - computed: false, optional: true, required: false
  private _region?: string; 
  public get region() {
    return this.getStringAttribute('region');
  }
  public set region(value: string) {
    this._region = value;
  }
  public resetRegion() {
    this._region = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get regionInput() {
    return this._region;
  }
}
export interface InstanceTimeouts {
  /**
  * How long to wait for create to finish (default `20m`).
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#create Instance#create}
  */
  readonly create?: string;
  /**
  * How long to wait for delete to finish (default `20m`).
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#delete Instance#delete}
  */
  readonly delete?: string;
  /**
  * How long to wait for update to finish (default `40m`).
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#update Instance#update}
  */
  readonly update?: string;
}

export function instanceTimeoutsToTerraform(struct?: InstanceTimeouts | cdktf.IResolvable): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  return {
    create: cdktf.stringToTerraform(struct!.create),
    delete: cdktf.stringToTerraform(struct!.delete),
    update: cdktf.stringToTerraform(struct!.update),
  }
}


export function instanceTimeoutsToHclTerraform(struct?: InstanceTimeouts | cdktf.IResolvable): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  const attrs = {
    create: {
      value: cdktf.stringToHclTerraform(struct!.create),
      isBlock: false,
      type: "simple",
      storageClassType: "string",
    },
    delete: {
      value: cdktf.stringToHclTerraform(struct!.delete),
      isBlock: false,
      type: "simple",
      storageClassType: "string",
    },
    update: {
      value: cdktf.stringToHclTerraform(struct!.update),
      isBlock: false,
      type: "simple",
      storageClassType: "string",
    },
  };

  // remove undefined attributes
  return Object.fromEntries(Object.entries(attrs).filter(([_, value]) => value !== undefined && value.value !== undefined));
}

export class InstanceTimeoutsOutputReference extends cdktf.ComplexObject {
  private isEmptyObject = false;
  private resolvableValue?: cdktf.IResolvable;

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  */
  public constructor(terraformResource: cdktf.IInterpolatingParent, terraformAttribute: string) {
    super(terraformResource, terraformAttribute, false);
  }

  public get internalValue(): InstanceTimeouts | cdktf.IResolvable | undefined {
    if (this.resolvableValue) {
      return this.resolvableValue;
    }
    let hasAnyValues = this.isEmptyObject;
    const internalValueResult: any = {};
    if (this._create !== undefined) {
      hasAnyValues = true;
      internalValueResult.create = this._create;
    }
    if (this._delete !== undefined) {
      hasAnyValues = true;
      internalValueResult.delete = this._delete;
    }
    if (this._update !== undefined) {
      hasAnyValues = true;
      internalValueResult.update = this._update;
    }
    return hasAnyValues ? internalValueResult : undefined;
  }

  public set internalValue(value: InstanceTimeouts | cdktf.IResolvable | undefined) {
    if (value === undefined) {
      this.isEmptyObject = false;
      this.resolvableValue = undefined;
      this._create = undefined;
      this._delete = undefined;
      this._update = undefined;
    }
    else if (cdktf.Tokenization.isResolvable(value)) {
      this.isEmptyObject = false;
      this.resolvableValue = value;
    }
    else {
      this.isEmptyObject = Object.keys(value).length === 0;
      this.resolvableValue = undefined;
      this._create = value.create;
      this._delete = value.delete;
      this._update = value.update;
    }
  }

  // create - computed: false, optional: true, required: false
  private _create?: string; 
  public get create() {
    return this.getStringAttribute('create');
  }
  public set create(value: string) {
    this._create = value;
  }
  public resetCreate() {
    this._create = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get createInput() {
    return this._create;
  }

  // delete - computed: false, optional: true, required: false
  private _delete?: string; 
  public get delete() {
    return this.getStringAttribute('delete');
  }
  public set delete(value: string) {
    this._delete = value;
  }
  public resetDelete() {
    this._delete = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get deleteInput() {
    return this._delete;
  }

  // update - computed: false, optional: true, required: false
  private _update?: string; 
  public get update() {
    return this.getStringAttribute('update');
  }
  public set update(value: string) {
    this._update = value;
  }
  public resetUpdate() {
    this._update = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get updateInput() {
    return this._update;
  }
}

/**
* Represents a {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance gpurental_instance}
*/
export class Instance extends cdktf.TerraformResource {

  // =================
  // STATIC PROPERTIES
  // =================
  public static readonly tfResourceType = "gpurental_instance";

  // ==============
  // STATIC Methods
  // ==============
  /**
  * Generates CDKTF code for importing a Instance resource upon running "cdktf plan <stack-name>"
  * @param scope The scope in which to define this construct
  * @param importToId The construct id used in the generated config for the Instance to import
  * @param importFromId The id of the existing Instance that should be imported. Refer to the {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#import import section} in the documentation of this resource for the id to use
  * @param provider? Optional instance of the provider where the Instance to import is found
  */
  public static generateConfigForImport(scope: Construct, importToId: string, importFromId: string, provider?: cdktf.TerraformProvider) {
        return new cdktf.ImportableResource(scope, importToId, { terraformResourceType: "gpurental_instance", importId: importFromId, provider });
      }

  // ===========
  // INITIALIZER
  // ===========

  /**
  * Create a new {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance gpurental_instance} Resource
  *
  * @param scope The scope in which to define this construct
  * @param id The scoped construct ID. Must be unique amongst siblings in the same scope
  * @param options InstanceConfig
  */
  public constructor(scope: Construct, id: string, config: InstanceConfig) {
    super(scope, id, {
      terraformResourceType: 'gpurental_instance',
      terraformGeneratorMetadata: {
        providerName: 'gpurental',
        providerVersion: '0.1.0',
        providerVersionConstraint: '~> 0.1'
      },
      provider: config.provider,
      dependsOn: config.dependsOn,
      count: config.count,
      lifecycle: config.lifecycle,
      provisioners: config.provisioners,
      connection: config.connection,
      forEach: config.forEach
    });
    this._desiredStatus = config.desiredStatus;
    this._diskGb = config.diskGb;
    this._env = config.env;
    this._label = config.label;
    this._offerFilter.internalValue = config.offerFilter;
    this._offerId = config.offerId;
    this._secretEnv = config.secretEnv;
    this._secretEnvWo = config.secretEnvWo;
    this._secretEnvWoVersion = config.secretEnvWoVersion;
    this._sshKeyId = config.sshKeyId;
    this._storeAccessSecrets = config.storeAccessSecrets;
    this._templateId = config.templateId;
    this._timeouts.internalValue = config.timeouts;
    this._unsetEnv = config.unsetEnv;
  }

  // ==========
  // ATTRIBUTES
  // ==========

  // access_token - computed: true, optional: false, required: false
  public get accessToken() {
    return this.getStringAttribute('access_token');
  }

  // allowed_actions - computed: true, optional: false, required: false
  public get allowedActions() {
    return this.getListAttribute('allowed_actions');
  }

  // created_at - computed: true, optional: false, required: false
  public get createdAt() {
    return this.getStringAttribute('created_at');
  }

  // deployed_by - computed: true, optional: false, required: false
  public get deployedBy() {
    return this.getStringAttribute('deployed_by');
  }

  // deployed_via_api_key - computed: true, optional: false, required: false
  private _deployedViaApiKey = new InstanceDeployedViaApiKeyOutputReference(this, "deployed_via_api_key");
  public get deployedViaApiKey() {
    return this._deployedViaApiKey;
  }

  // desired_status - computed: true, optional: true, required: false
  private _desiredStatus?: string; 
  public get desiredStatus() {
    return this.getStringAttribute('desired_status');
  }
  public set desiredStatus(value: string) {
    this._desiredStatus = value;
  }
  public resetDesiredStatus() {
    this._desiredStatus = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get desiredStatusInput() {
    return this._desiredStatus;
  }

  // destroyed_at - computed: true, optional: false, required: false
  public get destroyedAt() {
    return this.getStringAttribute('destroyed_at');
  }

  // disk_gb - computed: false, optional: false, required: true
  private _diskGb?: number; 
  public get diskGb() {
    return this.getNumberAttribute('disk_gb');
  }
  public set diskGb(value: number) {
    this._diskGb = value;
  }
  // Temporarily expose input value. Use with caution.
  public get diskGbInput() {
    return this._diskGb;
  }

  // env - computed: false, optional: true, required: false
  private _env?: { [key: string]: string }; 
  public get env() {
    return this.getStringMapAttribute('env');
  }
  public set env(value: { [key: string]: string }) {
    this._env = value;
  }
  public resetEnv() {
    this._env = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get envInput() {
    return this._env;
  }

  // error_code - computed: true, optional: false, required: false
  public get errorCode() {
    return this.getStringAttribute('error_code');
  }

  // error_message - computed: true, optional: false, required: false
  public get errorMessage() {
    return this.getStringAttribute('error_message');
  }

  // gpu_release - computed: true, optional: false, required: false
  public get gpuRelease() {
    return this.getStringAttribute('gpu_release');
  }

  // gpu_release_requested_at - computed: true, optional: false, required: false
  public get gpuReleaseRequestedAt() {
    return this.getStringAttribute('gpu_release_requested_at');
  }

  // gpus_released - computed: true, optional: false, required: false
  public get gpusReleased() {
    return this.getBooleanAttribute('gpus_released');
  }

  // hold_price_per_hour_micro - computed: true, optional: false, required: false
  public get holdPricePerHourMicro() {
    return this.getNumberAttribute('hold_price_per_hour_micro');
  }

  // id - computed: true, optional: false, required: false
  public get id() {
    return this.getStringAttribute('id');
  }

  // jupyter_address - computed: true, optional: false, required: false
  public get jupyterAddress() {
    return this.getStringAttribute('jupyter_address');
  }

  // jupyter_url - computed: true, optional: false, required: false
  public get jupyterUrl() {
    return this.getStringAttribute('jupyter_url');
  }

  // label - computed: false, optional: true, required: false
  private _label?: string; 
  public get label() {
    return this.getStringAttribute('label');
  }
  public set label(value: string) {
    this._label = value;
  }
  public resetLabel() {
    this._label = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get labelInput() {
    return this._label;
  }

  // offer - computed: true, optional: false, required: false
  private _offer = new InstanceOfferOutputReference(this, "offer");
  public get offer() {
    return this._offer;
  }

  // offer_filter - computed: false, optional: true, required: false
  private _offerFilter = new InstanceOfferFilterOutputReference(this, "offer_filter");
  public get offerFilter() {
    return this._offerFilter;
  }
  public putOfferFilter(value: InstanceOfferFilter) {
    this._offerFilter.internalValue = value;
  }
  public resetOfferFilter() {
    this._offerFilter.internalValue = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get offerFilterInput() {
    return this._offerFilter.internalValue;
  }

  // offer_id - computed: true, optional: true, required: false
  private _offerId?: string; 
  public get offerId() {
    return this.getStringAttribute('offer_id');
  }
  public set offerId(value: string) {
    this._offerId = value;
  }
  public resetOfferId() {
    this._offerId = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get offerIdInput() {
    return this._offerId;
  }

  // open_url - computed: true, optional: false, required: false
  public get openUrl() {
    return this.getStringAttribute('open_url');
  }

  // price_per_hour_micro - computed: true, optional: false, required: false
  public get pricePerHourMicro() {
    return this.getNumberAttribute('price_per_hour_micro');
  }

  // secret_env - computed: false, optional: true, required: false
  private _secretEnv?: { [key: string]: string }; 
  public get secretEnv() {
    return this.getStringMapAttribute('secret_env');
  }
  public set secretEnv(value: { [key: string]: string }) {
    this._secretEnv = value;
  }
  public resetSecretEnv() {
    this._secretEnv = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get secretEnvInput() {
    return this._secretEnv;
  }

  // secret_env_wo - computed: false, optional: true, required: false
  private _secretEnvWo?: { [key: string]: string }; 
  public get secretEnvWo() {
    return this.getStringMapAttribute('secret_env_wo');
  }
  public set secretEnvWo(value: { [key: string]: string }) {
    this._secretEnvWo = value;
  }
  public resetSecretEnvWo() {
    this._secretEnvWo = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get secretEnvWoInput() {
    return this._secretEnvWo;
  }

  // secret_env_wo_version - computed: false, optional: true, required: false
  private _secretEnvWoVersion?: number; 
  public get secretEnvWoVersion() {
    return this.getNumberAttribute('secret_env_wo_version');
  }
  public set secretEnvWoVersion(value: number) {
    this._secretEnvWoVersion = value;
  }
  public resetSecretEnvWoVersion() {
    this._secretEnvWoVersion = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get secretEnvWoVersionInput() {
    return this._secretEnvWoVersion;
  }

  // spend_micro - computed: true, optional: false, required: false
  public get spendMicro() {
    return this.getNumberAttribute('spend_micro');
  }

  // ssh_host - computed: true, optional: false, required: false
  public get sshHost() {
    return this.getStringAttribute('ssh_host');
  }

  // ssh_key_id - computed: false, optional: true, required: false
  private _sshKeyId?: string; 
  public get sshKeyId() {
    return this.getStringAttribute('ssh_key_id');
  }
  public set sshKeyId(value: string) {
    this._sshKeyId = value;
  }
  public resetSshKeyId() {
    this._sshKeyId = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get sshKeyIdInput() {
    return this._sshKeyId;
  }

  // ssh_port - computed: true, optional: false, required: false
  public get sshPort() {
    return this.getNumberAttribute('ssh_port');
  }

  // ssh_user - computed: true, optional: false, required: false
  public get sshUser() {
    return this.getStringAttribute('ssh_user');
  }

  // started_at - computed: true, optional: false, required: false
  public get startedAt() {
    return this.getStringAttribute('started_at');
  }

  // status - computed: true, optional: false, required: false
  public get status() {
    return this.getStringAttribute('status');
  }

  // status_changed_at - computed: true, optional: false, required: false
  public get statusChangedAt() {
    return this.getStringAttribute('status_changed_at');
  }

  // stop_hold_price_per_hour_micro - computed: true, optional: false, required: false
  public get stopHoldPricePerHourMicro() {
    return this.getNumberAttribute('stop_hold_price_per_hour_micro');
  }

  // stop_releases_gpus - computed: true, optional: false, required: false
  public get stopReleasesGpus() {
    return this.getBooleanAttribute('stop_releases_gpus');
  }

  // storage_price_per_gb_hour_micro - computed: true, optional: false, required: false
  public get storagePricePerGbHourMicro() {
    return this.getNumberAttribute('storage_price_per_gb_hour_micro');
  }

  // store_access_secrets - computed: true, optional: true, required: false
  private _storeAccessSecrets?: boolean | cdktf.IResolvable; 
  public get storeAccessSecrets() {
    return this.getBooleanAttribute('store_access_secrets');
  }
  public set storeAccessSecrets(value: boolean | cdktf.IResolvable) {
    this._storeAccessSecrets = value;
  }
  public resetStoreAccessSecrets() {
    this._storeAccessSecrets = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get storeAccessSecretsInput() {
    return this._storeAccessSecrets;
  }

  // suspended_hold_price_per_hour_micro - computed: true, optional: false, required: false
  public get suspendedHoldPricePerHourMicro() {
    return this.getNumberAttribute('suspended_hold_price_per_hour_micro');
  }

  // template_id - computed: false, optional: false, required: true
  private _templateId?: string; 
  public get templateId() {
    return this.getStringAttribute('template_id');
  }
  public set templateId(value: string) {
    this._templateId = value;
  }
  // Temporarily expose input value. Use with caution.
  public get templateIdInput() {
    return this._templateId;
  }

  // timeouts - computed: false, optional: true, required: false
  private _timeouts = new InstanceTimeoutsOutputReference(this, "timeouts");
  public get timeouts() {
    return this._timeouts;
  }
  public putTimeouts(value: InstanceTimeouts) {
    this._timeouts.internalValue = value;
  }
  public resetTimeouts() {
    this._timeouts.internalValue = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get timeoutsInput() {
    return this._timeouts.internalValue;
  }

  // unset_env - computed: false, optional: true, required: false
  private _unsetEnv?: string[]; 
  public get unsetEnv() {
    return cdktf.Fn.tolist(this.getListAttribute('unset_env'));
  }
  public set unsetEnv(value: string[]) {
    this._unsetEnv = value;
  }
  public resetUnsetEnv() {
    this._unsetEnv = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get unsetEnvInput() {
    return this._unsetEnv;
  }

  // =========
  // SYNTHESIS
  // =========

  protected override synthesizeAttributes(): { [name: string]: any } {
    return {
      desired_status: cdktf.stringToTerraform(this._desiredStatus),
      disk_gb: cdktf.numberToTerraform(this._diskGb),
      env: cdktf.hashMapper(cdktf.stringToTerraform)(this._env),
      label: cdktf.stringToTerraform(this._label),
      offer_filter: instanceOfferFilterToTerraform(this._offerFilter.internalValue),
      offer_id: cdktf.stringToTerraform(this._offerId),
      secret_env: cdktf.hashMapper(cdktf.stringToTerraform)(this._secretEnv),
      secret_env_wo: cdktf.hashMapper(cdktf.stringToTerraform)(this._secretEnvWo),
      secret_env_wo_version: cdktf.numberToTerraform(this._secretEnvWoVersion),
      ssh_key_id: cdktf.stringToTerraform(this._sshKeyId),
      store_access_secrets: cdktf.booleanToTerraform(this._storeAccessSecrets),
      template_id: cdktf.stringToTerraform(this._templateId),
      timeouts: instanceTimeoutsToTerraform(this._timeouts.internalValue),
      unset_env: cdktf.listMapper(cdktf.stringToTerraform, false)(this._unsetEnv),
    };
  }

  protected override synthesizeHclAttributes(): { [name: string]: any } {
    const attrs = {
      desired_status: {
        value: cdktf.stringToHclTerraform(this._desiredStatus),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      disk_gb: {
        value: cdktf.numberToHclTerraform(this._diskGb),
        isBlock: false,
        type: "simple",
        storageClassType: "number",
      },
      env: {
        value: cdktf.hashMapperHcl(cdktf.stringToHclTerraform)(this._env),
        isBlock: false,
        type: "map",
        storageClassType: "stringMap",
      },
      label: {
        value: cdktf.stringToHclTerraform(this._label),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      offer_filter: {
        value: instanceOfferFilterToHclTerraform(this._offerFilter.internalValue),
        isBlock: true,
        type: "struct",
        storageClassType: "InstanceOfferFilter",
      },
      offer_id: {
        value: cdktf.stringToHclTerraform(this._offerId),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      secret_env: {
        value: cdktf.hashMapperHcl(cdktf.stringToHclTerraform)(this._secretEnv),
        isBlock: false,
        type: "map",
        storageClassType: "stringMap",
      },
      secret_env_wo: {
        value: cdktf.hashMapperHcl(cdktf.stringToHclTerraform)(this._secretEnvWo),
        isBlock: false,
        type: "map",
        storageClassType: "stringMap",
      },
      secret_env_wo_version: {
        value: cdktf.numberToHclTerraform(this._secretEnvWoVersion),
        isBlock: false,
        type: "simple",
        storageClassType: "number",
      },
      ssh_key_id: {
        value: cdktf.stringToHclTerraform(this._sshKeyId),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      store_access_secrets: {
        value: cdktf.booleanToHclTerraform(this._storeAccessSecrets),
        isBlock: false,
        type: "simple",
        storageClassType: "boolean",
      },
      template_id: {
        value: cdktf.stringToHclTerraform(this._templateId),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      timeouts: {
        value: instanceTimeoutsToHclTerraform(this._timeouts.internalValue),
        isBlock: true,
        type: "struct",
        storageClassType: "InstanceTimeouts",
      },
      unset_env: {
        value: cdktf.listMapperHcl(cdktf.stringToHclTerraform, false)(this._unsetEnv),
        isBlock: false,
        type: "set",
        storageClassType: "stringList",
      },
    };

    // remove undefined attributes
    return Object.fromEntries(Object.entries(attrs).filter(([_, value]) => value !== undefined && value.value !== undefined ))
  }
}
