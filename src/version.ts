/** The package version, kept in step with package.json (checked by a test). */
export const version = "0.1.0";

/** The User-Agent product token of this package. */
export const userAgentProduct = `gpurental/${version}`;

/** The npm package's name (scoped: an unscoped `gpurental` on the public registry is not ours). */
export const packageName = "@gpurental/gpurental";
