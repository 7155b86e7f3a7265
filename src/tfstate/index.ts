// Terraform states and saved plans as gpurental's commands read them (`gpurental strays`,
// `gpurental plan-report`): the formats, the sources they come from, and the Terraform CLI runs
// that some sources need.

export * from "./json";
export * from "./plan";
export * from "./sources";
export * from "./state";
export * from "./terraform";
