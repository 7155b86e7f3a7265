// The Terraform versions the protocol driver plays (driver.ts), and what each one speaks and does.
// The facts below decide which protocol file a version's client is built from and which calls it
// makes; the notes cite where each comes from in Terraform's own code.
//
// What each version does, read from github.com/hashicorp/terraform at its tag (files and lines):
//
// Every version (v1.11.4, v1.12.0, v1.14.0, v1.16.0-rc2)
// - One provider process per walk: the first process of a command only loads the schema, and
//   later ones take it from the schema cache when the provider sets get_provider_schema_optional
//   (internal/plugin6/grpc_provider.go GetProviderSchema: v1.11.4 78, v1.12.0 80, v1.14.0 80,
//   v1.16.0-rc2 96, the cache test a few lines in). Closing a process calls
//   plugin.GRPCController/Shutdown (go-plugin grpc_client.go Close).
// - A managed object in state: UpgradeResourceState, then ReadResource, then PlanResourceChange
//   (grpc_provider.go UpgradeResourceState v1.11.4 282, ReadResource 374, PlanResourceChange 432);
//   apply plans again with the configuration wholly known, then ApplyResourceChange (526).
//   ConfigureProvider comes once per process before any of them (329); its client capabilities
//   carry deferral_allowed only in apply (internal/terraform/eval_context_builtin.go
//   ClientCapabilities: v1.12.0 617, v1.14.0 636; write_only_attributes_allowed always true).
//
// Terraform 1.12 (protocol 6.9, tfplugin6.9.proto)
// - GetProviderSchema calls GetResourceIdentitySchemas right after the schema answer, in the same
//   load (grpc_provider.go v1.12.0 131; UNIMPLEMENTED there means "no identities").
// - ReadResource sends current_identity, PlanResourceChange prior_identity, ApplyResourceChange
//   planned_identity, and each answer's identity is validated and stored (grpc_provider.go v1.12.0
//   ReadResource 465, PlanResourceChange 550, ApplyResourceChange 672; internal/terraform/
//   node_resource_abstract_instance.go validateIdentity).
// - An import block with `identity` calls ImportResourceState with identity and no id, requires
//   an identity back, then refreshes (ReadResource with that identity) and plans
//   (internal/terraform/node_resource_plan_instance.go v1.12.0 importState 581, identity branch
//   662, "didn't return an identity" 758, refresh 801).
// - UpgradeResourceIdentity only when the stored identity version differs from the schema's
//   (internal/terraform/upgrade_resource_state.go v1.12.0 upgradeResourceIdentity 155, equal
//   versions return at 173): never for this provider's version 0.
//
// Terraform 1.14 (protocol 6.10, tfplugin6.10.proto)
// - `terraform query`: per list block, ValidateListResourceConfig then ListResource, a stream read
//   until its end or the block's limit (default 100), then cancelled
//   (internal/terraform/node_resource_plan_instance_query.go v1.14.0 95 and 110;
//   grpc_provider.go v1.14.0 ValidateListResourceConfig 348 sends only type_name and the list
//   block's `config`, ListResource 1302 stops receiving at the limit). With
//   `-generate-config-out`, include_resource is forced true (query node, "implicitly set
//   include_resource"), and each result's configuration comes from GenerateResourceConfig when
//   the provider sets generate_resource_config (node_resource_plan_instance.go v1.14.0
//   generateHCLListResourceDef 916, generateResourceConfig 967, capability test 995). Terraform
//   1.14.0 sends that request without the state (grpc_provider.go v1.14.0 GenerateResourceConfig
//   922: `State: nil`); 1.14.1 sends it (commit c9d024062a, "set state in proto req").
//   Terraform renders the answer as HCL itself (internal/genconfig/generate_config.go): see
//   genconfig.ts beside this file.
// - `terraform apply -invoke=action.T.N`: ValidateActionConfig in the validate walk
//   (internal/terraform/node_action_validate.go v1.14.0 116), PlanAction in the plan walk
//   (node_action_invoke.go v1.14.0 182), InvokeAction in the apply walk, its events read until the
//   stream ends: progress messages, then one completion whose error diagnostics fail the apply
//   (node_action_trigger_instance_apply.go v1.14.0 150; grpc_provider.go v1.14.0 PlanAction 1585,
//   InvokeAction 1630, ValidateActionConfig 1702).
//
// Terraform 1.16 (protocol 6.11, tfplugin6.11.proto)
// - Client capabilities add store_planned_private and computed_blocks_allowed
//   (eval_context_builtin.go v1.16.0-rc2 679-680); the apply-time PlanResourceChange sends the
//   plan-time planned_private back (node_resource_abstract_instance.go v1.16.0-rc2 877-882 and
//   1035).
// - Actions may run on before_destroy: PlanAction while planning the destroy, InvokeAction before
//   the destroy's ApplyResourceChange (node_resource_abstract_instance.go v1.16.0-rc2 3302;
//   action_trigger_instance_apply.go v1.16.0-rc2 118). Query and action RPCs as in 1.14
//   (node_resource_plan_instance_query.go v1.16.0-rc2 113 and 128, node_action.go 219,
//   node_action_invoke.go 271).

/** The Terraform versions the driver plays, each with its protocol. */
export type TerraformVersion = "1.11" | "1.12" | "1.14" | "1.16";

/** What one version speaks and does, as the driver needs it. */
export interface VersionFacts {
  /** The vendored protocol file the version's plugin client is built from. */
  proto: string;
  /** Calls GetResourceIdentitySchemas in every schema load (1.12+). */
  identity: boolean;
  /** Knows list resources and actions (1.14+). */
  query: boolean;
  /** Sends store_planned_private / computed_blocks_allowed and planned_private in re-plans (1.16). */
  v611: boolean;
  /** The version ConfigureProvider reports. */
  terraformVersion: string;
}
/** What each version speaks and does. */
export const VERSIONS: Readonly<Record<TerraformVersion, VersionFacts>> = {
  "1.11": {
    proto: "tfplugin6.8.proto",
    identity: false,
    query: false,
    v611: false,
    terraformVersion: "1.11.4",
  },
  "1.12": {
    proto: "tfplugin6.9.proto",
    identity: true,
    query: false,
    v611: false,
    terraformVersion: "1.12.2",
  },
  "1.14": {
    proto: "tfplugin6.10.proto",
    identity: true,
    query: true,
    v611: false,
    terraformVersion: "1.14.1",
  },
  "1.16": {
    proto: "tfplugin6.11.proto",
    identity: true,
    query: true,
    v611: true,
    terraformVersion: "1.16.0",
  },
};
