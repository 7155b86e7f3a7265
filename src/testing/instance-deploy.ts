// What the tests of a journaled deploy share: the in-process fake backend, clients of it, journals
// of this run or of a gone one, the deploy's settings and body, and a lost entry. It registers Jest
// hooks, so the build leaves this folder out (tsconfig.build.json).
import type { GpurentalClient } from "../api/client";
import { currentRun, DeployJournal, locateJournal, type RunIdentity } from "../journal";
import type { DeployEnv } from "../resources/instance/deploy";
import type { InstanceApi } from "../resources/instance/model";
import { useFakeBackend } from "./fake-backend";

export const fake = useFakeBackend({ workDir: "test" });

/** A process of another boot: gone, so its entries can be adopted. */
export const goneRun: RunIdentity = { id: "gone-run", pid: 1, boot: "a-boot-before-a-restart" };

/** A client; with `stop`, one the provider builds, whose calls Terraform's stop ends. */
export function client(token = fake.creds.admin_session_token, stop?: AbortSignal): GpurentalClient {
  return fake.client({
    token,
    signal: stop,
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
    sleep: async () => {},
  });
}

export function journalOf(run: RunIdentity, now: () => number = Date.now): DeployJournal {
  return new DeployJournal(locateJournal({ cwd: fake.workDir, env: {} }), { run, now });
}

export const FP = "fingerprint-of-the-configuration";

/** A deploy environment whose clock moves only when the code sleeps; the sleeps are recorded. */
export function deployEnv(over: Partial<DeployEnv> = {}) {
  const clock = { t: Date.now(), sleeps: [] as number[] };
  const env: DeployEnv = {
    client: client(),
    deadline: clock.t + 60_000,
    sleep: async (ms) => {
      clock.sleeps.push(ms);
      clock.t += ms;
    },
    now: () => clock.t,
    settings: {
      journal: journalOf(currentRun()),
      reconcileTimeoutMs: 5000,
      partial: false,
      account: { base_url: fake.url, org_id: null },
    },
    fingerprint: FP,
    ...over,
  };
  return { env, clock };
}

export const body = (over: Record<string, unknown> = {}) => ({
  offer_id: fake.creds.offer_id,
  template_id: fake.creds.template_id,
  disk_gb: 50,
  label: "deploy-test",
  ...over,
});

export const live = () =>
  fake.backend.listInstances(fake.creds.org_id).filter((i) => i.status !== "destroyed");

/** The entries of the working directory's journal, as a reader of the file finds them. */
export const entries = () => journalOf(currentRun()).entries();

/** A deploy sent by a process that is gone, at `sentAt`, whose answer never came. */
export function lostEntry(sentAt: number, request = body()): string {
  return journalOf(goneRun, () => sentAt).sent("instance", FP, request, []);
}

/** The client's methods, bound, to replace one of them. */
export function bound(c: InstanceApi): InstanceApi {
  return {
    listInstances: c.listInstances.bind(c),
    getInstance: c.getInstance.bind(c),
    stopInstance: c.stopInstance.bind(c),
    startInstance: c.startInstance.bind(c),
    destroyInstance: c.destroyInstance.bind(c),
    listOffers: c.listOffers.bind(c),
    getTemplate: c.getTemplate.bind(c),
    deployInstance: c.deployInstance.bind(c),
  };
}
