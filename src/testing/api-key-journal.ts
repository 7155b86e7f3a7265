// What the tests of key creations share beyond the key journal fixture: a port nothing listens
// on, a creation Terraform's stop interrupts, and the one entry of a journal.
import { createServer } from "node:net";
import type { DeployJournal, JournalEntry } from "../journal";
import type { DeploySettings } from "../provider/provider-data";
import type { KeyEnv } from "../resources/api-key/journal";
import { useKeyJournalFixture } from "./key-journal";

export const { fake, logged, goneRun, thisRun, client, journal, settings, env, liveKeys, warnings } =
  useKeyJournalFixture();

/** A local port nothing listens on: a request to it never reaches a server. */
export async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address() as { port: number };
  await new Promise((r) => srv.close(r));
  return port;
}

/** A creation whose signal Terraform's stop fires once the server holds its request. */
export function interruptible(
  j: DeployJournal,
  stop: AbortController,
  over: Partial<DeploySettings> = {},
): KeyEnv {
  // As the provider builds it: every call of the client ends with Terraform's stop.
  const admin = client(undefined, undefined, stop.signal);
  const c: KeyEnv["client"] = {
    listApiKeys: (o) => admin.listApiKeys(o),
    revokeApiKey: (id, o) => admin.revokeApiKey(id, o),
    createApiKey: async (b, o) => {
      const sent = admin.createApiKey(b, o);
      while (fake.backend.lateCommitsPending() === 0) await new Promise((r) => setTimeout(r, 5));
      stop.abort();
      return sent;
    },
  };
  return { ...env(c, j, over), signal: stop.signal };
}

export const only = (j: DeployJournal): JournalEntry => {
  const all = j.entries();
  expect(all).toHaveLength(1);
  return all[0]!;
};
