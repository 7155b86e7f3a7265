import {
  AmbiguousRequestError,
  ApiError,
  type ApiErrorCode,
  ConnectionSetupError,
  GpurentalError,
  InstanceErrorStateError,
  NetworkError,
  RequestAbortedError,
  TimeoutError,
  WaitTimeoutError,
} from "../api/errors";
import type { Instance } from "../api/schemas";
import type { Diagnostic } from "../framework";

// Every API error a resource can meet is turned into a Terraform diagnostic here and nowhere else,
// so a refusal reads the same at plan time, at apply time and in every resource: the summary starts
// with the API's code (what users search for), the detail says in words what happened using the
// fields the error carries, and then what to do about it.

/** What the failing call was doing, so the wording and the attribute fit the situation. */
export type Operation =
  | "deploy"
  | "start"
  | "stop"
  | "destroy"
  | "read"
  | "import"
  | "create_key"
  | "delete_key"
  | "plan_check";

/** 1 ¥ in micro units (docs/api-shapes.md). */
export const MICRO_PER_YEN = 1_000_000;

/** Renders a *_micro amount in ¥ with two decimals, more only where the amount has them. */
export function formatYen(micro: number): string {
  const sign = micro < 0 ? "-" : "";
  const abs = Math.abs(micro);
  const whole = Math.floor(abs / MICRO_PER_YEN);
  const frac = String(abs % MICRO_PER_YEN)
    .padStart(6, "0")
    .replace(/0+$/, "")
    .padEnd(2, "0");
  return `${sign}¥${whole.toLocaleString("en-US")}.${frac}`;
}

/** Renders an ISO timestamp for a person, keeping the exact UTC value. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "an unknown time";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d{3}Z$/, " UTC")}`;
}

/** The carried fields a refusal explanation may use; both ApiError and plan-time checks supply them. */
export interface RefusalFacts {
  message?: string;
  balance_micro?: number | undefined;
  required_micro?: number | undefined;
  max_disk_gb?: number | undefined;
  available_disk_gb?: number | undefined;
  requested_disk_gb?: number | undefined;
  next_maintenance?: string | null | undefined;
  limit?: number | undefined;
  /** INSTANCE_LIMIT_REACHED: how many instances not destroyed the organization has, when counted. */
  count?: number | undefined;
  field?: string | undefined;
}

interface CatalogueEntry {
  /** The attribute of gpurental_instance (or gpurental_api_key) the code is about, if any. */
  attribute?: string;
  /** The words after the code in the summary. */
  title: string;
  /** What happened and what to do, from the carried fields. */
  explain: (f: RefusalFacts, op: Operation, choice: OfferChoice) => string;
}

/** How the instance's offer is given: pinned by offer_id, or chosen by offer_filter. */
export type OfferChoice = "pinned" | "filter";

const OFFERS_HINT =
  "The gpurental_offers data source lists the offers that can be rented now; an offer_filter instead of offer_id lets the provider choose one when the instance is created, and move on to the next when one is taken.";
const FILTER_HINT =
  "offer_filter moves on to the next matching offer when one is refused at deploy time; to widen the choice, loosen it (another region, a higher max_price_per_hour_micro). The gpurental_offers data source shows the market.";

/** What to do about a refusal of the offer, in the words of how it was given. */
const chooseOther = (choice: OfferChoice, pinned: string, filter: string) =>
  choice === "filter" ? [filter, FILTER_HINT].filter(Boolean).join(" ") : `${pinned} ${OFFERS_HINT}`;
const TEMPLATES_HINT = "The gpurental_templates data source lists the templates this organization can use.";

/** Every code of contract sections 7.1-7.3, with its explanation. */
const CATALOGUE: Readonly<Record<string, CatalogueEntry>> = {
  // 7.1 key and access errors
  TOKEN_INVALID: {
    title: "the credential was not accepted",
    explain: (_f, op) =>
      `The token is unknown or revoked, or it is a personal API key whose creator has left the organization` +
      (op === "plan_check" || op === "create_key"
        ? ", or the endpoint needs a signed-in session rather than an API key."
        : ".") +
      " Check the provider's token argument (or GPURENTAL_TOKEN): create a new API key, or use a team key, which keeps working after its creator leaves.",
  },
  ADMIN_REQUIRED: {
    title: "this action needs an admin",
    explain: (_f, op) =>
      op === "create_key" || op === "delete_key"
        ? "API keys can only be created and revoked with a signed-in session, never with an API key; team keys and other members' keys need an admin session. Configure the provider's token with a session token of an organization admin (a member's session can only manage their own personal keys)."
        : "Only an admin of the organization in a signed-in session may do this; an API key or a member's session cannot. Configure the provider with an admin's session token.",
  },
  ORG_MISMATCH: {
    title: "org_id names another organization than the credential's",
    explain: () =>
      "The provider's org_id (or GPURENTAL_ORG_ID) is sent as X-Org-Id and names an organization the token does not belong to. Set org_id to the token's organization, or leave it unset to use the token's own organization.",
  },
  API_KEY_NOT_FOUND: {
    title: "no such API key",
    explain: () =>
      "The API key is unknown, already revoked, or belongs to another organization. A revoked key cannot be brought back: create a new one.",
  },
  INSTANCE_NOT_FOUND: {
    title: "no such instance",
    explain: () =>
      "The instance id is unknown or belongs to another organization than the provider's credential. Check the id and the provider's token and org_id.",
  },
  INVALID_STATE: {
    attribute: "desired_status",
    title: "the instance's status does not allow this action",
    explain: (f) =>
      `${f.message ? `The API said: ${f.message}. ` : ""}Stop is accepted only from running, start only from stopped, and destroy from every status except destroyed. Run terraform apply again once the instance has settled; terraform refresh shows its current status.`,
  },
  INSUFFICIENT_BALANCE: {
    title: "the balance does not cover one hour of the organization's burn",
    explain: (f, op) => {
      const what =
        op === "start"
          ? "Starting the instance"
          : op === "deploy" || op === "plan_check"
            ? "Deploying the instance"
            : "This action";
      const amounts =
        f.balance_micro !== undefined && f.required_micro !== undefined
          ? ` The balance is ${formatYen(f.balance_micro)}; ${formatYen(f.required_micro)} is required, so top up at least ${formatYen(Math.max(0, f.required_micro - f.balance_micro))}.`
          : " Top up the balance.";
      return `${what} needs a balance covering one hour of the organization's whole burn: this instance's GPU and disk plus every running, starting or creating instance and the disk of every stopped one.${amounts} An admin tops up in the console (or with POST /v1/billing/orders); stopping or destroying other instances also lowers the requirement.`;
    },
  },
  // 7.2 deploy refusals
  OFFER_UNAVAILABLE: {
    attribute: "offer_id",
    title: "the offer cannot be rented",
    explain: (_f, _op, choice) =>
      `The offer is missing, withdrawn or sold out on its machine, or another deploy took its last free unit. ${chooseOther(choice, "Choose another offer_id.", "")}`,
  },
  MACHINE_IN_MAINTENANCE: {
    attribute: "offer_id",
    title: "the offer's machine goes into maintenance too soon",
    explain: (f, op, choice) =>
      `The machine is booked offline at ${formatTime(f.next_maintenance)}${op === "plan_check" ? "" : ", too soon to start an instance on it"}. ${chooseOther(choice, "Choose an offer on another machine, or deploy after the maintenance.", "Deploy after the maintenance, or let offers on other machines match.")}`,
  },
  DISK_TOO_LARGE: {
    attribute: "disk_gb",
    title: "disk_gb is larger than the machine's disk",
    explain: (f, _op, choice) =>
      `${f.max_disk_gb !== undefined ? `The offer's machine has ${f.max_disk_gb} GB of disk in total` : "The offer's machine has less disk in total than requested"}${f.requested_disk_gb !== undefined ? ` and ${f.requested_disk_gb} GB were requested` : ""}. Lower disk_gb${f.max_disk_gb !== undefined ? ` to at most ${f.max_disk_gb}` : ""}, or ${choice === "filter" ? "loosen offer_filter so that offers" : "choose an offer"} on a machine with more disk${choice === "filter" ? " match" : ""}.`,
  },
  MACHINE_DISK_EXHAUSTED: {
    attribute: "disk_gb",
    title: "the machine has not enough disk left",
    explain: (f, _op, choice) =>
      `${f.requested_disk_gb !== undefined ? `${f.requested_disk_gb} GB were requested but ` : ""}${f.available_disk_gb !== undefined ? `the offer's machine has only ${f.available_disk_gb} GB left to commit` : "the offer's machine has not enough disk left to commit"}. Lower disk_gb${f.available_disk_gb !== undefined ? ` to at most ${f.available_disk_gb}` : ""}, or ${choice === "filter" ? "loosen offer_filter so that offers on other machines match" : "choose an offer on another machine"}.`,
  },
  TEMPLATE_NOT_FOUND: {
    attribute: "template_id",
    title: "the template is missing, not visible, or inactive",
    explain: () =>
      `Templates of the system, public templates and this organization's own can be used; an inactive one cannot. Check template_id. ${TEMPLATES_HINT}`,
  },
  TEMPLATE_COMING_SOON: {
    attribute: "template_id",
    title: "the template is marked coming soon",
    explain: () => `The template cannot be deployed yet. Choose another template_id. ${TEMPLATES_HINT}`,
  },
  OFFER_NOT_VM_CAPABLE: {
    attribute: "offer_id",
    title: "the offer's machine cannot run the vm template",
    explain: (_f, _op, choice) =>
      `The template runs a virtual machine (mode vm) and the offer's machine cannot run VMs. ${chooseOther(choice, "Choose a VM-capable offer, or a container template (mode ssh or jupyter).", "Choose a container template (mode ssh or jupyter), or let VM-capable offers match.")}`,
  },
  TEMPLATE_CUDA_TOO_NEW: {
    attribute: "template_id",
    title: "the machine's CUDA is newer than the template supports",
    explain: (f) =>
      `${f.message ? `${f.message}. ` : ""}The template pins an older CUDA stack (its cuda_max) and the offer's machine runs a newer CUDA. Choose a template built for newer CUDA, or an offer on a machine with an older CUDA.`,
  },
  TEMPLATE_ARCH_UNSUPPORTED: {
    attribute: "template_id",
    title: "the template's architecture is not supported",
    explain: (f) =>
      `${f.message ? `${f.message}. ` : ""}Only x86_64 templates can be deployed. Choose an x86_64 template. ${TEMPLATES_HINT}`,
  },
  TEMPLATE_REQUIRES_OWNER: {
    attribute: "template_id",
    title: "only the template's owner can deploy it",
    explain: () =>
      "The template belongs to another organization and pulls its image from a private registry with that organization's credentials. Duplicate it into this organization with your own registry credentials, or choose another template_id.",
  },
  OFFER_NOT_PINNABLE: {
    attribute: "offer_id",
    title: "the offer's machine is not registered with the fleet",
    explain: (_f, _op, choice) =>
      choice === "filter"
        ? `The offer's machine is no longer registered with the fleet. ${FILTER_HINT}`
        : `The offer_id is stale: its machine is no longer registered. Choose a current offer. ${OFFERS_HINT}`,
  },
  SSH_KEY_NOT_FOUND: {
    attribute: "ssh_key_id",
    title: "the SSH key cannot be attached by this credential",
    explain: () =>
      "The SSH key does not exist, or this credential may not attach it: a session or a personal API key can attach only its own user's keys; a team API key the keys of current members. Add the key in a signed-in session first, or use another ssh_key_id (the gpurental_ssh_keys data source lists them), or leave ssh_key_id unset (then SSH is impossible).",
  },
  INSTANCE_LIMIT_REACHED: {
    title: "the organization has reached its instance limit",
    explain: (f) =>
      `${
        f.count !== undefined
          ? `The organization has ${f.count} instances that are not destroyed, and the limit is ${f.limit ?? 25}`
          : `The organization has reached its limit of ${f.limit ?? 25} instances that are not destroyed`
      }; stopped instances and instances in error count too. Destroy instances you no longer need (the gpurental_instances data source lists them), then apply again.`,
  },
  // 7.3 start failures: the instance stays stopped with its disk.
  HOST_UNREACHABLE: {
    attribute: "desired_status",
    title: "the instance's machine is not connected",
    explain: () =>
      'The start could not reach the machine; the instance stays stopped with its disk. Try again later by running terraform apply, or set desired_status = "stopped" until then.',
  },
  START_REFUSED: {
    attribute: "desired_status",
    title: "the host refused to start the instance",
    explain: (f) =>
      `${f.message ? `The API said: ${f.message}. ` : ""}The instance stays stopped with its disk. If the host no longer holds the workload, the instance cannot be started again: replace it (terraform apply -replace=<address>) to destroy it and deploy a new one. Otherwise try again later.`,
  },
  START_UNAVAILABLE: {
    attribute: "desired_status",
    title: "the start cannot be completed right now",
    explain: () =>
      "The resume was retried until the update timeout ran out; the instance stays stopped with its disk. Run terraform apply again shortly, or raise timeouts.update.",
  },
  CAPACITY_UNAVAILABLE: {
    attribute: "desired_status",
    title: "the instance's GPUs are in use or out of service",
    explain: () =>
      "The GPUs released when the balance ran out are now taken or out of service; the instance stays stopped with its disk. Try again later; if it persists, replace the instance (this deletes its disk) with terraform apply -replace=<address>.",
  },
  // Codes of our own (docs/api-shapes.md) that users can act on.
  VALIDATION_ERROR: {
    title: "the API rejected a value",
    explain: (f) =>
      `${f.message ?? "A field has the wrong type or is out of range"}${f.field ? ` (field ${f.field})` : ""}${f.limit !== undefined ? `; the limit is ${f.limit}` : ""}. Correct the value and apply again.`,
  },
  RATE_LIMITED: {
    title: "the API is rate limiting requests",
    explain: () =>
      "The request was retried, waiting as long as the API asked (Retry-After), until the operation's time limit; it ends at once when the API asks to wait longer than the time left. Run terraform again later, raise the resource's timeouts, or lower terraform's -parallelism.",
  },
  SERVICE_UNAVAILABLE: {
    title: "the API is unavailable",
    explain: () =>
      "The request was retried, waiting as long as the API asked (Retry-After), until the operation's time limit. Run terraform again shortly, or raise the resource's timeouts.",
  },
};

/** The codes this module explains: everything of contract 7.1-7.3 and our own actionable codes. */
export const EXPLAINED_CODES: readonly string[] = Object.keys(CATALOGUE);

/** API fields the API may name in a VALIDATION_ERROR, mapped onto resource attributes. */
const FIELD_TO_ATTRIBUTE: Readonly<Record<string, string>> = {
  offer_id: "offer_id",
  template_id: "template_id",
  disk_gb: "disk_gb",
  label: "label",
  ssh_key_id: "ssh_key_id",
  name: "name",
  kind: "kind",
};

function attributeForField(field: string | undefined): string | undefined {
  if (!field) return undefined;
  if (field.startsWith("env_overrides")) return "env";
  const head = field.split(".")[0] ?? field;
  // Own keys only: a field named "constructor" or "toString" is not an attribute.
  return Object.hasOwn(FIELD_TO_ATTRIBUTE, head) ? FIELD_TO_ATTRIBUTE[head] : undefined;
}

/** The attribute a code is about, for callers that place a plan-time finding. */
export function attributeOfCode(code: string): string | undefined {
  return catalogueEntry(code)?.attribute;
}

/** The catalogue's entry of a code; own keys only, so "toString" from a server is just unknown. */
function catalogueEntry(code: string): CatalogueEntry | undefined {
  return Object.hasOwn(CATALOGUE, code) ? CATALOGUE[code] : undefined;
}

/** How a refusal is worded and placed. */
export interface RefusalOptions {
  severity?: "error" | "warning";
  /** The attributes of the resource at hand; a code is only placed on one of them. */
  attributes?: readonly string[];
  /** Words before the explanation. */
  prefix?: string;
  /** How the instance's offer is given (default pinned): what to advise, and where to place it. */
  offerChoice?: OfferChoice;
}

/** Builds the diagnostic of a refusal code from its facts; used for API errors and plan-time checks. */
export function refusalDiagnostic(
  code: ApiErrorCode,
  facts: RefusalFacts,
  op: Operation,
  opts: RefusalOptions = {},
): Diagnostic {
  const entry = catalogueEntry(code);
  const choice = opts.offerChoice ?? "pinned";
  const title = entry?.title ?? facts.message ?? "the API refused the request";
  const explanation = entry
    ? entry.explain(facts, op, choice)
    : `${facts.message ?? "The API refused the request"}.`.replace(/\.\.$/, ".");
  const named = code === "VALIDATION_ERROR" ? attributeForField(facts.field) : entry?.attribute;
  // With a filter, offer_id is not configured: a refusal about the offer belongs to the filter.
  const attribute = choice === "filter" && named === "offer_id" ? "offer_filter" : named;
  const placed =
    attribute && (!opts.attributes || opts.attributes.includes(attribute)) ? attribute : undefined;
  const diag: Diagnostic = {
    severity: opts.severity ?? "error",
    summary: `${code}: ${title}`,
    detail: `${opts.prefix ? `${opts.prefix} ` : ""}${explanation}`,
  };
  if (placed) diag.path = [{ attribute: placed }];
  return diag;
}

/** Names of the operations as the first words of a detail. */
const OPERATION_WORDS: Readonly<Record<Operation, string>> = {
  deploy: "Deploying the instance failed.",
  start: "Starting the instance failed.",
  stop: "Stopping the instance failed.",
  destroy: "Destroying the instance failed.",
  read: "Reading the object failed.",
  import: "Importing the object failed.",
  create_key: "Creating the API key failed.",
  delete_key: "Revoking the API key failed.",
  plan_check: "",
};

/**
 * The one mapping from any error a client call raised to a diagnostic. `attributes` lists the
 * attributes of the resource at hand, so a code is only placed on an attribute the resource has.
 */
export function errorToDiagnostic(
  err: unknown,
  op: Operation,
  attributes?: readonly string[],
  offerChoice: OfferChoice = "pinned",
  more: RefusalFacts = {},
): Diagnostic {
  if (err instanceof ApiError) {
    const facts: RefusalFacts = {
      ...more,
      message: err.apiMessage,
      balance_micro: err.balance_micro,
      required_micro: err.required_micro,
      max_disk_gb: err.max_disk_gb,
      available_disk_gb: err.available_disk_gb,
      requested_disk_gb: err.requested_disk_gb,
      next_maintenance: err.next_maintenance,
      limit: err.limit,
      field: err.field,
    };
    const diag = refusalDiagnostic(err.code, facts, op, {
      prefix: OPERATION_WORDS[op],
      offerChoice,
      ...(attributes ? { attributes } : {}),
    });
    const rid = err.requestId ? ` (HTTP ${err.status}, request ${err.requestId})` : ` (HTTP ${err.status})`;
    diag.detail = `${diag.detail}${rid}`;
    return diag;
  }
  if (err instanceof InstanceErrorStateError) return instanceErrorDiagnostic(err.instance, op);
  if (err instanceof WaitTimeoutError) {
    const last = err.lastInstance;
    return {
      severity: "error",
      summary: `Timed out waiting for the instance to become ${err.target.join(" or ")}`,
      detail: `${err.message}. The instance is kept in the state with its last known status${last ? ` (${last.status})` : ""}; run terraform apply again to continue waiting, or raise the matching entry of timeouts.`,
    };
  }
  if (err instanceof ConnectionSetupError) {
    return {
      severity: "error",
      summary: err.problem.startsWith("proxy")
        ? "The proxy refuses the connection to the gpurental API"
        : "Cannot connect to the gpurental API as configured",
      detail: `${OPERATION_WORDS[op] ? `${OPERATION_WORDS[op]} ` : ""}${err.message}. This was not retried: it fails the same way until ${err.setting} is changed.`,
    };
  }
  if (err instanceof NetworkError && !err.apiReached) {
    return {
      severity: "error",
      summary: "Cannot reach the gpurental API",
      detail: `${OPERATION_WORDS[op] ? `${OPERATION_WORDS[op]} ` : ""}${err.message}. Check the provider's base_url (or GPURENTAL_BASE_URL), the proxy settings (HTTPS_PROXY, NO_PROXY, or https_proxy in the provider block) and that the API is reachable from this machine.`,
    };
  }
  if (err instanceof NetworkError || (err instanceof TimeoutError && err.limit === "request")) {
    // The message names the address and whether it came from base_url or GPURENTAL_BASE_URL.
    return {
      severity: "error",
      summary:
        err instanceof NetworkError ? "Cannot reach the gpurental API" : "The gpurental API did not answer",
      detail: `${OPERATION_WORDS[op] ? `${OPERATION_WORDS[op]} ` : ""}${err.message}. The request was retried until the operation's time limit. Check the provider's base_url (or GPURENTAL_BASE_URL) and that the API is reachable from this machine.`,
    };
  }
  if (err instanceof AmbiguousRequestError) {
    return {
      severity: "error",
      summary: "The API's answer was lost",
      detail: `${err.message}. Nothing was recorded in the state for it; run terraform apply again once the API is reachable.`,
    };
  }
  if (err instanceof RequestAbortedError || (err instanceof Error && err.name === "AbortError")) {
    return {
      severity: "error",
      summary: "Interrupted",
      detail: "The operation was cancelled before it finished; the state records what is known so far.",
    };
  }
  if (err instanceof GpurentalError) {
    return {
      severity: "error",
      summary: `${OPERATION_WORDS[op] || "The API call failed."}`,
      detail: err.message,
    };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { severity: "error", summary: OPERATION_WORDS[op] || "Unexpected error", detail: message };
}

/** What each instance error_code (contract 7.4) means and what to do. */
const INSTANCE_ERROR_CODES: Readonly<Record<string, string>> = {
  provision_failed:
    "The instance could not be provisioned. It is marked tainted: the next terraform apply destroys it and deploys a new one.",
  workload_completed:
    "The instance's workload exited on its own. Replace the instance to run it again (terraform apply -replace=<address>).",
  workload_gone:
    "The workload is gone from its host. Replace the instance (terraform apply -replace=<address>).",
  stop_timed_out:
    "The host did not confirm the stop within 30 minutes, so the instance is running again and its GPUs are billed; the platform keeps retrying the stop. Run terraform apply again to keep waiting, or raise timeouts.update.",
  start_timed_out:
    "The start did not complete in time and the instance is stopped again with its disk. Run terraform apply again to retry the start.",
  gpus_unavailable:
    "The instance's GPUs are not available to start it; it stays stopped with its disk. Try again later, or replace the instance (this deletes the disk).",
};

/** The diagnostic for an instance that ended in error, or whose stop or start did not land. */
export function instanceErrorDiagnostic(instance: Instance, op: Operation): Diagnostic {
  const code = instance.error_code ?? instance.status;
  const what =
    (Object.hasOwn(INSTANCE_ERROR_CODES, code) ? INSTANCE_ERROR_CODES[code] : undefined) ??
    "Check the instance's logs (data source gpurental_instance_logs).";
  const message = instance.error_message ? ` The platform said: ${instance.error_message}.` : "";
  return {
    severity: "error",
    summary: `${code}: instance ${instance.id} is ${instance.status}`,
    detail: `${OPERATION_WORDS[op] ? `${OPERATION_WORDS[op]} ` : ""}The instance's error_code is ${instance.error_code ?? "not set"}.${message} ${what}`,
  };
}
