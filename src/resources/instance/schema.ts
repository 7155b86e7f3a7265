import {
  attr,
  type CtyValue,
  defineSchema,
  type PlanOf,
  readPrivate,
  requiresReplace,
  requiresReplaceIf,
  type StateOf,
  t,
  timeoutsAttribute,
  useStateForUnknown,
  wholeNumber,
} from "../../framework";
import { check, oneOf, printable } from "../../framework/modifiers";
import { offerFilterAttributes } from "../../market/offer-filter";
import { apiId } from "../../provider/ids";
import { INSTANCE_DEFAULT_TIMEOUTS, MAX_OFFER_ATTEMPTS } from "./ops";

// The schema of gpurental_instance: its arguments, what each one's change plans (replacement, or
// in place), and the computed attributes the API reports. What the plans and the lifecycle do with
// it is in resource.ts.

const stable = () => [useStateForUnknown()];
const replace = () => [requiresReplace()];

/**
 * The arguments the API never returns. After an import they are unknown to the provider (null in
 * state); the import leaves a marker in the resource's private data, and the first apply after it
 * adopts the configured values in place instead of replacing the instance.
 */
export const CREATE_ONLY = ["ssh_key_id", "env", "secret_env", "secret_env_wo_version", "unset_env"] as const;
/** The private data key of that marker. */
export const UNREAD_AFTER_IMPORT = "create_only_arguments_unread";

/** Whether an import's marker says the create-only arguments were never read. */
export function unreadAfterImport(priv: Buffer): boolean {
  return readPrivate(priv)[UNREAD_AFTER_IMPORT] === true;
}

/** Replaces on change, except when the prior value was never known: null in state after an import. */
const replaceUnlessUnreadImport = () => [
  requiresReplaceIf(
    (req) => !(req.state === null && unreadAfterImport(req.private)),
    "Changing the value replaces the instance; after an import, the first apply records it in place.",
  ),
];

/** `""` and null both mean "no label": the contract sets no minimum length. */
const noLabel = (v: CtyValue) => v === null || v === "";

const str = (description: string, sensitive = false) =>
  attr.string({ computed: true, description, sensitive });
const num = (description: string) => attr.number({ computed: true, description });
const bool = (description: string) => attr.bool({ computed: true, description });

const maxLength = (max: number, what: string) =>
  check<string>(
    `At most ${max} characters.`,
    (v) => [...v].length <= max,
    (v) => `${what} has ${[...v].length} characters; the API accepts at most ${max}.`,
  );

/** The schema of gpurental_instance. */
export const instanceSchema = defineSchema({
  description: [
    "A GPU instance: one rented offer running one template. Creating it deploys the instance and waits until it runs (billing starts when the workload runs). `desired_status` stops and starts it in place; every other argument except `offer_filter` replaces it, which destroys its disk.",
    `Offers are a live market: they sell out, get cheaper, are withdrawn and go into maintenance. Give the instance an \`offer_filter\` (GPU model, GPU count, and optionally a maximum price and a region) and the provider chooses the offer when the instance is created or replaced: the cheapest matching offer that the deploy checks do not already refuse for this template and \`disk_gb\` (sold out, machine disk, VM capability, CUDA), with offers whose machine goes into maintenance within 24 hours tried last. If another deploy takes that offer first (\`OFFER_UNAVAILABLE\`, \`OFFER_NOT_PINNABLE\`, \`MACHINE_DISK_EXHAUSTED\`, \`MACHINE_IN_MAINTENANCE\`), the next candidate is tried, at most ${MAX_OFFER_ATTEMPTS} offers, with a warning naming both; an answer that was lost is reconciled instead and never followed by a deploy elsewhere. The chosen \`offer_id\`, the \`offer\` it rents and the price snapshot are known after apply and kept in state: later market moves plan no change at all. Changing \`offer_filter\` replaces the instance only when it no longer satisfies the new filter (judged from \`offer\` and \`price_per_hour_micro\`); otherwise the change is recorded in place. With no matching offer that a deploy would accept, the plan fails on \`offer_filter\` and says which criterion left out which offers.`,
    "Pin an `offer_id` instead only when the instance must run on that very offer (a machine you reserved, a region or host the filter cannot express). A pinned offer is never moved away from: when it sells out or is withdrawn the running instance is unaffected, but creating or replacing the instance is refused until it can be rented again, and changing `offer_id` (for example to follow a cheaper offer from the `gpurental_offers` data source) replaces the instance and destroys its disk. Exactly one of `offer_id` and `offer_filter` is set.",
    "Refusals are reported with the API's code first (e.g. `DISK_TOO_LARGE: ...`) on the argument concerned, at plan time where the API lets the provider foresee them. A maintenance window is only a warning at plan time: the contract leaves it to the service to judge how close is too close, so the deploy's own answer decides. An instance that ends in error while being created is kept in state and marked tainted, so the next apply replaces it. A create cut short while the instance is still being created (Terraform stopped by Ctrl-C, or the create's timeout) keeps the instance in state with a warning, not tainted: the next apply waits for it in place (within `timeouts.update`) and replaces it only if it ended in error or is gone, so a deploy already under way is never paid for twice. Every deploy is recorded in the deploy journal (see the provider's `journal_dir`) before it is sent. A deploy is sent again only when it provably never reached the server; after a lost answer the organization's instances are listed for `reconcile_timeout` and a new instance matching offer, template, disk and label is taken, and if none appears the create fails saying the outcome is unknown, without a second deploy. The next create of the same configuration adopts, with a warning naming its id and when it was deployed, an instance that an interrupted apply (Ctrl-C, a killed terraform or provider) or a late server commit left outside the state, instead of deploying another; a plan that will do so says it.",
    "The API does not return `ssh_key_id`, `env`, `secret_env`, `secret_env_wo_version`, `unset_env` or `offer_filter`, so an import cannot read them (and `secret_env_wo` is never read or stored). The first plan after an import records the configured values in state with an in-place update that sends nothing to the API, and warns that they were taken from the configuration; from then on, changing them replaces the instance (`offer_filter`: when the instance does not satisfy the new filter). If the imported instance runs with other values, replace it (`terraform apply -replace=ADDRESS`).",
  ].join("\n\n"),
  attributes: {
    id: attr.string({ computed: true, description: "ID of the instance.", planModifiers: stable() }),
    offer_id: attr.string({
      optional: true,
      computed: true,
      description:
        "ID of the offer to pin (see the `gpurental_offers` data source); set either this or `offer_filter`. With `offer_filter`, the ID of the offer the provider chose when the instance was created, kept as long as the instance lives. Changing a configured `offer_id` replaces the instance.",
      validators: [
        apiId(
          "offer_id",
          "an offer",
          "See the gpurental_offers data source, or set offer_filter instead to let the provider choose one.",
        ),
      ],
      planModifiers: replace(),
    }),
    offer_filter: attr.single(offerFilterAttributes, {
      optional: true,
      description:
        "The market filter the offer is chosen by when the instance is created or replaced; set either this or `offer_id`. The cheapest matching offer a deploy of this template and `disk_gb` would not be refused on is rented; see the resource description. Changing it replaces the instance only when the instance no longer satisfies it.",
    }),
    offer: attr.single(
      {
        gpu_model: str("GPU model of the offer."),
        num_gpus: num("Number of GPUs the offer rents."),
        region: str("Region of the offer's machine."),
      },
      {
        computed: true,
        description:
          "The offer the instance rents, as recorded when it was rented: what a changed `offer_filter` is judged by.",
        planModifiers: stable(),
      },
    ),
    template_id: attr.string({
      required: true,
      description:
        "ID of the template to run: a system or public template, or one of the organization's own (see `gpurental_templates`). Changing it replaces the instance.",
      validators: [apiId("template_id", "a template")],
      planModifiers: replace(),
    }),
    disk_gb: attr.number({
      required: true,
      description:
        "Disk in GB, 10 to 20000 and at most the offer's machine disk. Billed per GB and hour while the instance is stopped. Changing it replaces the instance.",
      validators: [wholeNumber("disk_gb", 10, 20000)],
      planModifiers: replace(),
    }),
    label: attr.string({
      optional: true,
      description:
        'Label shown in the console, at most 64 characters, without control characters (line breaks, tabs, ESC, NUL) or bidirectional overrides, which no console or terminal can show as they are (an error at plan). Unset (or `""`) for no label. Changing it replaces the instance.',
      validators: [maxLength(64, "label"), printable("label")],
      planModifiers: [
        requiresReplaceIf(
          (req) => !(noLabel(req.state) && noLabel(req.plan)),
          'Changing the value replaces the instance; `""` and unset both mean no label.',
        ),
      ],
    }),
    ssh_key_id: attr.string({
      optional: true,
      description:
        "ID of the SSH key to authorize. With a session or a personal API key: one of the caller's own keys; with a team key: a key of any current member. Without it SSH is impossible. Changing it replaces the instance.",
      validators: [apiId("ssh_key_id", "an SSH key")],
      planModifiers: replaceUnlessUnreadImport(),
    }),
    env: attr.map(t.string, {
      optional: true,
      description:
        "Environment variables merged over the template's, by name. Together with `secret_env` and `unset_env` at most 100 entries; names up to 256 characters, values up to 4096. A name may appear in only one of the three. `JUPYTER_TOKEN`, `GPU_COUNT`, `SERVICE_ACCESS_TOKEN` and template variables carrying the access token are always set by the platform (a warning says so). A null value (an optional variable left unset) leaves its variable out, as if the name were not in the map; it never drops the template's variable (that is `unset_env`). Changing it replaces the instance.",
      planModifiers: replaceUnlessUnreadImport(),
    }),
    secret_env: attr.map(t.string, {
      optional: true,
      sensitive: true,
      description:
        "Environment variables like `env`, whose values are sent as secrets and hidden in Terraform's output (a null value leaves its variable out, as in `env`). They are kept in state (and in saved plans) in clear text: protect the state, or use `secret_env_wo` with Terraform 1.11 or later. Changing them replaces the instance.",
      planModifiers: replaceUnlessUnreadImport(),
    }),
    secret_env_wo: attr.map(t.string, {
      optional: true,
      sensitive: true,
      writeOnly: true,
      description:
        "Secret environment variables like `secret_env`, but write-only (Terraform 1.11 or later): the values are sent to the API when the instance is deployed and are never stored in the plan or the state. Feed them from an `ephemeral` variable (a non-ephemeral variable's value is kept in saved plan files). Terraform cannot see them change: a change of the values alone plans nothing; change `secret_env_wo_version` to redeploy the instance (a replacement, which destroys its disk) with the current values. Use this rather than `secret_env` wherever Terraform 1.11 or later runs the configuration.",
    }),
    secret_env_wo_version: attr.number({
      optional: true,
      description:
        "Required with `secret_env_wo`: any whole number, stored in state. Changing it replaces the instance, deploying it with the current `secret_env_wo` values; that is the only way to rotate them, since env is only sent when an instance is deployed.",
      validators: [wholeNumber("secret_env_wo_version", 0, Number.MAX_SAFE_INTEGER)],
      planModifiers: replaceUnlessUnreadImport(),
    }),
    unset_env: attr.set(t.string, {
      optional: true,
      description:
        "Names of template environment variables to drop. A null element is ignored. Changing it replaces the instance.",
      planModifiers: replaceUnlessUnreadImport(),
    }),
    desired_status: attr.string({
      optional: true,
      computed: true,
      default: "running",
      description:
        "`running` (default) or `stopped`. Changing it starts or stops the instance in place and waits. A refresh sets it from the instance's real power state, so an instance stopped outside Terraform (e.g. automatically when the balance ran out) plans a start when the configuration says `running`. A stopped instance keeps its disk and pays storage.",
      validators: [oneOf("running", "stopped")],
    }),
    timeouts: timeoutsAttribute(INSTANCE_DEFAULT_TIMEOUTS),
    status: str(
      "Current status: `creating`, `starting`, `running`, `stopping`, `stopped`, `destroying`, `destroyed` or `error`.",
    ),
    ssh_host: str("Public IP address of the instance's host; SSH connects directly."),
    ssh_port: num("SSH port assigned to the instance (never 22)."),
    ssh_user: str("User to connect as with SSH."),
    jupyter_url: str(
      "JupyterLab address with its token, once a jupyter template reports it; otherwise null. Sensitive because it carries the access token. Null with `store_access_secrets = false`: read it for a run with the `gpurental_instance_access` ephemeral resource, and show `jupyter_address` instead.",
      true,
    ),
    open_url: str(
      "Address of the template's open button, once reported; otherwise null. Sensitive because it may carry the access token. Null with `store_access_secrets = false`: read it for a run with the `gpurental_instance_access` ephemeral resource.",
      true,
    ),
    access_token: str(
      "The instance access token: the JupyterLab token, the bearer key of the template's app ports, and the password of accounts the template creates. Null when the template uses none. Kept in the state in clear text unless `store_access_secrets = false`; then null, and the `gpurental_instance_access` ephemeral resource gives it to the run that needs it.",
      true,
    ),
    store_access_secrets: attr.bool({
      optional: true,
      computed: true,
      default: true,
      description:
        "Whether `access_token`, `jupyter_url` and `open_url` are kept in the state (default `true`, as before). With `false` they are always null in plans and states (the API puts the token into both addresses), and the run that needs them reads them with the `gpurental_instance_access` ephemeral resource (Terraform 1.10 or later); `jupyter_address`, the SSH attributes and everything else stay. Changing it updates the state in place, never the instance. An import reads the instance before the configuration is known, so an imported state (and a saved plan that imports) holds them until the first apply records `false`: apply right after importing.",
    }),
    jupyter_address: str(
      "`jupyter_url` with the access token masked (`token=…`), safe to show and kept whatever `store_access_secrets` says; null until a jupyter template reports its address.",
    ),
    error_code: str(
      "Why the instance is in error (`provision_failed`, `workload_completed`, `workload_gone`), or why a stop or start did not land (`stop_timed_out`, `start_timed_out`, `gpus_unavailable`); null otherwise.",
    ),
    error_message: str("The platform's explanation of `error_code`, or null."),
    allowed_actions: attr.list(t.string, {
      computed: true,
      description: "Actions the API accepts in the current status: `start`, `stop`, `destroy`.",
    }),
    gpus_released: bool(
      "Whether a stopped instance's GPUs were released when the balance ran out; a start then needs the same GPUs to be free again.",
    ),
    gpu_release: str(
      "`pending`, `released` or `unsupported` once the platform decides to release the GPUs; otherwise null.",
    ),
    gpu_release_requested_at: str("When the GPU release was decided (RFC 3339), or null."),
    price_per_hour_micro: attr.number({
      computed: true,
      description:
        "GPU price per hour while running, snapshotted from the offer at rent time, in micro-yuan (1 ¥ = 1,000,000).",
      planModifiers: stable(),
    }),
    storage_price_per_gb_hour_micro: attr.number({
      computed: true,
      description: "Disk price per GB and hour, snapshotted at rent time, in micro-yuan.",
      planModifiers: stable(),
    }),
    hold_price_per_hour_micro: num(
      "Price per hour of holding the GPUs while stopped, in micro-yuan; null where a stopped instance pays storage only.",
    ),
    stop_hold_price_per_hour_micro: num(
      "Hold price per hour after a requested stop, in micro-yuan, or null.",
    ),
    suspended_hold_price_per_hour_micro: num(
      "Hold price per hour after an automatic stop (balance exhausted), in micro-yuan, or null.",
    ),
    stop_releases_gpus: bool(
      "Whether a requested stop releases the GPUs; false where a stop always keeps them reserved.",
    ),
    created_at: attr.string({
      computed: true,
      description: "When the instance was created (RFC 3339).",
      planModifiers: stable(),
    }),
    started_at: str("When the workload first ran (RFC 3339), or null."),
    status_changed_at: str("When the status last changed (RFC 3339)."),
    destroyed_at: str("When the instance was destroyed (RFC 3339), or null."),
    spend_micro: num("Charges settled so far for this instance, in micro-yuan."),
    deployed_by: attr.string({
      computed: true,
      description:
        "Who deployed the instance: the member's email (or phone number), or for a team key the key's name followed by its prefix in parentheses.",
      planModifiers: stable(),
    }),
    deployed_via_api_key: attr.single(
      {
        id: str("ID of the API key."),
        name: str("Name of the API key."),
        kind: str("`personal` or `team`."),
        prefix: str("Prefix of the key's secret."),
        revoked: bool("Whether the key has been revoked since."),
      },
      {
        computed: true,
        description: "The API key the instance was deployed with, or null for console deploys.",
      },
    ),
  },
});

/** The planned values of gpurental_instance. */
export type InstancePlan = PlanOf<typeof instanceSchema>;
/** The state of gpurental_instance. */
export type InstanceState = StateOf<typeof instanceSchema>;
