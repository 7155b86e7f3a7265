import type { DeployInstanceRequest, RequestOptions } from "./requests";
import type { Instance } from "./schemas";

/** What {@link findDeployCandidates} needs of a client. */
export interface InstanceLister {
  /** Lists instances; see GpurentalClient.listInstances. */
  listInstances(query?: { include_destroyed?: boolean }, opts?: RequestOptions): Promise<Instance[]>;
}

/** Options of {@link findDeployCandidates}. */
export interface FindDeployCandidatesOptions extends RequestOptions {
  /** When the ambiguous deploy was sent (client clock, ms). */
  sentAt: number;
  /** Allowed difference between the client's and the server's clocks. Default 5 minutes. */
  clockSkewMs?: number;
}

/**
 * After an {@link AmbiguousRequestError} on deploy: the instances that the lost request may have
 * created, newest first. They match every field the request set (offer, template, disk, label) and
 * were created no earlier than `sentAt` minus the clock skew. One candidate is almost certainly the
 * lost instance; several mean the caller cannot tell and should ask a person (or adopt none).
 */
export async function findDeployCandidates(
  client: InstanceLister,
  request: DeployInstanceRequest,
  opts: FindDeployCandidatesOptions,
): Promise<Instance[]> {
  const skew = opts.clockSkewMs ?? 5 * 60_000;
  const earliest = opts.sentAt - skew;
  // Destroyed ones too: an instance whose provisioning failed and that was cleaned up is still the
  // answer to "did my deploy land?".
  const all = await client.listInstances(
    { include_destroyed: true },
    { signal: opts.signal, deadlineMs: opts.deadlineMs },
  );
  return all.filter((i) => {
    if (i.offer.id !== request.offer_id || i.template.id !== request.template_id) return false;
    if (i.disk_gb !== request.disk_gb) return false;
    if ((request.label ?? null) !== i.label) return false;
    const created = i.created_at === null ? Number.NaN : Date.parse(i.created_at);
    return Number.isNaN(created) || created >= earliest;
  });
}
