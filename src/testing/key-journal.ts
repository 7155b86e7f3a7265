// What the tests of key creations and of the journal's notes share: the in-process fake backend
// with a temporary working directory per test, the provider's log captured from stderr, journals
// of this run or of a gone one, and clients and settings as the provider builds them. It registers
// Jest hooks, so the build leaves this folder out (tsconfig.build.json).
import { randomUUID } from "node:crypto";
import { GpurentalClient } from "../api/client";
import { currentRun, DeployJournal, locateJournal, type RunIdentity } from "../journal";
import type { DeploySettings } from "../provider/provider-data";
import type { KeyEnv } from "../resources/api-key/journal";
import { type FakeBackendFixture, useFakeBackend } from "./fake-backend";

/** What {@link useKeyJournalFixture} gives a test file. */
export interface KeyJournalFixture {
  fake: FakeBackendFixture;
  /** The provider's log lines of this test (hclog JSON, parsed); emptied before each test. */
  logged: Record<string, unknown>[];
  /** A provider process of another boot: never alive, so what it journaled is left over. */
  goneRun: () => RunIdentity;
  /** A second provider process of this machine, alive (it is this one), other than the one that sent. */
  thisRun: () => RunIdentity;
  /** A client of the fake backend, with quick retries; with `stop`, one whose calls Terraform's stop ends, as the provider builds it. */
  client: (token?: string, baseUrl?: string, stop?: AbortSignal) => GpurentalClient;
  /** The deploy journal of this test's working directory. */
  journal: (run?: RunIdentity, now?: () => number) => DeployJournal;
  settings: (j: DeployJournal | null, over?: Partial<DeploySettings>) => DeploySettings;
  /** A key creation's environment, with a clock the listings' waits move forward at once. */
  env: (c: KeyEnv["client"], j: DeployJournal | null, over?: Partial<DeploySettings>) => KeyEnv;
  /** The ids of the organization's unrevoked keys of that name. */
  liveKeys: (name: string) => string[];
  /** The warnings the provider logged, as `module: message`. */
  warnings: () => string[];
}

/** Registers the hooks; returns what the tests read. */
export function useKeyJournalFixture(): KeyJournalFixture {
  const fake = useFakeBackend({ workDir: "test" });
  const logged: Record<string, unknown>[] = [];

  beforeEach(() => {
    logged.length = 0;
    // The provider's log goes to stderr as hclog JSON lines; warnings are written at the default level.
    jest.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      for (const line of String(chunk).split("\n").filter(Boolean)) {
        try {
          logged.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          logged.push({ "@message": line });
        }
      }
      return true;
    });
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  const thisRun = (): RunIdentity => ({ id: randomUUID(), pid: process.pid, boot: currentRun().boot });
  const settings = (j: DeployJournal | null, over: Partial<DeploySettings> = {}): DeploySettings => ({
    journal: j,
    reconcileTimeoutMs: 60_000,
    partial: false,
    account: { base_url: fake.url, org_id: null },
    ...over,
  });
  return {
    fake,
    logged,
    goneRun: () => ({ id: `gone-${randomUUID()}`, pid: process.pid, boot: "another-boot" }),
    thisRun,
    client: (token = fake.creds.admin_session_token, baseUrl = fake.url, stop) =>
      new GpurentalClient({
        baseUrl,
        token,
        signal: stop,
        dispatcher: fake.agent,
        retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
        sleep: async () => {},
      }),
    journal: (run = thisRun(), now) =>
      new DeployJournal(locateJournal({ cwd: fake.workDir, env: {} }), { run, ...(now ? { now } : {}) }),
    settings,
    env: (c, j, over = {}) => {
      let t = Date.now();
      const clock = {
        now: () => t,
        sleep: async (ms: number) => {
          t += ms;
        },
      };
      return { client: c, signal: new AbortController().signal, settings: settings(j, over), ...clock };
    },
    liveKeys: (name) =>
      Object.values(fake.backend.state().api_keys)
        .filter((k) => k.org_id === fake.creds.org_id && k.name === name && k.revoked_at === null)
        .map((k) => k.id),
    warnings: () =>
      logged
        .filter((l) => l["@level"] === "warn")
        .map((l) => `${String(l["@module"])}: ${String(l["@message"])}`),
  };
}
