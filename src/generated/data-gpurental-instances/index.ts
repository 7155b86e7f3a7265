// https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/instances
// generated from terraform resource schema

import { Construct } from 'constructs';
import * as cdktf from 'cdktf';

// Configuration

export interface DataGpurentalInstancesConfig extends cdktf.TerraformMetaArguments {
  /**
  * i
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/gpurental/gpurental/0.1.0/docs/data-sources/instances#include_destroyed DataGpurentalInstances#include_destroyed}
  */
  readonly includeDestroyed?: boolean | cdktf.IResolvable;
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

  // id - computed: true, optional: false, required: false
  public get id() {
    return this.getStringAttribute('id');
  }

  // status - computed: true, optional: false, required: false
  public get status() {
    return this.getStringAttribute('status');
  }

  // label - computed: true, optional: false, required: false
  public get label() {
    return this.getStringAttribute('label');
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
