// A Terraform state as the journal's tests write it (a local file, a pg backend's row): its
// lineage and serial, and gpurental instances of the given ids. No Jest hooks: any test may use it.

/** The JSON text of a version 4 state holding instances `ids`, with `lineage` and `serial` when given. */
export function instanceStateText(
  ids: readonly string[],
  mark?: { serial: number; lineage?: string },
): string {
  return JSON.stringify({
    version: 4,
    ...(mark ? { lineage: mark.lineage ?? "lineage-a", serial: mark.serial } : {}),
    resources: [
      {
        mode: "managed",
        type: "gpurental_instance",
        name: "n",
        instances: ids.map((id, i) => ({ index_key: i, attributes: { id } })),
      },
    ],
  });
}
