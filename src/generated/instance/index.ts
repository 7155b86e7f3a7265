// https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance
// generated from terraform resource schema

import { Construct } from 'constructs';
import * as cdktf from 'cdktf';

// Configuration

export interface InstanceConfig extends cdktf.TerraformMetaArguments {
  /**
  * o
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#offer_id Instance#offer_id}
  */
  readonly offerId: string;
  /**
  * t
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#template_id Instance#template_id}
  */
  readonly templateId: string;
  /**
  * d
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#disk_gb Instance#disk_gb}
  */
  readonly diskGb: number;
  /**
  * l
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#label Instance#label}
  */
  readonly label?: string;
  /**
  * k
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#ssh_key_id Instance#ssh_key_id}
  */
  readonly sshKeyId?: string;
  /**
  * e
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#env Instance#env}
  */
  readonly env?: { [key: string]: string };
  /**
  * e
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#secret_env Instance#secret_env}
  */
  readonly secretEnv?: { [key: string]: string };
  /**
  * e
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#unset_env Instance#unset_env}
  */
  readonly unsetEnv?: string[];
  /**
  * d
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#desired_status Instance#desired_status}
  */
  readonly desiredStatus?: string;
  /**
  * timeouts block
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#timeouts Instance#timeouts}
  */
  readonly timeouts?: InstanceTimeouts;
}
export interface InstanceTimeouts {
  /**
  * c
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#create Instance#create}
  */
  readonly create?: string;
  /**
  * u
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#update Instance#update}
  */
  readonly update?: string;
  /**
  * d
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/resources/instance#delete Instance#delete}
  */
  readonly delete?: string;
}

export function instanceTimeoutsToTerraform(struct?: InstanceTimeouts | cdktf.IResolvable): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  return {
    create: cdktf.stringToTerraform(struct!.create),
    update: cdktf.stringToTerraform(struct!.update),
    delete: cdktf.stringToTerraform(struct!.delete),
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
    update: {
      value: cdktf.stringToHclTerraform(struct!.update),
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
    if (this._update !== undefined) {
      hasAnyValues = true;
      internalValueResult.update = this._update;
    }
    if (this._delete !== undefined) {
      hasAnyValues = true;
      internalValueResult.delete = this._delete;
    }
    return hasAnyValues ? internalValueResult : undefined;
  }

  public set internalValue(value: InstanceTimeouts | cdktf.IResolvable | undefined) {
    if (value === undefined) {
      this.isEmptyObject = false;
      this.resolvableValue = undefined;
      this._create = undefined;
      this._update = undefined;
      this._delete = undefined;
    }
    else if (cdktf.Tokenization.isResolvable(value)) {
      this.isEmptyObject = false;
      this.resolvableValue = value;
    }
    else {
      this.isEmptyObject = Object.keys(value).length === 0;
      this.resolvableValue = undefined;
      this._create = value.create;
      this._update = value.update;
      this._delete = value.delete;
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
    this._offerId = config.offerId;
    this._templateId = config.templateId;
    this._diskGb = config.diskGb;
    this._label = config.label;
    this._sshKeyId = config.sshKeyId;
    this._env = config.env;
    this._secretEnv = config.secretEnv;
    this._unsetEnv = config.unsetEnv;
    this._desiredStatus = config.desiredStatus;
    this._timeouts.internalValue = config.timeouts;
  }

  // ==========
  // ATTRIBUTES
  // ==========

  // offer_id - computed: false, optional: false, required: true
  private _offerId?: string; 
  public get offerId() {
    return this.getStringAttribute('offer_id');
  }
  public set offerId(value: string) {
    this._offerId = value;
  }
  // Temporarily expose input value. Use with caution.
  public get offerIdInput() {
    return this._offerId;
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

  // id - computed: true, optional: false, required: false
  public get id() {
    return this.getStringAttribute('id');
  }

  // status - computed: true, optional: false, required: false
  public get status() {
    return this.getStringAttribute('status');
  }

  // ssh_host - computed: true, optional: false, required: false
  public get sshHost() {
    return this.getStringAttribute('ssh_host');
  }

  // ssh_port - computed: true, optional: false, required: false
  public get sshPort() {
    return this.getNumberAttribute('ssh_port');
  }

  // ssh_user - computed: true, optional: false, required: false
  public get sshUser() {
    return this.getStringAttribute('ssh_user');
  }

  // jupyter_url - computed: true, optional: false, required: false
  public get jupyterUrl() {
    return this.getStringAttribute('jupyter_url');
  }

  // open_url - computed: true, optional: false, required: false
  public get openUrl() {
    return this.getStringAttribute('open_url');
  }

  // access_token - computed: true, optional: false, required: false
  public get accessToken() {
    return this.getStringAttribute('access_token');
  }

  // error_code - computed: true, optional: false, required: false
  public get errorCode() {
    return this.getStringAttribute('error_code');
  }

  // error_message - computed: true, optional: false, required: false
  public get errorMessage() {
    return this.getStringAttribute('error_message');
  }

  // allowed_actions - computed: true, optional: false, required: false
  public get allowedActions() {
    return this.getListAttribute('allowed_actions');
  }

  // gpus_released - computed: true, optional: false, required: false
  public get gpusReleased() {
    return this.getBooleanAttribute('gpus_released');
  }

  // gpu_release - computed: true, optional: false, required: false
  public get gpuRelease() {
    return this.getStringAttribute('gpu_release');
  }

  // gpu_release_requested_at - computed: true, optional: false, required: false
  public get gpuReleaseRequestedAt() {
    return this.getStringAttribute('gpu_release_requested_at');
  }

  // price_per_hour_micro - computed: true, optional: false, required: false
  public get pricePerHourMicro() {
    return this.getNumberAttribute('price_per_hour_micro');
  }

  // storage_price_per_gb_hour_micro - computed: true, optional: false, required: false
  public get storagePricePerGbHourMicro() {
    return this.getNumberAttribute('storage_price_per_gb_hour_micro');
  }

  // hold_price_per_hour_micro - computed: true, optional: false, required: false
  public get holdPricePerHourMicro() {
    return this.getNumberAttribute('hold_price_per_hour_micro');
  }

  // stop_releases_gpus - computed: true, optional: false, required: false
  public get stopReleasesGpus() {
    return this.getBooleanAttribute('stop_releases_gpus');
  }

  // created_at - computed: true, optional: false, required: false
  public get createdAt() {
    return this.getStringAttribute('created_at');
  }

  // started_at - computed: true, optional: false, required: false
  public get startedAt() {
    return this.getStringAttribute('started_at');
  }

  // status_changed_at - computed: true, optional: false, required: false
  public get statusChangedAt() {
    return this.getStringAttribute('status_changed_at');
  }

  // destroyed_at - computed: true, optional: false, required: false
  public get destroyedAt() {
    return this.getStringAttribute('destroyed_at');
  }

  // spend_micro - computed: true, optional: false, required: false
  public get spendMicro() {
    return this.getNumberAttribute('spend_micro');
  }

  // deployed_by - computed: true, optional: false, required: false
  public get deployedBy() {
    return this.getStringAttribute('deployed_by');
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

  // =========
  // SYNTHESIS
  // =========

  protected override synthesizeAttributes(): { [name: string]: any } {
    return {
      offer_id: cdktf.stringToTerraform(this._offerId),
      template_id: cdktf.stringToTerraform(this._templateId),
      disk_gb: cdktf.numberToTerraform(this._diskGb),
      label: cdktf.stringToTerraform(this._label),
      ssh_key_id: cdktf.stringToTerraform(this._sshKeyId),
      env: cdktf.hashMapper(cdktf.stringToTerraform)(this._env),
      secret_env: cdktf.hashMapper(cdktf.stringToTerraform)(this._secretEnv),
      unset_env: cdktf.listMapper(cdktf.stringToTerraform, false)(this._unsetEnv),
      desired_status: cdktf.stringToTerraform(this._desiredStatus),
      timeouts: instanceTimeoutsToTerraform(this._timeouts.internalValue),
    };
  }

  protected override synthesizeHclAttributes(): { [name: string]: any } {
    const attrs = {
      offer_id: {
        value: cdktf.stringToHclTerraform(this._offerId),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      template_id: {
        value: cdktf.stringToHclTerraform(this._templateId),
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
      label: {
        value: cdktf.stringToHclTerraform(this._label),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      ssh_key_id: {
        value: cdktf.stringToHclTerraform(this._sshKeyId),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      env: {
        value: cdktf.hashMapperHcl(cdktf.stringToHclTerraform)(this._env),
        isBlock: false,
        type: "map",
        storageClassType: "stringMap",
      },
      secret_env: {
        value: cdktf.hashMapperHcl(cdktf.stringToHclTerraform)(this._secretEnv),
        isBlock: false,
        type: "map",
        storageClassType: "stringMap",
      },
      unset_env: {
        value: cdktf.listMapperHcl(cdktf.stringToHclTerraform, false)(this._unsetEnv),
        isBlock: false,
        type: "set",
        storageClassType: "stringList",
      },
      desired_status: {
        value: cdktf.stringToHclTerraform(this._desiredStatus),
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
    };

    // remove undefined attributes
    return Object.fromEntries(Object.entries(attrs).filter(([_, value]) => value !== undefined && value.value !== undefined ))
  }
}
