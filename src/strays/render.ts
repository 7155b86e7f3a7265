import { terminalText } from "../display";
import { formatMicro, formatPerHour, type Micro } from "../report/money";
import { formatAge, plural, textTable } from "../report/table";
import { type StrayReport, strayCount } from "./find";

// How a stray report reads: a table per kind for a person, a JSON document for a machine. Neither
// ever carries a secret: the API lists none, and nothing is taken from the states but ids. Every
// string from the API or a state reaches the terminal through terminalText (src/display.ts): a
// member of the organization names instances, and a label is no terminal command.

/** One value on one line of the report. */
const one = (text: string) => terminalText(text, { maxLength: 200 });

function time(iso: string | null): string {
  return iso ? iso.replace(/\.\d+Z$/, "Z") : "never";
}

function gpu(model: string | undefined, count: number | undefined): string {
  if (!model) return "-";
  return count !== undefined ? `${model} × ${count}` : model;
}

/** Total hourly burn of the stray instances. */
export function strayBurn(r: StrayReport): Micro {
  return r.instances.reduce((n, s) => n + s.hourlyBurn, 0n);
}

/** The report as tables for a terminal. */
export function renderStraysText(r: StrayReport): string {
  const out: string[] = [];
  const held = r.states.map((s) => {
    const what = `${plural(s.instances, "instance")}, ${plural(s.apiKeys, "API key")}`;
    return `  ${one(s.source)}: ${what}${s.note ? ` (${one(s.note)})` : ""}`;
  });
  out.push(`States read (${r.states.length}):`, ...held, "");

  if (r.instances.length > 0) {
    out.push(`Instances no state holds (${r.instances.length}):`);
    out.push(
      textTable(
        ["ID", "LABEL", "STATUS", "GPU", "AGE", "PRICE/H", "BURN/H", "SPEND"],
        r.instances.map((s) => [
          s.instance.id,
          s.instance.label ?? "-",
          s.instance.status,
          gpu(s.instance.offer.gpu_model, s.instance.offer.num_gpus),
          s.ageMs === undefined ? "-" : formatAge(s.ageMs),
          formatMicro(s.pricePerHour),
          formatMicro(s.hourlyBurn),
          formatMicro(s.spend),
        ]),
      ),
      "",
    );
  }
  const late = r.instances.filter((s) => s.lateArrival);
  if (late.length > 0) {
    out.push(`Late arrivals of given-up deploys (${late.length}):`);
    for (const s of late) {
      out.push(
        `  ${one(s.instance.id)}: landed after the deploy journal gave up its deploy sent at ${one(time(s.lateArrival!.sentAt))} (entry ${one(s.lateArrival!.entry)} in ${one(s.lateArrival!.journal)}); import it or destroy it (--destroy)`,
      );
    }
    out.push("");
  }
  if (r.apiKeys.length > 0) {
    out.push(`API keys no state holds (${r.apiKeys.length}):`);
    out.push(
      textTable(
        ["ID", "NAME", "KIND", "PREFIX", "CREATED", "LAST USED", ""],
        r.apiKeys.map((k) => [
          k.key.id,
          k.key.name,
          k.key.kind,
          k.key.prefix,
          time(k.key.created_at),
          time(k.key.last_used_at),
          k.thisCredential ? "this command's credential (not counted, never revoked)" : "",
        ]),
      ),
      "",
    );
  }
  if (r.leaving.length > 0) {
    out.push(
      `Being destroyed, not counted: ${r.leaving.map((i) => `${one(i.id)}${i.label ? ` (${one(i.label)})` : ""}`).join(", ")}`,
      "",
    );
  }
  if (r.missing.length > 0) {
    out.push(
      "Held by a state but not listed for this organization (destroyed, revoked or another organization's):",
    );
    for (const m of r.missing) out.push(`  ${m.type} ${one(m.id)}: ${m.holders.map(one).join("; ")}`);
    out.push("");
  }
  const n = strayCount(r);
  if (n === 0) {
    out.push("No strays: every instance and API key of the organization is held by a state read.");
  } else {
    const keys = r.apiKeys.filter((k) => !k.thisCredential).length;
    const parts: string[] = [];
    if (r.instances.length > 0) {
      parts.push(`${plural(r.instances.length, "instance")} burning ${formatPerHour(strayBurn(r))}`);
    }
    if (keys > 0) parts.push(plural(keys, "API key"));
    out.push(`${plural(n, "stray")} found: ${parts.join(" and ")}.`);
  }
  // Whatever a line above missed still cannot drive the terminal.
  return `${terminalText(out.join("\n"), { multiline: true, maxLength: Number.MAX_SAFE_INTEGER })}\n`;
}

/** The report as a JSON-ready object; amounts are integers in micro units (bigint where needed). */
export function straysJson(r: StrayReport): Record<string, unknown> {
  return {
    strays_found: strayCount(r) > 0,
    stray_count: strayCount(r),
    listed_at: new Date(r.at).toISOString(),
    hourly_burn_micro: strayBurn(r),
    instances: r.instances.map((s) => ({
      id: s.instance.id,
      label: s.instance.label,
      status: s.instance.status,
      gpu_model: s.instance.offer.gpu_model ?? null,
      num_gpus: s.instance.offer.num_gpus ?? null,
      offer_id: s.instance.offer.id,
      template_id: s.instance.template.id,
      disk_gb: s.instance.disk_gb,
      created_at: s.instance.created_at,
      age_seconds: s.ageMs === undefined ? null : Math.floor(s.ageMs / 1000),
      price_per_hour_micro: s.pricePerHour,
      hourly_burn_micro: s.hourlyBurn,
      spend_micro: s.spend,
      deployed_by: s.instance.deployed_by,
      late_arrival: s.lateArrival
        ? {
            deploy_sent_at: s.lateArrival.sentAt,
            journal_entry: s.lateArrival.entry,
            journal: s.lateArrival.journal,
          }
        : null,
    })),
    api_keys: r.apiKeys.map((k) => ({
      id: k.key.id,
      name: k.key.name,
      kind: k.key.kind,
      prefix: k.key.prefix,
      created_at: k.key.created_at,
      last_used_at: k.key.last_used_at,
      creator_email: k.key.creator_email,
      this_credential: k.thisCredential,
    })),
    being_destroyed: r.leaving.map((i) => ({ id: i.id, label: i.label, status: i.status })),
    held_but_not_listed: r.missing.map((m) => ({ type: m.type, id: m.id, holders: m.holders })),
    states: r.states.map((s) => ({
      source: s.source,
      instances: s.instances,
      api_keys: s.apiKeys,
      ...(s.note ? { note: s.note } : {}),
    })),
  };
}
