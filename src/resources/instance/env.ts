import type { TemplateEnvVar } from "../../api/schemas";
import type { Diagnostic } from "../../framework";

// env, secret_env, secret_env_wo and unset_env are views of the one env_overrides array of the
// deploy request (contract 4.2). Splitting them lets Terraform mark the secret values sensitive
// (secret_env) or keep them out of plan and state altogether (secret_env_wo, write-only), and lets a
// user drop a template variable without inventing a sentinel value.

/** One entry of the deploy request's env_overrides (contract 4.2). */
export interface EnvOverride {
  key: string;
  /** null drops the template's variable of that key. */
  value: string | null;
  secret: boolean;
}

/**
 * A map argument as configured. A null value means "not set": the entry is left out, as if the key
 * were not in the map (`env = { OPTIONAL = var.maybe }` with a null variable), never sent as a
 * value or as an unset of the template's variable.
 */
export type EnvMap = Readonly<Record<string, string | null>>;

/** The env-related arguments of gpurental_instance; null or undefined when unset. */
export interface EnvArguments {
  env?: EnvMap | null | undefined;
  secret_env?: EnvMap | null | undefined;
  /** Write-only secrets: taken from the configuration when deploying, never from plan or state. */
  secret_env_wo?: EnvMap | null | undefined;
  /** A null element means "not set", as a null map value does. */
  unset_env?: readonly (string | null)[] | null | undefined;
}

/** The entries of a map argument that are set: null values left out (see EnvMap). */
export function setEntries(m: EnvMap | null | undefined): [string, string][] {
  const out: [string, string][] = [];
  for (const [key, value] of Object.entries(m ?? {})) if (typeof value === "string") out.push([key, value]);
  return out;
}

/** A map argument with its null values left out; null stays null (the argument is unset). */
export function setMap(m: EnvMap | null | undefined): Record<string, string> | null {
  return m === null || m === undefined ? null : Object.fromEntries(setEntries(m));
}

/** The elements of unset_env that are set: null elements left out. */
function setElements(list: readonly (string | null)[] | null | undefined): string[] {
  return (list ?? []).filter((v): v is string => typeof v === "string");
}

/** Limits of env_overrides (contract 8). */
export const ENV_LIMITS = { entries: 100, keyLength: 256, valueLength: 4096 } as const;

/** Variables the platform's overlay always sets; an override of them has no effect (contract 4.2). */
export const OVERLAY_KEYS: readonly string[] = ["JUPYTER_TOKEN", "GPU_COUNT", "SERVICE_ACCESS_TOKEN"];

/** The template variable value that means "carries the instance access token" (docs/api-shapes.md). */
// biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text, not a placeholder.
export const ACCESS_TOKEN_REFERENCE = "${SERVICE_ACCESS_TOKEN}";

/**
 * The length of a string in characters (Unicode code points), as the API counts its limits: a
 * character outside the Basic Multilingual Plane is one character, not two UTF-16 units.
 */
export function characters(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** A key for a message, quoted, its first 40 characters only when longer. */
function shortKey(key: string): string {
  return characters(key) > 40 ? `"${[...key].slice(0, 40).join("")}…"` : `"${key}"`;
}

/** Builds env_overrides, sorted by key so the request does not depend on map iteration order. */
export function toEnvOverrides(args: EnvArguments): EnvOverride[] {
  const out: EnvOverride[] = [];
  for (const [key, value] of setEntries(args.env)) out.push({ key, value, secret: false });
  for (const [key, value] of setEntries(args.secret_env)) out.push({ key, value, secret: true });
  for (const [key, value] of setEntries(args.secret_env_wo)) out.push({ key, value, secret: true });
  for (const key of setElements(args.unset_env)) out.push({ key, value: null, secret: false });
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The attributes env_overrides is made of. */
type EnvAttribute = "env" | "secret_env" | "secret_env_wo" | "unset_env";

function keyPath(attribute: EnvAttribute, key: string): Diagnostic["path"] {
  // A set element cannot be addressed in a Terraform attribute path; stop at the set.
  return attribute === "unset_env" ? [{ attribute }] : [{ attribute }, { key }];
}

/**
 * Checks the env arguments against the contract's limits and against each other. Only known values
 * are passed in; a map or set that is still unknown is left out by the caller. Null values and
 * elements are not set (EnvMap), so they are neither counted nor checked. `templateEnv`, when
 * known, adds the template's own access-token variables to the keys that cannot be overridden.
 */
export function validateEnv(args: EnvArguments, templateEnv?: readonly TemplateEnvVar[]): Diagnostic[] {
  const diags: Diagnostic[] = [];
  const sources: Array<[EnvAttribute, string[]]> = [
    ["env", setEntries(args.env).map(([k]) => k)],
    ["secret_env", setEntries(args.secret_env).map(([k]) => k)],
    ["secret_env_wo", setEntries(args.secret_env_wo).map(([k]) => k)],
    ["unset_env", setElements(args.unset_env)],
  ];
  const total = sources.reduce((n, [, keys]) => n + keys.length, 0);
  if (total > ENV_LIMITS.entries) {
    diags.push({
      severity: "error",
      summary: "Too many environment entries",
      detail: `env, secret_env, secret_env_wo and unset_env together have ${total} entries; the API accepts at most ${ENV_LIMITS.entries} environment overrides per instance.`,
      path: [{ attribute: "env" }],
    });
  }
  const seen = new Map<string, string>();
  const overlay = new Set(OVERLAY_KEYS);
  for (const v of templateEnv ?? []) if (v.value === ACCESS_TOKEN_REFERENCE) overlay.add(v.key);
  for (const [attribute, keys] of sources) {
    for (const key of keys) {
      const forbidden = [...key].find((c) => c === "=" || c === "\0");
      if (key.length === 0) {
        diags.push({
          severity: "error",
          summary: "Empty environment variable name",
          detail: `${attribute} has an entry with an empty key; every environment variable needs a name.`,
          path: [{ attribute }],
        });
      } else if (forbidden !== undefined) {
        diags.push({
          severity: "error",
          summary: `Environment variable name contains ${forbidden === "=" ? '"="' : "a NUL character"}`,
          detail: `The name ${JSON.stringify([...key].slice(0, 64).join(""))} of ${attribute} contains ${forbidden === "=" ? '"="' : "a NUL character (\\u0000)"}. An environment variable name cannot contain "=" (it separates the name from the value) or NUL (it ends the entry), so the instance could never see it.`,
          path: keyPath(attribute, key),
        });
      } else if (characters(key) > ENV_LIMITS.keyLength) {
        diags.push({
          severity: "error",
          summary: "Environment variable name too long",
          detail: `The key ${shortKey(key)} of ${attribute} has ${characters(key)} characters; the API accepts at most ${ENV_LIMITS.keyLength}.`,
          path: keyPath(attribute, key),
        });
      }
      const first = seen.get(key);
      if (first !== undefined) {
        diags.push({
          severity: "error",
          summary: "Environment variable set twice",
          detail: `"${key}" appears in both ${first} and ${attribute}. Each variable may appear in only one of env, secret_env, secret_env_wo and unset_env.`,
          path: keyPath(attribute, key),
        });
      } else {
        seen.set(key, attribute);
      }
      if (overlay.has(key)) {
        diags.push({
          severity: "warning",
          summary: `${key} is set by the platform`,
          detail: `The platform's own overlay always sets ${key} and wins over env, secret_env, secret_env_wo and unset_env, so this entry has no effect.`,
          path: keyPath(attribute, key),
        });
      }
    }
  }
  for (const attribute of ["env", "secret_env", "secret_env_wo"] as const) {
    for (const [key, value] of setEntries(args[attribute])) {
      if (value.includes("\0")) {
        // The value is never shown: it may be a secret.
        diags.push({
          severity: "error",
          summary: "Environment variable value contains a NUL character",
          detail: `The value of ${key} in ${attribute} contains a NUL character (\\u0000). An environment variable ends at the first NUL, so the instance would see only the part before it.`,
          path: keyPath(attribute, key),
        });
      }
      if (characters(value) > ENV_LIMITS.valueLength) {
        diags.push({
          severity: "error",
          summary: "Environment variable value too long",
          detail: `The value of ${shortKey(key)} in ${attribute} has ${characters(value)} characters; the API accepts at most ${ENV_LIMITS.valueLength}.`,
          path: keyPath(attribute, key),
        });
      }
    }
  }
  return diags;
}
