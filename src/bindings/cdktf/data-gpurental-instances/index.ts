// https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/instances
// generated from terraform resource schema

import { Construct } from 'constructs';
import * as cdktf from 'cdktf';

// Configuration

export interface DataGpurentalInstancesConfig extends cdktf.TerraformMetaArguments {
  /**
  * Also list destroyed instances. Default false.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/instances#include_destroyed DataGpurentalInstances#include_destroyed}
  */
  readonly includeDestroyed?: boolean | cdktf.IResolvable;
}
export interface DataGpurentalInstancesInstancesDeployedViaApiKey {
}

export function dataGpurentalInstancesInstancesDeployedViaApiKeyToTerraform(struct?: DataGpurentalInstancesInstancesDeployedViaApiKey): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  return {
  }
}


export function dataGpurentalInstancesInstancesDeployedViaApiKeyToHclTerraform(struct?: DataGpurentalInstancesInstancesDeployedViaApiKey): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  const attrs = {
  };
  return attrs;
}

export class DataGpurentalInstancesInstancesDeployedViaApiKeyOutputReference extends cdktf.ComplexObject {
  private isEmptyObject = false;

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  */
  public constructor(terraformResource: cdktf.IInterpolatingParent, terraformAttribute: string) {
    super(terraformResource, terraformAttribute, false);
  }

  public get internalValue(): DataGpurentalInstancesInstancesDeployedViaApiKey | undefined {
    let hasAnyValues = this.isEmptyObject;
    const internalValueResult: any = {};
    return hasAnyValues ? internalValueResult : undefined;
  }

  public set internalValue(value: DataGpurentalInstancesInstancesDeployedViaApiKey | undefined) {
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
export interface DataGpurentalInstancesInstancesOfferMachine {
}

export function dataGpurentalInstancesInstancesOfferMachineToTerraform(struct?: DataGpurentalInstancesInstancesOfferMachine): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  return {
  }
}


export function dataGpurentalInstancesInstancesOfferMachineToHclTerraform(struct?: DataGpurentalInstancesInstancesOfferMachine): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  const attrs = {
  };
  return attrs;
}

export class DataGpurentalInstancesInstancesOfferMachineOutputReference extends cdktf.ComplexObject {
  private isEmptyObject = false;

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  */
  public constructor(terraformResource: cdktf.IInterpolatingParent, terraformAttribute: string) {
    super(terraformResource, terraformAttribute, false);
  }

  public get internalValue(): DataGpurentalInstancesInstancesOfferMachine | undefined {
    let hasAnyValues = this.isEmptyObject;
    const internalValueResult: any = {};
    return hasAnyValues ? internalValueResult : undefined;
  }

  public set internalValue(value: DataGpurentalInstancesInstancesOfferMachine | undefined) {
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
export interface DataGpurentalInstancesInstancesOffer {
}

export function dataGpurentalInstancesInstancesOfferToTerraform(struct?: DataGpurentalInstancesInstancesOffer): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  return {
  }
}


export function dataGpurentalInstancesInstancesOfferToHclTerraform(struct?: DataGpurentalInstancesInstancesOffer): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  const attrs = {
  };
  return attrs;
}

export class DataGpurentalInstancesInstancesOfferOutputReference extends cdktf.ComplexObject {
  private isEmptyObject = false;

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  */
  public constructor(terraformResource: cdktf.IInterpolatingParent, terraformAttribute: string) {
    super(terraformResource, terraformAttribute, false);
  }

  public get internalValue(): DataGpurentalInstancesInstancesOffer | undefined {
    let hasAnyValues = this.isEmptyObject;
    const internalValueResult: any = {};
    return hasAnyValues ? internalValueResult : undefined;
  }

  public set internalValue(value: DataGpurentalInstancesInstancesOffer | undefined) {
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
  private _machine = new DataGpurentalInstancesInstancesOfferMachineOutputReference(this, "machine");
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
export interface DataGpurentalInstancesInstancesTemplateEnv {
}

export function dataGpurentalInstancesInstancesTemplateEnvToTerraform(struct?: DataGpurentalInstancesInstancesTemplateEnv): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  return {
  }
}


export function dataGpurentalInstancesInstancesTemplateEnvToHclTerraform(struct?: DataGpurentalInstancesInstancesTemplateEnv): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  const attrs = {
  };
  return attrs;
}

export class DataGpurentalInstancesInstancesTemplateEnvOutputReference extends cdktf.ComplexObject {
  private isEmptyObject = false;

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  * @param complexObjectIndex the index of this item in the list
  * @param complexObjectIsFromSet whether the list is wrapping a set (will add tolist() to be able to access an item via an index)
  */
  public constructor(terraformResource: cdktf.IInterpolatingParent, terraformAttribute: string, complexObjectIndex: number, complexObjectIsFromSet: boolean) {
    super(terraformResource, terraformAttribute, complexObjectIsFromSet, complexObjectIndex);
  }

  public get internalValue(): DataGpurentalInstancesInstancesTemplateEnv | undefined {
    let hasAnyValues = this.isEmptyObject;
    const internalValueResult: any = {};
    return hasAnyValues ? internalValueResult : undefined;
  }

  public set internalValue(value: DataGpurentalInstancesInstancesTemplateEnv | undefined) {
    if (value === undefined) {
      this.isEmptyObject = false;
    }
    else {
      this.isEmptyObject = Object.keys(value).length === 0;
    }
  }

  // key - computed: true, optional: false, required: false
  public get key() {
    return this.getStringAttribute('key');
  }

  // secret - computed: true, optional: false, required: false
  public get secret() {
    return this.getBooleanAttribute('secret');
  }

  // value - computed: true, optional: false, required: false
  public get value() {
    return this.getStringAttribute('value');
  }
}

export class DataGpurentalInstancesInstancesTemplateEnvList extends cdktf.ComplexList {

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  * @param wrapsSet whether the list is wrapping a set (will add tolist() to be able to access an item via an index)
  */
  constructor(protected override terraformResource: cdktf.IInterpolatingParent, protected override terraformAttribute: string, protected override wrapsSet: boolean) {
    super(terraformResource, terraformAttribute, wrapsSet)
  }

  /**
  * @param index the index of the item to return
  */
  public get(index: number): DataGpurentalInstancesInstancesTemplateEnvOutputReference {
    return new DataGpurentalInstancesInstancesTemplateEnvOutputReference(this.terraformResource, this.terraformAttribute, index, this.wrapsSet);
  }
}
export interface DataGpurentalInstancesInstancesTemplate {
}

export function dataGpurentalInstancesInstancesTemplateToTerraform(struct?: DataGpurentalInstancesInstancesTemplate): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  return {
  }
}


export function dataGpurentalInstancesInstancesTemplateToHclTerraform(struct?: DataGpurentalInstancesInstancesTemplate): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  const attrs = {
  };
  return attrs;
}

export class DataGpurentalInstancesInstancesTemplateOutputReference extends cdktf.ComplexObject {
  private isEmptyObject = false;

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  */
  public constructor(terraformResource: cdktf.IInterpolatingParent, terraformAttribute: string) {
    super(terraformResource, terraformAttribute, false);
  }

  public get internalValue(): DataGpurentalInstancesInstancesTemplate | undefined {
    let hasAnyValues = this.isEmptyObject;
    const internalValueResult: any = {};
    return hasAnyValues ? internalValueResult : undefined;
  }

  public set internalValue(value: DataGpurentalInstancesInstancesTemplate | undefined) {
    if (value === undefined) {
      this.isEmptyObject = false;
    }
    else {
      this.isEmptyObject = Object.keys(value).length === 0;
    }
  }

  // active - computed: true, optional: false, required: false
  public get active() {
    return this.getBooleanAttribute('active');
  }

  // architecture - computed: true, optional: false, required: false
  public get architecture() {
    return this.getStringAttribute('architecture');
  }

  // coming_soon - computed: true, optional: false, required: false
  public get comingSoon() {
    return this.getBooleanAttribute('coming_soon');
  }

  // created_at - computed: true, optional: false, required: false
  public get createdAt() {
    return this.getStringAttribute('created_at');
  }

  // cuda_max - computed: true, optional: false, required: false
  public get cudaMax() {
    return this.getStringAttribute('cuda_max');
  }

  // env - computed: true, optional: false, required: false
  private _env = new DataGpurentalInstancesInstancesTemplateEnvList(this, "env", false);
  public get env() {
    return this._env;
  }

  // hash_id - computed: true, optional: false, required: false
  public get hashId() {
    return this.getStringAttribute('hash_id');
  }

  // id - computed: true, optional: false, required: false
  public get id() {
    return this.getStringAttribute('id');
  }

  // image - computed: true, optional: false, required: false
  public get image() {
    return this.getStringAttribute('image');
  }

  // mode - computed: true, optional: false, required: false
  public get mode() {
    return this.getStringAttribute('mode');
  }

  // name - computed: true, optional: false, required: false
  public get name() {
    return this.getStringAttribute('name');
  }

  // onstart - computed: true, optional: false, required: false
  public get onstart() {
    return this.getStringAttribute('onstart');
  }

  // open_port - computed: true, optional: false, required: false
  public get openPort() {
    return this.getNumberAttribute('open_port');
  }

  // owner_org_id - computed: true, optional: false, required: false
  public get ownerOrgId() {
    return this.getStringAttribute('owner_org_id');
  }

  // readme - computed: true, optional: false, required: false
  public get readme() {
    return this.getStringAttribute('readme');
  }

  // recommended - computed: true, optional: false, required: false
  public get recommended() {
    return this.getBooleanAttribute('recommended');
  }

  // uses_private_registry - computed: true, optional: false, required: false
  public get usesPrivateRegistry() {
    return this.getBooleanAttribute('uses_private_registry');
  }

  // visibility - computed: true, optional: false, required: false
  public get visibility() {
    return this.getStringAttribute('visibility');
  }
}
export interface DataGpurentalInstancesInstances {
}

export function dataGpurentalInstancesInstancesToTerraform(struct?: DataGpurentalInstancesInstances): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  return {
  }
}


export function dataGpurentalInstancesInstancesToHclTerraform(struct?: DataGpurentalInstancesInstances): any {
  if (!cdktf.canInspect(struct) || cdktf.Tokenization.isResolvable(struct)) { return struct; }
  if (cdktf.isComplexElement(struct)) {
    throw new Error("A complex element was used as configuration, this is not supported: https://cdk.tf/complex-object-as-configuration");
  }
  const attrs = {
  };
  return attrs;
}

export class DataGpurentalInstancesInstancesOutputReference extends cdktf.ComplexObject {
  private isEmptyObject = false;

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  * @param complexObjectIndex the index of this item in the list
  * @param complexObjectIsFromSet whether the list is wrapping a set (will add tolist() to be able to access an item via an index)
  */
  public constructor(terraformResource: cdktf.IInterpolatingParent, terraformAttribute: string, complexObjectIndex: number, complexObjectIsFromSet: boolean) {
    super(terraformResource, terraformAttribute, complexObjectIsFromSet, complexObjectIndex);
  }

  public get internalValue(): DataGpurentalInstancesInstances | undefined {
    let hasAnyValues = this.isEmptyObject;
    const internalValueResult: any = {};
    return hasAnyValues ? internalValueResult : undefined;
  }

  public set internalValue(value: DataGpurentalInstancesInstances | undefined) {
    if (value === undefined) {
      this.isEmptyObject = false;
    }
    else {
      this.isEmptyObject = Object.keys(value).length === 0;
    }
  }

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
  private _deployedViaApiKey = new DataGpurentalInstancesInstancesDeployedViaApiKeyOutputReference(this, "deployed_via_api_key");
  public get deployedViaApiKey() {
    return this._deployedViaApiKey;
  }

  // destroyed_at - computed: true, optional: false, required: false
  public get destroyedAt() {
    return this.getStringAttribute('destroyed_at');
  }

  // disk_gb - computed: true, optional: false, required: false
  public get diskGb() {
    return this.getNumberAttribute('disk_gb');
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

  // jupyter_url - computed: true, optional: false, required: false
  public get jupyterUrl() {
    return this.getStringAttribute('jupyter_url');
  }

  // label - computed: true, optional: false, required: false
  public get label() {
    return this.getStringAttribute('label');
  }

  // offer - computed: true, optional: false, required: false
  private _offer = new DataGpurentalInstancesInstancesOfferOutputReference(this, "offer");
  public get offer() {
    return this._offer;
  }

  // offer_id - computed: true, optional: false, required: false
  public get offerId() {
    return this.getStringAttribute('offer_id');
  }

  // open_url - computed: true, optional: false, required: false
  public get openUrl() {
    return this.getStringAttribute('open_url');
  }

  // price_per_hour_micro - computed: true, optional: false, required: false
  public get pricePerHourMicro() {
    return this.getNumberAttribute('price_per_hour_micro');
  }

  // spend_micro - computed: true, optional: false, required: false
  public get spendMicro() {
    return this.getNumberAttribute('spend_micro');
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

  // suspended_hold_price_per_hour_micro - computed: true, optional: false, required: false
  public get suspendedHoldPricePerHourMicro() {
    return this.getNumberAttribute('suspended_hold_price_per_hour_micro');
  }

  // template - computed: true, optional: false, required: false
  private _template = new DataGpurentalInstancesInstancesTemplateOutputReference(this, "template");
  public get template() {
    return this._template;
  }

  // template_id - computed: true, optional: false, required: false
  public get templateId() {
    return this.getStringAttribute('template_id');
  }
}

export class DataGpurentalInstancesInstancesList extends cdktf.ComplexList {

  /**
  * @param terraformResource The parent resource
  * @param terraformAttribute The attribute on the parent resource this class is referencing
  * @param wrapsSet whether the list is wrapping a set (will add tolist() to be able to access an item via an index)
  */
  constructor(protected override terraformResource: cdktf.IInterpolatingParent, protected override terraformAttribute: string, protected override wrapsSet: boolean) {
    super(terraformResource, terraformAttribute, wrapsSet)
  }

  /**
  * @param index the index of the item to return
  */
  public get(index: number): DataGpurentalInstancesInstancesOutputReference {
    return new DataGpurentalInstancesInstancesOutputReference(this.terraformResource, this.terraformAttribute, index, this.wrapsSet);
  }
}

/**
* Represents a {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/instances gpurental_instances}
*/
export class DataGpurentalInstances extends cdktf.TerraformDataSource {

  // =================
  // STATIC PROPERTIES
  // =================
  public static readonly tfResourceType = "gpurental_instances";

  // ==============
  // STATIC Methods
  // ==============
  /**
  * Generates CDKTF code for importing a DataGpurentalInstances resource upon running "cdktf plan <stack-name>"
  * @param scope The scope in which to define this construct
  * @param importToId The construct id used in the generated config for the DataGpurentalInstances to import
  * @param importFromId The id of the existing DataGpurentalInstances that should be imported. Refer to the {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/instances#import import section} in the documentation of this resource for the id to use
  * @param provider? Optional instance of the provider where the DataGpurentalInstances to import is found
  */
  public static generateConfigForImport(scope: Construct, importToId: string, importFromId: string, provider?: cdktf.TerraformProvider) {
        return new cdktf.ImportableResource(scope, importToId, { terraformResourceType: "gpurental_instances", importId: importFromId, provider });
      }

  // ===========
  // INITIALIZER
  // ===========

  /**
  * Create a new {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/instances gpurental_instances} Data Source
  *
  * @param scope The scope in which to define this construct
  * @param id The scoped construct ID. Must be unique amongst siblings in the same scope
  * @param options DataGpurentalInstancesConfig = {}
  */
  public constructor(scope: Construct, id: string, config: DataGpurentalInstancesConfig = {}) {
    super(scope, id, {
      terraformResourceType: 'gpurental_instances',
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
    this._includeDestroyed = config.includeDestroyed;
  }

  // ==========
  // ATTRIBUTES
  // ==========

  // include_destroyed - computed: false, optional: true, required: false
  private _includeDestroyed?: boolean | cdktf.IResolvable; 
  public get includeDestroyed() {
    return this.getBooleanAttribute('include_destroyed');
  }
  public set includeDestroyed(value: boolean | cdktf.IResolvable) {
    this._includeDestroyed = value;
  }
  public resetIncludeDestroyed() {
    this._includeDestroyed = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get includeDestroyedInput() {
    return this._includeDestroyed;
  }

  // instances - computed: true, optional: false, required: false
  private _instances = new DataGpurentalInstancesInstancesList(this, "instances", false);
  public get instances() {
    return this._instances;
  }

  // =========
  // SYNTHESIS
  // =========

  protected override synthesizeAttributes(): { [name: string]: any } {
    return {
      include_destroyed: cdktf.booleanToTerraform(this._includeDestroyed),
    };
  }

  protected override synthesizeHclAttributes(): { [name: string]: any } {
    const attrs = {
      include_destroyed: {
        value: cdktf.booleanToHclTerraform(this._includeDestroyed),
        isBlock: false,
        type: "simple",
        storageClassType: "boolean",
      },
    };

    // remove undefined attributes
    return Object.fromEntries(Object.entries(attrs).filter(([_, value]) => value !== undefined && value.value !== undefined ))
  }
}
