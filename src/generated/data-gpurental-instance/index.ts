// https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/instance
// generated from terraform resource schema

import { Construct } from 'constructs';
import * as cdktf from 'cdktf';

// Configuration

export interface DataGpurentalInstanceConfig extends cdktf.TerraformMetaArguments {
  /**
  * i
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/instance#id DataGpurentalInstance#id}
  *
  * Please be aware that the id field is automatically added to all resources in Terraform providers using a Terraform provider SDK version below 2.
  * If you experience problems setting this value it might not be settable. Please take a look at the provider documentation to ensure it should be settable.
  */
  readonly id: string;
}

/**
* Represents a {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/instance gpurental_instance}
*/
export class DataGpurentalInstance extends cdktf.TerraformDataSource {

  // =================
  // STATIC PROPERTIES
  // =================
  public static readonly tfResourceType = "gpurental_instance";

  // ==============
  // STATIC Methods
  // ==============
  /**
  * Generates CDKTF code for importing a DataGpurentalInstance resource upon running "cdktf plan <stack-name>"
  * @param scope The scope in which to define this construct
  * @param importToId The construct id used in the generated config for the DataGpurentalInstance to import
  * @param importFromId The id of the existing DataGpurentalInstance that should be imported. Refer to the {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/instance#import import section} in the documentation of this resource for the id to use
  * @param provider? Optional instance of the provider where the DataGpurentalInstance to import is found
  */
  public static generateConfigForImport(scope: Construct, importToId: string, importFromId: string, provider?: cdktf.TerraformProvider) {
        return new cdktf.ImportableResource(scope, importToId, { terraformResourceType: "gpurental_instance", importId: importFromId, provider });
      }

  // ===========
  // INITIALIZER
  // ===========

  /**
  * Create a new {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/instance gpurental_instance} Data Source
  *
  * @param scope The scope in which to define this construct
  * @param id The scoped construct ID. Must be unique amongst siblings in the same scope
  * @param options DataGpurentalInstanceConfig
  */
  public constructor(scope: Construct, id: string, config: DataGpurentalInstanceConfig) {
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
    this._id = config.id;
  }

  // ==========
  // ATTRIBUTES
  // ==========

  // id - computed: false, optional: false, required: true
  private _id?: string; 
  public get id() {
    return this.getStringAttribute('id');
  }
  public set id(value: string) {
    this._id = value;
  }
  // Temporarily expose input value. Use with caution.
  public get idInput() {
    return this._id;
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

  // disk_gb - computed: true, optional: false, required: false
  public get diskGb() {
    return this.getNumberAttribute('disk_gb');
  }

  // label - computed: true, optional: false, required: false
  public get label() {
    return this.getStringAttribute('label');
  }

  // =========
  // SYNTHESIS
  // =========

  protected override synthesizeAttributes(): { [name: string]: any } {
    return {
      id: cdktf.stringToTerraform(this._id),
    };
  }

  protected override synthesizeHclAttributes(): { [name: string]: any } {
    const attrs = {
      id: {
        value: cdktf.stringToHclTerraform(this._id),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
    };

    // remove undefined attributes
    return Object.fromEntries(Object.entries(attrs).filter(([_, value]) => value !== undefined && value.value !== undefined ))
  }
}
