import { resolve as resolvePath } from "node:path";
import { Network, TrustSettingError } from "../../api/network/network";
import { ProxySettingError, type ProxySettings } from "../../api/network/proxy";
import { type Diagnostics, isUnknown } from "../../framework";
import { emptyProxy, invalidNetworkSetting } from "./diagnostics";
import { PROVIDER_ENV, PROXY_ARGS, type Resolved } from "./settings";

// How the client reaches the API: the proxy arguments (https_proxy, http_proxy, no_proxy), each
// overriding its environment variables, and the CAs to trust (ca_cert_file or
// GPURENTAL_CA_CERT_FILE); else this launch's environment (a resident process's sessions each have
// their own).

/** The proxy arguments of the provider block, and those not known until apply. */
export function proxyArguments(
  config: Record<(typeof PROXY_ARGS)[number], unknown>,
  diags: Diagnostics,
): { proxy: ProxySettings; pending: string[] } {
  const proxy: ProxySettings = {};
  const pending: string[] = [];
  for (const name of PROXY_ARGS) {
    const v: unknown = config[name];
    if (isUnknown(v)) pending.push(name);
    else if (v === "") diags.add(emptyProxy(name));
    else if (typeof v === "string") {
      const key = name === "https_proxy" ? "httpsProxy" : name === "http_proxy" ? "httpProxy" : "noProxy";
      proxy[key] = { value: v, source: `${name} in the provider block` };
    }
  }
  return { proxy, pending };
}

/** The network to the API, or undefined when a proxy or trust setting cannot be used (reported). */
export function networkOf(
  baseUrl: string,
  proxy: ProxySettings,
  caCertFile: Resolved,
  env: NodeJS.ProcessEnv,
  cwd: string,
  diags: Diagnostics,
): Network | undefined {
  try {
    return new Network(new URL(baseUrl), {
      env,
      proxy,
      ...(caCertFile.kind === "value"
        ? {
            caCertFile: {
              value: resolvePath(cwd, caCertFile.value),
              source:
                caCertFile.from === "config"
                  ? "ca_cert_file in the provider block"
                  : `the ${PROVIDER_ENV.ca_cert_file} environment variable`,
            },
          }
        : {}),
    });
  } catch (err) {
    if (err instanceof ProxySettingError || err instanceof TrustSettingError) {
      const arg = err instanceof TrustSettingError ? "ca_cert_file" : err.source.split(" ")[0]!;
      const onArgument = (PROXY_ARGS as readonly string[]).includes(arg) || arg === "ca_cert_file";
      diags.add(
        invalidNetworkSetting(
          onArgument && err.source.endsWith("provider block") ? arg : undefined,
          err.message,
        ),
      );
      return undefined;
    }
    throw err;
  }
}
