// https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offer
// generated from terraform resource schema

import { Construct } from 'constructs';
import * as cdktf from 'cdktf';

// Configuration

export interface DataGpurentalOfferConfig extends cdktf.TerraformMetaArguments {
  /**
  * ID of the offer.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offer#id DataGpurentalOffer#id}
  *
  * Please be aware that the id field is automatically added to all resources in Terraform providers using a Terraform provider SDK version below 2.
  * If you experience problems setting this value it might not be settable. Please take a look at the provider documentation to ensure it should be settable.
  */
  readonly id: string;
}
export interface DataGpurentalOfferMachine {
}

export function dataGpurentalOfferMachineToTerraform(struct?: DataGpurentalOfferMachine): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  return {
  }
}


export function dataGpurentalOfferMachineToHclTerraform(struct?: DataGpurentalOfferMachine): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  const attrs = {
  };
  return attrs;
}

export class DataGpurentalOfferMachineOutputReference extends cdktf.ComplexObject {
  private isEmptyObject = false;

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  */
  public constructor(terraformResource: cdktf.IInterpolatingParent, terraformAttribute: string) {
    super(terraformResource, terraformAttribute, false);
  }

  public get internalValue(): DataGpurentalOfferMachine | undefined {
    let hasAnyValues = this.isEmptyObject;
    const internalValueResult: any = {};
    return hasAnyValues ? internalValueResult : undefined;
  }

  public set internalValue(value: DataGpurentalOfferMachine | undefined) {
    if (value === undefined) {
      this.isEmptyObject = false;
    }
    else {
      this.isEmptyObject = Object.keys(value).length === 0;
    }
  }

  // architecture - computed: true, optional: false, required: false
  public get architecture() {
    return this.getStringAttribute('architecture');
  }

  // available_disk_gb - computed: true, optional: false, required: false
  public get availableDiskGb() {
    return this.getNumberAttribute('available_disk_gb');
  }

  // cuda_version - computed: true, optional: false, required: false
  public get cudaVersion() {
    return this.getStringAttribute('cuda_version');
  }

  // disk_gb - computed: true, optional: false, required: false
  public get diskGb() {
    return this.getNumberAttribute('disk_gb');
  }

  // gpu_release_supported - computed: true, optional: false, required: false
  public get gpuReleaseSupported() {
    return this.getBooleanAttribute('gpu_release_supported');
  }

  // id - computed: true, optional: false, required: false
  public get id() {
    return this.getStringAttribute('id');
  }

  // vm_capable - computed: true, optional: false, required: false
  public get vmCapable() {
    return this.getBooleanAttribute('vm_capable');
  }
}

/**
* Represents a {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offer gpurental_offer}
*/
export class DataGpurentalOffer extends cdktf.TerraformDataSource {

  // =================
  // STATIC PROPERTIES
  // =================
  public static readonly tfResourceType = "gpurental_offer";

  // ==============
  // STATIC Methods
  // ==============
  /**
  * Generates CDKTF code for importing a DataGpurentalOffer resource upon running "cdktf plan <stack-name>"
  * @param scope The scope in which to define this construct
  * @param importToId The construct id used in the generated config for the DataGpurentalOffer to import
  * @param importFromId The id of the existing DataGpurentalOffer that should be imported. Refer to the {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offer#import import section} in the documentation of this resource for the id to use
  * @param provider? Optional instance of the provider where the DataGpurentalOffer to import is found
  */
  public static generateConfigForImport(scope: Construct, importToId: string, importFromId: string, provider?: cdktf.TerraformProvider) {
        return new cdktf.ImportableResource(scope, importToId, { terraformResourceType: "gpurental_offer", importId: importFromId, provider });
      }

  // ===========
  // INITIALIZER
  // ===========

  /**
  * Create a new {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offer gpurental_offer} Data Source
  *
  * @param scope The scope in which to define this construct
  * @param id The scoped construct ID. Must be unique amongst siblings in the same scope
  * @param options DataGpurentalOfferConfig
  */
  public constructor(scope: Construct, id: string, config: DataGpurentalOfferConfig) {
    super(scope, id, {
      terraformResourceType: 'gpurental_offer',
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

  // availability - computed: true, optional: false, required: false
  public get availability() {
    return this.getStringAttribute('availability');
  }

  // created_at - computed: true, optional: false, required: false
  public get createdAt() {
    return this.getStringAttribute('created_at');
  }

  // free_units - computed: true, optional: false, required: false
  public get freeUnits() {
    return this.getNumberAttribute('free_units');
  }

  // gpu_model - computed: true, optional: false, required: false
  public get gpuModel() {
    return this.getStringAttribute('gpu_model');
  }

  // hold_price_per_hour_micro - computed: true, optional: false, required: false
  public get holdPricePerHourMicro() {
    return this.getNumberAttribute('hold_price_per_hour_micro');
  }

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

  // machine - computed: true, optional: false, required: false
  private _machine = new DataGpurentalOfferMachineOutputReference(this, "machine");
  public get machine() {
    return this._machine;
  }

  // next_maintenance - computed: true, optional: false, required: false
  public get nextMaintenance() {
    return this.getStringAttribute('next_maintenance');
  }

  // num_gpus - computed: true, optional: false, required: false
  public get numGpus() {
    return this.getNumberAttribute('num_gpus');
  }

  // price_per_hour_micro - computed: true, optional: false, required: false
  public get pricePerHourMicro() {
    return this.getNumberAttribute('price_per_hour_micro');
  }

  // region - computed: true, optional: false, required: false
  public get region() {
    return this.getStringAttribute('region');
  }

  // storage_price_per_gb_hour_micro - computed: true, optional: false, required: false
  public get storagePricePerGbHourMicro() {
    return this.getNumberAttribute('storage_price_per_gb_hour_micro');
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
