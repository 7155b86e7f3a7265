// The provider framework: schemas, diagnostics, definitions, plan helpers and the service that
// answers tfplugin6 RPCs.

export type { CtyValue, NumberValue } from "../plugin/cty";
export { CtyNumber, Dynamic, isUnknown, isWhollyKnown, t, toNumber, Unknown, unknown } from "../plugin/cty";
export type {
  ActionContext,
  ActionDefinition,
  ActionInvokeRequest,
  ActionPlanRequest,
  AnyActionDefinition,
  AnyDataSourceDefinition,
  AnyEphemeralResourceDefinition,
  AnyListResourceDefinition,
  AnyProviderDefinition,
  AnyResourceDefinition,
  ConfigureContext,
  ConfigureRequest,
  CreateRequest,
  DataSourceDefinition,
  DataSourceReadRequest,
  DeleteRequest,
  EphemeralPrivateRequest,
  EphemeralResourceDefinition,
  GenerateConfigRequest,
  HandlerContext,
  IdentityContext,
  ImportRequest,
  ListedObject,
  ListRequest,
  ListResourceDefinition,
  ModifyPlanRequest,
  OpenRequest,
  OpenResult,
  ProviderDefinition,
  ReadRequest,
  RenewResult,
  ResourceDefinition,
  ResourceIdentity,
  StateResult,
  StateUpgrader,
  UpdateRequest,
  ValidateConfigRequest,
  ValidateContext,
} from "./definitions";
export {
  type Diagnostic,
  Diagnostics,
  formatPath,
  type Path,
  type PathStep,
  path,
  toProtoDiagnostic,
} from "./diagnostics";
export {
  defineIdentity,
  type IdentityAttribute,
  type IdentitySchema,
  type IdentityValue,
  identityAttr,
} from "./identity";
export {
  check,
  isValidatable,
  lengthBetween,
  oneOf,
  printable,
  requiresReplace,
  requiresReplaceIf,
  unknownOnUpdate,
  useStateForUnknown,
} from "./modifiers";
export { checkPlan, nullUnknowns, type PlannedChange, planChange } from "./plan";
export { readPrivate, writePrivate } from "./private";
export {
  type Attribute,
  type AttributeFlags,
  type AttributeOptions,
  type Attributes,
  attr,
  defineSchema,
  type InferModel,
  type Known,
  type Nesting,
  type ObjectTypeOf,
  objectTypeOf,
  type PlanModifier,
  type PlanModifierRequest,
  type PlanModifierResponse,
  type Planned,
  type PlanOf,
  type Schema,
  SchemaError,
  type SchemaSpec,
  type StateOf,
  type TimeoutOperation,
  toProtoSchema,
  type Validator,
  type ValidatorContext,
} from "./schema";
export {
  createProviderService,
  fromProtoDiagnostics,
  type ProviderService,
  type ProviderServiceOptions,
  SERVER_CAPABILITIES,
} from "./server";
export { durationValidator, parseDuration, timeoutsAttribute } from "./timeouts";
export { hasWriteOnly, nullWriteOnly, writeOnlyValuePaths } from "./write-only";
