// https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offers
// generated from terraform resource schema

import { Construct } from 'constructs';
import * as cdktn from 'cdktn';

// Configuration

export interface DataGpurentalOffersConfig extends cdktn.TerraformMetaArguments {
  /**
  * Leave out the offers a deploy of this template with this disk would be refused on, as far as the offers say (sold out, machine disk, VM capability, CUDA); offers whose machine goes into maintenance within 24 hours come last.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offers#deployable_with DataGpurentalOffers#deployable_with}
  */
  readonly deployableWith?: DataGpurentalOffersDeployableWith;
  /**
  * Only offers of this GPU model, matched exactly but case-insensitively, e.g. `"RTX 4090"`.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offers#gpu_model DataGpurentalOffers#gpu_model}
  */
  readonly gpuModel?: string;
  /**
  * Also list sold-out and withdrawn offers. Default false; cannot be true with `deployable_with`.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offers#include_unavailable DataGpurentalOffers#include_unavailable}
  */
  readonly includeUnavailable?: boolean | cdktn.IResolvable;
  /**
  * Only offers whose GPU price per hour is at most this, in micro-yuan (1 ¥ = 1,000,000).
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offers#max_price_per_hour_micro DataGpurentalOffers#max_price_per_hour_micro}
  */
  readonly maxPricePerHourMicro?: number;
  /**
  * Only offers renting exactly this many GPUs.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offers#num_gpus DataGpurentalOffers#num_gpus}
  */
  readonly numGpus?: number;
  /**
  * Only offers in this region, matched exactly but case-insensitively, e.g. `"cn-east-1"`.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offers#region DataGpurentalOffers#region}
  */
  readonly region?: string;
  /**
  * `price_asc` (cheapest first) or `price_desc`. Unset: newest first.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offers#sort DataGpurentalOffers#sort}
  */
  readonly sort?: string;
}
export interface DataGpurentalOffersDeployableWith {
  /**
  * Disk the deploy would request, in GB.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offers#disk_gb DataGpurentalOffers#disk_gb}
  */
  readonly diskGb: number;
  /**
  * ID of the template the deploy would run.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offers#template_id DataGpurentalOffers#template_id}
  */
  readonly templateId: string;
}

export function dataGpurentalOffersDeployableWithToTerraform(struct?: DataGpurentalOffersDeployableWith | cdktn.IResolvable): any {
  if (!cdktn.canInspect(struct) || cdktn.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktn.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdktn.io/docs/concepts/resources#references");
  }
  return {
    disk_gb: cdktn.numberToTerraform(struct!.diskGb),
    template_id: cdktn.stringToTerraform(struct!.templateId),
  }
}


export function dataGpurentalOffersDeployableWithToHclTerraform(struct?: DataGpurentalOffersDeployableWith | cdktn.IResolvable): any {
  if (!cdktn.canInspect(struct) || cdktn.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktn.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdktn.io/docs/concepts/resources#references");
  }
  const attrs = {
    disk_gb: {
      value: cdktn.numberToHclTerraform(struct!.diskGb),
      isBlock: false,
      type: "simple",
      storageClassType: "number",
    },
    template_id: {
      value: cdktn.stringToHclTerraform(struct!.templateId),
      isBlock: false,
      type: "simple",
      storageClassType: "string",
    },
  };

  // remove undefined attributes
  return Object.fromEntries(Object.entries(attrs).filter(([_, value]) => value !== undefined && value.value !== undefined));
}

export class DataGpurentalOffersDeployableWithOutputReference extends cdktn.ComplexObject {
  private isEmptyObject = false;
  private resolvableValue?: cdktn.IResolvable;

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  */
  public constructor(terraformResource: cdktn.IInterpolatingParent, terraformAttribute: string) {
    super(terraformResource, terraformAttribute, false);
  }

  public get internalValue(): DataGpurentalOffersDeployableWith | cdktn.IResolvable | undefined {
    if (this.resolvableValue) {
      return this.resolvableValue;
    }
    let hasAnyValues = this.isEmptyObject;
    const internalValueResult: any = {};
    if (this._diskGb !== undefined) {
      hasAnyValues = true;
      internalValueResult.diskGb = this._diskGb;
    }
    if (this._templateId !== undefined) {
      hasAnyValues = true;
      internalValueResult.templateId = this._templateId;
    }
    return hasAnyValues ? internalValueResult : undefined;
  }

  public set internalValue(value: DataGpurentalOffersDeployableWith | cdktn.IResolvable | undefined) {
    if (value === undefined) {
      this.isEmptyObject = false;
      this.resolvableValue = undefined;
      this._diskGb = undefined;
      this._templateId = undefined;
    }
    else if (cdktn.Tokenization.isResolvable(value)) {
      this.isEmptyObject = false;
      this.resolvableValue = value;
    }
    else {
      this.isEmptyObject = Object.keys(value).length === 0;
      this.resolvableValue = undefined;
      this._diskGb = value.diskGb;
      this._templateId = value.templateId;
    }
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
}
export interface DataGpurentalOffersOffersMachine {
}

export function dataGpurentalOffersOffersMachineToTerraform(struct?: DataGpurentalOffersOffersMachine): any {
  if (!cdktn.canInspect(struct) || cdktn.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktn.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdktn.io/docs/concepts/resources#references");
  }
  return {
  }
}


export function dataGpurentalOffersOffersMachineToHclTerraform(struct?: DataGpurentalOffersOffersMachine): any {
  if (!cdktn.canInspect(struct) || cdktn.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktn.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdktn.io/docs/concepts/resources#references");
  }
  const attrs = {
  };
  return attrs;
}

export class DataGpurentalOffersOffersMachineOutputReference extends cdktn.ComplexObject {
  private isEmptyObject = false;

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  */
  public constructor(terraformResource: cdktn.IInterpolatingParent, terraformAttribute: string) {
    super(terraformResource, terraformAttribute, false);
  }

  public get internalValue(): DataGpurentalOffersOffersMachine | undefined {
    let hasAnyValues = this.isEmptyObject;
    const internalValueResult: any = {};
    return hasAnyValues ? internalValueResult : undefined;
  }

  public set internalValue(value: DataGpurentalOffersOffersMachine | undefined) {
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
export interface DataGpurentalOffersOffers {
}

export function dataGpurentalOffersOffersToTerraform(struct?: DataGpurentalOffersOffers): any {
  if (!cdktn.canInspect(struct) || cdktn.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktn.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdktn.io/docs/concepts/resources#references");
  }
  return {
  }
}


export function dataGpurentalOffersOffersToHclTerraform(struct?: DataGpurentalOffersOffers): any {
  if (!cdktn.canInspect(struct) || cdktn.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktn.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdktn.io/docs/concepts/resources#references");
  }
  const attrs = {
  };
  return attrs;
}

export class DataGpurentalOffersOffersOutputReference extends cdktn.ComplexObject {
  private isEmptyObject = false;

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  * @param complexObjectIndex the index of this item in the list
  * @param complexObjectIsFromSet whether the list is wrapping a set (will add tolist() to be able to access an item via an index)
  */
  public constructor(terraformResource: cdktn.IInterpolatingParent, terraformAttribute: string, complexObjectIndex: number, complexObjectIsFromSet: boolean) {
    super(terraformResource, terraformAttribute, complexObjectIsFromSet, complexObjectIndex);
  }

  public get internalValue(): DataGpurentalOffersOffers | undefined {
    let hasAnyValues = this.isEmptyObject;
    const internalValueResult: any = {};
    return hasAnyValues ? internalValueResult : undefined;
  }

  public set internalValue(value: DataGpurentalOffersOffers | undefined) {
    if (value === undefined) {
      this.isEmptyObject = false;
    }
    else {
      this.isEmptyObject = Object.keys(value).length === 0;
    }
  }

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

  // id - computed: true, optional: false, required: false
  public get id() {
    return this.getStringAttribute('id');
  }

  // machine - computed: true, optional: false, required: false
  private _machine = new DataGpurentalOffersOffersMachineOutputReference(this, "machine");
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
}

export class DataGpurentalOffersOffersList extends cdktn.ComplexList {

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  * @param wrapsSet whether the list is wrapping a set (will add tolist() to be able to access an item via an index)
  */
  constructor(terraformResource: cdktn.IInterpolatingParent, terraformAttribute: string, wrapsSet: boolean) {
    super(terraformResource, terraformAttribute, wrapsSet);
  }

  /**
  * @param index the index of the item to return
  */
  public get(index: number): DataGpurentalOffersOffersOutputReference {
    return new DataGpurentalOffersOffersOutputReference(this.terraformResource, this.terraformAttribute, index, this.wrapsSet);
  }
}

/**
* Represents a {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offers gpurental_offers}
*/
export class DataGpurentalOffers extends cdktn.TerraformDataSource {

  // =================
  // STATIC PROPERTIES
  // =================
  public static readonly tfResourceType = "gpurental_offers";

  // ==============
  // STATIC Methods
  // ==============
  /**
  * Generates CDKTN code for importing a DataGpurentalOffers resource upon running "cdktn plan <stack-name>"
  * @param scope The scope in which to define this construct
  * @param importToId The construct id used in the generated config for the DataGpurentalOffers to import
  * @param importFromId The id of the existing DataGpurentalOffers that should be imported. Refer to the {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offers#import import section} in the documentation of this resource for the id to use
  * @param provider? Optional instance of the provider where the DataGpurentalOffers to import is found
  */
  public static generateConfigForImport(scope: Construct, importToId: string, importFromId: string, provider?: cdktn.TerraformProvider) {
        return new cdktn.ImportableResource(scope, importToId, { terraformResourceType: "gpurental_offers", importId: importFromId, provider });
      }

  // ===========
  // INITIALIZER
  // ===========

  /**
  * Create a new {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/offers gpurental_offers} Data Source
  *
  * @param scope The scope in which to define this construct
  * @param id The scoped construct ID. Must be unique amongst siblings in the same scope
  * @param options DataGpurentalOffersConfig = {}
  */
  public constructor(scope: Construct, id: string, config: DataGpurentalOffersConfig = {}) {
    super(scope, id, {
      terraformResourceType: 'gpurental_offers',
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
    this._deployableWith.internalValue = config.deployableWith;
    this._gpuModel = config.gpuModel;
    this._includeUnavailable = config.includeUnavailable;
    this._maxPricePerHourMicro = config.maxPricePerHourMicro;
    this._numGpus = config.numGpus;
    this._region = config.region;
    this._sort = config.sort;
  }

  // ==========
  // ATTRIBUTES
  // ==========

  // deployable_with - computed: false, optional: true, required: false
  private _deployableWith = new DataGpurentalOffersDeployableWithOutputReference(this, "deployable_with");
  public get deployableWith() {
    return this._deployableWith;
  }
  public putDeployableWith(value: DataGpurentalOffersDeployableWith) {
    this._deployableWith.internalValue = value;
  }
  public resetDeployableWith() {
    this._deployableWith.internalValue = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get deployableWithInput() {
    return this._deployableWith.internalValue;
  }

  // gpu_model - computed: false, optional: true, required: false
  private _gpuModel?: string; 
  public get gpuModel() {
    return this.getStringAttribute('gpu_model');
  }
  public set gpuModel(value: string) {
    this._gpuModel = value;
  }
  public resetGpuModel() {
    this._gpuModel = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get gpuModelInput() {
    return this._gpuModel;
  }

  // include_unavailable - computed: false, optional: true, required: false
  private _includeUnavailable?: boolean | cdktn.IResolvable; 
  public get includeUnavailable() {
    return this.getBooleanAttribute('include_unavailable');
  }
  public set includeUnavailable(value: boolean | cdktn.IResolvable) {
    this._includeUnavailable = value;
  }
  public resetIncludeUnavailable() {
    this._includeUnavailable = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get includeUnavailableInput() {
    return this._includeUnavailable;
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

  // num_gpus - computed: false, optional: true, required: false
  private _numGpus?: number; 
  public get numGpus() {
    return this.getNumberAttribute('num_gpus');
  }
  public set numGpus(value: number) {
    this._numGpus = value;
  }
  public resetNumGpus() {
    this._numGpus = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get numGpusInput() {
    return this._numGpus;
  }

  // offers - computed: true, optional: false, required: false
  private _offers = new DataGpurentalOffersOffersList(this, "offers", false);
  public get offers() {
    return this._offers;
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

  // sort - computed: false, optional: true, required: false
  private _sort?: string; 
  public get sort() {
    return this.getStringAttribute('sort');
  }
  public set sort(value: string) {
    this._sort = value;
  }
  public resetSort() {
    this._sort = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get sortInput() {
    return this._sort;
  }

  // =========
  // SYNTHESIS
  // =========

  protected override synthesizeAttributes(): { [name: string]: any } {
    return {
      deployable_with: dataGpurentalOffersDeployableWithToTerraform(this._deployableWith.internalValue),
      gpu_model: cdktn.stringToTerraform(this._gpuModel),
      include_unavailable: cdktn.booleanToTerraform(this._includeUnavailable),
      max_price_per_hour_micro: cdktn.numberToTerraform(this._maxPricePerHourMicro),
      num_gpus: cdktn.numberToTerraform(this._numGpus),
      region: cdktn.stringToTerraform(this._region),
      sort: cdktn.stringToTerraform(this._sort),
    };
  }

  protected override synthesizeHclAttributes(): { [name: string]: any } {
    const attrs = {
      deployable_with: {
        value: dataGpurentalOffersDeployableWithToHclTerraform(this._deployableWith.internalValue),
        isBlock: true,
        type: "struct",
        storageClassType: "DataGpurentalOffersDeployableWith",
      },
      gpu_model: {
        value: cdktn.stringToHclTerraform(this._gpuModel),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      include_unavailable: {
        value: cdktn.booleanToHclTerraform(this._includeUnavailable),
        isBlock: false,
        type: "simple",
        storageClassType: "boolean",
      },
      max_price_per_hour_micro: {
        value: cdktn.numberToHclTerraform(this._maxPricePerHourMicro),
        isBlock: false,
        type: "simple",
        storageClassType: "number",
      },
      num_gpus: {
        value: cdktn.numberToHclTerraform(this._numGpus),
        isBlock: false,
        type: "simple",
        storageClassType: "number",
      },
      region: {
        value: cdktn.stringToHclTerraform(this._region),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      sort: {
        value: cdktn.stringToHclTerraform(this._sort),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
    };

    // remove undefined attributes
    return Object.fromEntries(Object.entries(attrs).filter(([_, value]) => value !== undefined && value.value !== undefined ))
  }
}
