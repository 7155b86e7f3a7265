// The package root: the constructs for CDK for Terraform (cdktf), the typed /v1 client and the
// embedded fake backend. The generated L1 bindings live under the "@gpurental/gpurental/providers"
// subpath; the same constructs and bindings for CDK Terrain (cdktn) under "@gpurental/gpurental/cdktn".

export * from "./constructs";
export * from "./core";
