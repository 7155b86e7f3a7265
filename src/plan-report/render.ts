import { formatDelta, formatHours, formatMicro, formatPerHour, hoursText, type Micro } from "../report/money";
import { mdCode, mdTable, mdText, plural } from "../report/table";
import type { DiskFate, InstanceLine, KeyLine, PlanReport } from "./model";
import { losesDisk } from "./model";

// A plan report for a pull request (Markdown) and for a pipeline (JSON). The Markdown opens with
// what cannot be undone (disks a replacement or a destroy takes), then the money (burn before and
// after, the balance and how long it lasts, the balance rule), then each instance and key, the
// refusals foreseen, what could not be read, and the gates. Only what the plan and the API say is
// shown: labels and names as Terraform shows them (`(sensitive)` when marked), never a value of a
// secret attribute.

/** A marker at the top of the Markdown, so a pipeline can find and update its earlier comment. */
export const COMMENT_MARKER = "<!-- gpurental-plan-report -->";

function disk(d: DiskFate): string {
  switch (d.kind) {
    case "new":
      return `new ${d.gb} GB`;
    case "kept":
      return `kept (${d.gb} GB)`;
    case "destroyed":
      return `**${d.gb} GB destroyed**`;
    case "replaced":
      return `**${d.oldGb} GB destroyed**, new empty ${d.newGb === undefined ? "disk (size known after apply)" : `${d.newGb} GB`}`;
  }
}

function who(l: { address: string; constructPath?: string }): string {
  return `${mdCode(l.address)}${l.constructPath ? `<br><sub>${mdText(l.constructPath)}</sub>` : ""}`;
}

function named(l: InstanceLine): string {
  return `${who(l)}${l.label ? ` ${mdText(l.label === "(sensitive)" ? "(label sensitive)" : `"${l.label}"`)}` : ""}`;
}

function gpu(l: InstanceLine): string {
  if (!l.gpu) return "?";
  return l.gpu.count !== undefined ? `${mdText(l.gpu.model)} × ${l.gpu.count}` : mdText(l.gpu.model);
}

function price(l: InstanceLine): string {
  if (!l.price) return "?";
  const p = formatPerHour(l.price.perHour);
  const shown = l.price.estimate ? `~${p} (estimate)` : p;
  return l.action === "replace" && l.oldPrice !== undefined && l.oldPrice !== l.price.perHour
    ? `${formatPerHour(l.oldPrice)} → ${shown}`
    : shown;
}

function burnCell(l: InstanceLine): string {
  const after = l.burnAfter === undefined ? "?" : formatMicro(l.burnAfter);
  return `${formatMicro(l.burnBefore)} → ${after}`;
}

const ACTION_WORDS: Record<string, string> = {
  create: "create",
  replace: "**replace**",
  destroy: "**destroy**",
  stop: "stop",
  start: "start",
  update: "update in place",
  import: "import",
  forget: "**forget**",
  revoke: "**revoke**",
};

function countsLine(lines: readonly InstanceLine[]): string {
  const counts = new Map<string, number>();
  for (const l of lines) counts.set(l.action, (counts.get(l.action) ?? 0) + 1);
  const words: Record<string, string> = {
    create: "to create",
    replace: "to replace",
    destroy: "to destroy",
    stop: "to stop",
    start: "to start",
    update: "to update in place",
    import: "to import",
    forget: "to forget",
  };
  return [...counts].map(([a, n]) => `${n} ${words[a]}`).join(", ");
}

function ruleLine(r: PlanReport): string {
  const mark = {
    met: "met",
    "may-fail": "**may fail**",
    broken: "**broken**",
    "not-applicable": "not checked",
    "not-judged": "not judged",
  }[r.rule.status];
  return `**One-hour balance rule** (checked at each deploy and start): ${mark}. ${mdText(r.rule.detail)}`;
}

/** The report as Markdown for a pull request comment. */
export function renderMarkdown(r: PlanReport): string {
  const out: string[] = [
    COMMENT_MARKER,
    `### gpurental plan report${r.cdktfStack ? `: stack ${mdCode(r.cdktfStack)}` : ""}`,
    "",
  ];
  if (r.errored) out.push("> [!WARNING]", "> Terraform says this plan errored: it is incomplete.", "");

  const replaced = r.instances.filter((l) => l.action === "replace");
  const destroyed = r.instances.filter((l) => l.action === "destroy");
  if (replaced.length + destroyed.length > 0) {
    out.push("> [!CAUTION]");
    if (replaced.length > 0) {
      out.push(
        `> **${plural(replaced.length, "replacement destroys a disk", "replacements destroy disks")}**: the instance is destroyed with its disk and a new one starts empty.`,
      );
      for (const l of replaced) {
        out.push(
          `> - ${named(l)}: ${disk(l.disk)}${l.reasons.length ? `, because ${mdText(l.reasons.join(", "))}` : ""}${l.order === "create-first" ? " (the new one is created first)" : ""}`,
        );
      }
    }
    if (destroyed.length > 0) {
      out.push(
        `> **${plural(destroyed.length, "instance is", "instances are")} destroyed with ${destroyed.length === 1 ? "its disk" : "their disks"}**:`,
      );
      for (const l of destroyed) out.push(`> - ${named(l)}: ${disk(l.disk)}`);
    }
    out.push("");
  }
  const forgotten = r.instances.filter((l) => l.action === "forget");
  if (forgotten.length > 0) {
    out.push(
      "> [!WARNING]",
      `> **${plural(forgotten.length, "instance leaves", "instances leave")} the state but keeps running and billing**: ${forgotten.map(named).join(", ")}.`,
      "",
    );
  }

  // Money.
  const b = r.burn;
  const after = b.after === undefined ? "? (a price is not known)" : formatPerHour(b.after);
  const change = b.after === undefined ? "?" : `${formatDelta(b.after - b.before)}/h`;
  const rows: string[][] = [
    ["Hourly burn of the organization (balance rule)", formatPerHour(b.before), after, change],
    [
      "Charged per hour (GPU while running, disk while stopped)",
      formatPerHour(b.chargedBefore),
      b.chargedAfter === undefined ? "?" : formatPerHour(b.chargedAfter),
      b.chargedAfter === undefined ? "?" : `${formatDelta(b.chargedAfter - b.chargedBefore)}/h`,
    ],
  ];
  if (r.balance.read) {
    const h = (x: typeof r.balance.hoursBefore) => (x ? formatHours(x) : "no burn");
    rows.push(["Balance", formatMicro(r.balance.balance), "", ""]);
    rows.push([
      "Hours of burn the balance covers (the rule needs 1)",
      h(r.balance.hoursBefore),
      b.after === undefined ? "?" : h(r.balance.hoursAfter),
      "",
    ]);
  } else {
    rows.push(["Balance", "not read", "", ""]);
  }
  out.push(mdTable(["", "Now", "After the change", "Change"], rows), "");
  if (!r.balance.read) out.push(`The balance was not read: ${mdText(r.balance.reason)}.`, "");
  out.push(ruleLine(r), "");
  if (r.limit.status === "broken" || r.limit.status === "may-fail") {
    out.push(
      `**Instance limit**: ${r.limit.before} instances now, ${r.limit.after} after the change${r.limit.worstCase > r.limit.after ? ` (${r.limit.worstCase} at most during the apply)` : ""}, at most ${r.limit.limit}: ${r.limit.status === "broken" ? "a deploy is refused with INSTANCE_LIMIT_REACHED" : "a deploy may be refused with INSTANCE_LIMIT_REACHED depending on the order"}.`,
      "",
    );
  }

  if (r.instances.length > 0) {
    out.push(`#### Instances: ${countsLine(r.instances)}`, "");
    out.push(
      mdTable(
        ["", "Instance", "GPU", "Price", "Disk", "Burn/h now → after"],
        r.instances.map((l) => [
          ACTION_WORDS[l.action]!,
          named(l),
          gpu(l),
          price(l),
          disk(l.disk),
          burnCell(l),
        ]),
      ),
      "",
    );
    const estimates = r.instances.filter((l) => l.price?.estimate);
    if (estimates.length > 0) {
      out.push(
        "~ Estimates: an `offer_filter` chooses its offer when the instance is created, so the price is that of the offer it would choose now.",
        ...estimates.map((l) => `  - ${mdCode(l.address)}: ${mdText(l.price!.basis)}`),
        "",
      );
    }
    const notes = r.instances.flatMap((l) => l.notes.map((n) => `- ${mdCode(l.address)}: ${mdText(n)}`));
    if (notes.length > 0) out.push(...notes, "");
  } else {
    out.push("No instance changes.", "");
  }

  if (r.keys.length > 0) {
    out.push("#### API keys", "");
    out.push(
      mdTable(
        ["", "Key", "Name", "Kind"],
        r.keys.map((k: KeyLine) => [
          ACTION_WORDS[k.action] ?? k.action,
          who(k),
          mdText(k.name ?? "?"),
          mdText(k.kind ?? "personal"),
        ]),
      ),
      "",
    );
  }

  const findings = r.instances.flatMap((l) => l.findings.map((f) => ({ l, f })));
  if (findings.length > 0) {
    out.push("#### What the plan-time checks foresee", "");
    for (const { l, f } of findings) {
      const on = f.path?.[0] && "attribute" in f.path[0] ? ` on ${mdCode(f.path[0].attribute)}` : "";
      out.push(
        `- ${f.severity === "error" ? "**error**" : "warning"}: ${mdCode(l.address)}${on}: **${mdText(f.summary)}**`,
        `  <details><summary>details</summary>\n\n  ${mdText(f.detail)}\n\n  </details>`,
      );
    }
    out.push("");
  }

  if (r.unread.length > 0) {
    out.push("#### Not read", "", ...r.unread.map((u) => `- ${mdText(u)}`), "");
  }
  if (r.gates.length > 0) {
    out.push("#### Gates", "");
    out.push(
      mdTable(
        ["Gate", "Result", ""],
        r.gates.map((g) => [
          mdCode(g.gate),
          g.status === "tripped" ? "**tripped**" : g.status === "passed" ? "passed" : "not judged",
          mdText(g.detail),
        ]),
      ),
      "",
    );
  }
  const made = [
    // Both are the plan file's text, as any label is.
    r.terraformVersion ? `Terraform ${mdText(r.terraformVersion)}` : "",
    r.planTimestamp ? `planned ${mdText(r.planTimestamp)}` : "",
  ]
    .filter(Boolean)
    .join(", ");
  out.push(
    `<sub>Amounts in ¥ as the API gives them (integer micro units, exact). Prices and balance read ${new Date(r.readAt).toISOString()}${made ? `; ${made}` : ""}.</sub>`,
  );
  return `${out.join("\n")}\n`;
}

const m = (x: Micro | undefined) => (x === undefined ? null : x);

/** The report as a JSON-ready object: amounts are integers of micro units (bigint where needed). */
export function reportJson(r: PlanReport): Record<string, unknown> {
  const counts: Record<string, number> = {};
  for (const l of r.instances) counts[l.action] = (counts[l.action] ?? 0) + 1;
  return {
    format_version: "1",
    source: r.source,
    read_at: new Date(r.readAt).toISOString(),
    terraform_version: r.terraformVersion ?? null,
    plan_timestamp: r.planTimestamp ?? null,
    cdktf_stack: r.cdktfStack ?? null,
    errored: r.errored,
    instance_changes: counts,
    disk_loss: r.instances.filter(losesDisk).map((l) => ({
      address: l.address,
      action: l.action,
      disk_gb: l.disk.kind === "replaced" ? l.disk.oldGb : l.disk.kind === "destroyed" ? l.disk.gb : null,
    })),
    burn: {
      before_micro: r.burn.before,
      after_micro: m(r.burn.after),
      change_micro: r.burn.after === undefined ? null : r.burn.after - r.burn.before,
      worst_case_micro: m(r.burn.worstCase),
      charged_before_micro: r.burn.chargedBefore,
      charged_after_micro: m(r.burn.chargedAfter),
      unpriced: r.burn.unpriced,
    },
    balance: r.balance.read
      ? {
          read: true,
          balance_micro: r.balance.balance,
          hours_now: r.balance.hoursBefore ? hoursText(r.balance.hoursBefore) : null,
          hours_after: r.balance.hoursAfter ? hoursText(r.balance.hoursAfter) : null,
        }
      : { read: false, reason: r.balance.reason },
    balance_rule: {
      status: r.rule.status,
      required_micro: m(r.rule.required),
      worst_case_micro: m(r.rule.worstCase),
      detail: r.rule.detail,
    },
    instance_limit: r.limit,
    instances: r.instances.map((l) => ({
      address: l.address,
      construct_path: l.constructPath ?? null,
      action: l.action,
      id: l.id ?? null,
      label: l.label,
      gpu_model: l.gpu?.model ?? null,
      num_gpus: l.gpu?.count ?? null,
      offer_id: l.offerId ?? null,
      price_per_hour_micro: m(l.price?.perHour),
      storage_price_per_gb_hour_micro: m(l.price?.storagePerGbHour),
      price_estimate: l.price?.estimate ?? null,
      price_basis: l.price?.basis ?? null,
      old_price_per_hour_micro: m(l.oldPrice),
      disk: l.disk,
      burn_before_micro: l.burnBefore,
      burn_after_micro: m(l.burnAfter),
      charged_before_micro: l.chargeBefore,
      charged_after_micro: m(l.chargeAfter),
      replace_reasons: l.reasons,
      replace_order: l.order ?? null,
      findings: l.findings.map((f) => ({
        severity: f.severity,
        summary: f.summary,
        detail: f.detail,
        attribute: f.path?.[0] && "attribute" in f.path[0] ? f.path[0].attribute : null,
      })),
      notes: l.notes,
    })),
    api_keys: r.keys.map((k) => ({
      address: k.address,
      construct_path: k.constructPath ?? null,
      action: k.action,
      id: k.id ?? null,
      name: k.name,
      kind: k.kind,
    })),
    unread: r.unread,
    gates: r.gates,
    gate_tripped: r.gates.some((g) => g.status === "tripped"),
  };
}
