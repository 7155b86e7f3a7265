import type { EnvEntry, TemplateRecord } from "./types";

// An instance's environment: the template's variables, the deploy's overrides over them, and the
// platform overlay (GPU count, access token) over both, which overrides cannot shadow.

/** Protected variables the platform overlay sets; overrides cannot shadow them. */
export const PROTECTED_ENV = ["JUPYTER_TOKEN", "GPU_COUNT", "SERVICE_ACCESS_TOKEN"] as const;
/** The template env value that carries the instance access token. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: the literal placeholder is the documented marker
export const ACCESS_TOKEN_REF = "${SERVICE_ACCESS_TOKEN}";

/** Merges overrides over the template env, then lays the platform overlay over both. */
export function mergeEnv(
  template: TemplateRecord,
  overrides: { key: string; value: string | null; secret: boolean }[],
  accessToken: string | null,
  gpuCount: number,
): EnvEntry[] {
  const carriers = new Set(template.env.filter((e) => e.value === ACCESS_TOKEN_REF).map((e) => e.key));
  const isProtected = (key: string) =>
    (PROTECTED_ENV as readonly string[]).includes(key) || carriers.has(key);
  const merged = new Map<string, EnvEntry>();
  for (const e of template.env) merged.set(e.key, { ...e });
  for (const o of overrides) {
    if (isProtected(o.key)) continue;
    if (o.value === null) merged.delete(o.key);
    else merged.set(o.key, { key: o.key, value: o.value, secret: o.secret });
  }
  const overlay: EnvEntry[] = [{ key: "GPU_COUNT", value: String(gpuCount), secret: false }];
  if (accessToken !== null) {
    overlay.push({ key: "SERVICE_ACCESS_TOKEN", value: accessToken, secret: true });
    overlay.push({ key: "JUPYTER_TOKEN", value: accessToken, secret: true });
    for (const key of carriers) overlay.push({ key, value: accessToken, secret: true });
  } else {
    for (const key of carriers) merged.delete(key);
  }
  for (const e of overlay) merged.set(e.key, e);
  return [...merged.values()];
}
