// The environment the end-to-end suites run the cdktf CLI in.

/**
 * PATH and the terraform to use, with nothing read from or written to the user's own setup: no
 * prompts, colours, version checks, checkpoint calls or plugin cache. `vars` adds the suite's own
 * (HOME, TMPDIR, the CLI config, the API's address...); those left undefined are dropped.
 */
export function cdktfCliEnv(vars: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    TERRAFORM_BINARY_NAME: process.env.TERRAFORM_BINARY_NAME,
    TF_IN_AUTOMATION: "1",
    CHECKPOINT_DISABLE: "1",
    CDKTF_DISABLE_PLUGIN_CACHE_ENV: "1",
    DISABLE_VERSION_CHECK: "true",
    CI: "1",
    // Each suite's provider processes are its own, whatever the default.
    GPURENTAL_PROVIDER_RESIDENT: "off",
    FORCE_COLOR: "0",
    NO_COLOR: "1",
    ...vars,
  };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  return env;
}
