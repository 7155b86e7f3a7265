import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { createTestPki } from "../tls/issue";
import { Engine } from "./engine";
import { FaultStore } from "./faults";
import { DEFAULT_REQUEST_TIMEOUTS, type RequestTimeouts } from "./http/client-errors";
import { registerControl } from "./http/control";
import { buildApp } from "./http/http";
import { reissueDemoCredentials, seedDemo } from "./seed";
import { Clock } from "./state/clock";
import { readStateFile, StateFileError, StateLog } from "./state/state-file";
import { emptyState } from "./state/store";
import type * as T from "./types";

export type { RequestTimeouts } from "./http/client-errors";
export { DEMO_IDS } from "./seed";
export { StateFileError } from "./state/state-file";
/** The records and settings the fake is driven with in process, as types.ts defines them. */
export type {
  Caller,
  DemoCredentials,
  FakeState,
  FaultSpec,
  HostBehaviour,
  InstanceRecord,
  LedgerRow,
  MachineRecord,
  OfferRecord,
  OrgRecord,
  Role,
  SshKeyRecord,
  TemplateRecord,
  TransitionMode,
  UserRecord,
} from "./types";

/** Options of {@link startFakeBackend}. */
export interface FakeBackendOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /** Host to bind; default 127.0.0.1. */
  host?: string;
  /** "demo" seeds the demo organization at start (unless a state file restored state); default "none". */
  seed?: "demo" | "none";
  /** Persist state here after each change (README "State file") and restore it at start; default in memory. */
  stateFile?: string;
  /** Token of the control API; random when absent. */
  controlToken?: string;
  /** How transitions land; default "immediate" in-process. The CLI uses "realistic". */
  transitions?: T.TransitionMode;
  /** Receives one line per request (method, path, status, duration); off when absent. */
  logger?: (line: string) => void;
  /** Settle transitions and billing on a timer too, not only on each request (standalone mode). */
  tickMs?: number;
  /** Limits on receiving a request (default headers 10 s, whole request 30 s); 408 past them. */
  requestTimeouts?: Partial<RequestTimeouts>;
  /**
   * Serve HTTPS: `true` generates a private CA and a server certificate it signs (for localhost,
   * 127.0.0.1, ::1 and `tlsNames`), whose CA is then `caCertPem`; or a certificate and key of one's own.
   */
  tls?: true | { certPem: string; keyPem: string } | undefined;
  /** Extra host names (or IPs) the generated server certificate is for, e.g. `api.gpurental.test`. */
  tlsNames?: readonly string[] | undefined;
}

/** A running fake backend. */
export interface FakeBackend {
  /** Base URL, e.g. http://127.0.0.1:43123 or https://127.0.0.1:43123 (no trailing slash). */
  readonly url: string;
  /** The PEM of the CA that signed the generated server certificate (`tls: true`), else undefined. */
  readonly caCertPem: string | undefined;
  /** Token for the X-Control-Token header of /_control routes. */
  readonly controlToken: string;
  /** Credentials of the demo seed, when seeded with "demo". */
  readonly credentials: T.DemoCredentials | undefined;
  /** Resets and seeds the demo data; returns fresh credentials. */
  seedDemo(): T.DemoCredentials;
  /** Empties every record, removes every fault and drops requests held by late-commit faults. */
  reset(): void;
  /** The fake clock: advance moves time forward and settles transitions and billing up to it. */
  readonly clock: {
    now(): Date;
    advance(ms: number): void;
    freeze(at?: Date): void;
    unfreeze(): void;
  };
  /** Chooses how transitions land: "immediate", "manual", "realistic" or { afterMs }. */
  setTransitions(mode: T.TransitionMode): void;
  /** Lands the pending transition (or GPU release) of an instance now; false when none. */
  completeTransition(instanceId: string): boolean;
  /** Installs an HTTP fault; returns its id. */
  addFault(f: T.FaultSpec): string;
  /** Removes one fault. */
  removeFault(id: string): boolean;
  /** Removes every fault; requests a late-commit fault already holds still commit. */
  clearFaults(): void;
  /** Requests held by late-commit faults that have not been committed yet. */
  lateCommitsPending(): number;
  /** Commits every held request now and resolves once each has landed; returns how many. */
  flushLateCommits(): Promise<number>;
  /** Sets part of a machine's host behaviour. */
  setHostBehaviour(machineId: string, b: Partial<T.HostBehaviour>): void;
  /** Makes the next deploy(s) on an offer lose the reservation race (7.2 row 15). */
  loseNextRace(offerId: string, times?: number): void;
  /** Creates an organization. */
  createOrg(input: { id?: string; name: string; balance_micro?: number }): T.OrgRecord;
  /** Creates a user (email or phone). */
  createUser(input: { id?: string; email?: string | null; phone?: string | null }): T.UserRecord;
  /** Adds a member or changes their role. */
  addMember(orgId: string, userId: string, role: T.Role): void;
  /** Removes a member and revokes their personal keys in that organization. */
  removeMember(orgId: string, userId: string): boolean;
  /** Signs a member in; returns the session token. */
  createSession(userId: string, orgId: string): string;
  /** Adds an SSH key for a user. */
  createSshKey(input: { id?: string; user_id: string; name: string; public_key?: string }): T.SshKeyRecord;
  /** Adds a machine. */
  createMachine(input: Partial<T.MachineRecord> & { disk_gb: number }): T.MachineRecord;
  /** Adds an offer on a machine. */
  createOffer(
    input: Partial<Omit<T.OfferRecord, "next_maintenance" | "created_at" | "seq">> & {
      machine_id: string;
      next_maintenance?: number | string | null;
    },
  ): T.OfferRecord;
  /** Adds a template. */
  createTemplate(
    input: Partial<Omit<T.TemplateRecord, "created_at" | "seq">> & { name: string },
  ): T.TemplateRecord;
  /** Sets a balance without a ledger row. */
  setBalance(orgId: string, balanceMicro: number): void;
  /** Credits a balance with a top_up row; returns the new balance. */
  topUp(orgId: string, amountMicro: number): number;
  /** An organization's balance after settling. */
  balance(orgId: string): number;
  /** Instance records of an organization (all of them, destroyed included), newest first. */
  listInstances(orgId?: string): T.InstanceRecord[];
  /** One instance record after settling, or undefined. */
  instance(id: string): T.InstanceRecord | undefined;
  /** The instance object exactly as GET /v1/instances/{id} renders it. */
  renderInstance(id: string): Record<string, unknown> | undefined;
  /** Ledger rows, optionally of one instance, oldest first. */
  ledger(filter?: { orgId?: string; instanceId?: string }): T.LedgerRow[];
  /** Appends lines to an instance's log. */
  appendLogs(instanceId: string, lines: string[]): void;
  /** The whole state after settling (read-only use). */
  state(): T.FakeState;
  /** Stops listening and the timer; writes the state file a last time. */
  close(): Promise<void>;
}

/** Starts the fake backend; in-process it keeps state in memory unless `stateFile` is given. */
export async function startFakeBackend(opts: FakeBackendOptions = {}): Promise<FakeBackend> {
  if (opts.controlToken !== undefined && opts.controlToken.trim() === "") {
    // An empty token would match a request sending an empty X-Control-Token header.
    throw new Error("controlToken must not be empty; leave it out for a random one");
  }
  const controlToken = opts.controlToken ?? randomBytes(24).toString("hex");
  const timeouts = { ...DEFAULT_REQUEST_TIMEOUTS, ...opts.requestTimeouts };
  if (
    !(Number.isInteger(timeouts.headersMs) && timeouts.headersMs > 0) ||
    !(Number.isInteger(timeouts.requestMs) && timeouts.requestMs >= timeouts.headersMs)
  ) {
    throw new Error(
      `requestTimeouts: headersMs must be a positive integer and requestMs an integer at least as large, got ${JSON.stringify(timeouts)}`,
    );
  }
  const loaded = opts.stateFile ? readStateFile(opts.stateFile) : undefined;
  for (const note of loaded?.notes ?? []) opts.logger?.(note);
  const restored = loaded?.state;
  const clock = new Clock(restored?.clock_offset_ms ?? 0);
  const engine = new Engine(restored ?? emptyState(), clock);
  if (!restored || opts.transitions) engine.state.transitions = opts.transitions ?? "immediate";
  const faults = new FaultStore();

  let dirty = true;
  engine.onChange = () => {
    dirty = true;
  };
  const store = opts.stateFile ? new StateLog(opts.stateFile) : undefined;
  // Every write happens before the answer that acknowledges it leaves (http.ts, onSend).
  const persist = () => {
    if (!store) return;
    engine.state.clock_offset_ms = clock.offset;
    store.write(engine, dirty);
    dirty = false;
  };
  if (opts.stateFile) {
    // Write the whole state once before listening: a file that can never be written is refused
    // now, not on the first change with the server already up; an older or torn file is rewritten.
    try {
      persist();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      throw new StateFileError(opts.stateFile, `cannot be written (${code})`);
    }
  }

  let url = "";
  let credentials: T.DemoCredentials | undefined;
  const doSeed = () => {
    faults.reset();
    credentials = seedDemo(engine, url, controlToken);
    persist();
    return credentials;
  };
  const advance = (ms: number) => {
    engine.settle();
    clock.shift(ms);
    engine.settle();
    persist();
  };

  const pki = opts.tls === true ? createTestPki(opts.tlsNames ?? []) : undefined;
  const tls = pki
    ? { certPem: pki.server.certPem, keyPem: pki.server.keyPem }
    : typeof opts.tls === "object"
      ? opts.tls
      : undefined;
  const app = buildApp({
    tls,
    engine,
    faults,
    persist,
    logger: opts.logger,
    timeouts,
    controlToken,
    registerControl: (a) => registerControl(a, { engine, faults, controlToken, seedDemo: doSeed, advance }),
  });
  await app.listen({ port: opts.port ?? 0, host: opts.host ?? "127.0.0.1" });
  try {
    const address = app.server.address() as AddressInfo;
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
    url = `${tls ? "https" : "http"}://${host}:${address.port}`;
    if (opts.seed === "demo" && !restored) doSeed();
    else if (opts.seed === "demo")
      credentials = reissueDemoCredentials(engine, url, controlToken) ?? doSeed();
    persist();
  } catch (err) {
    // Nothing may keep listening when start-up fails: the caller only gets the error.
    await app.close();
    throw err;
  }

  let tickFailed = false;
  const timer =
    opts.tickMs !== undefined && opts.tickMs > 0
      ? setInterval(() => {
          try {
            engine.settle();
            persist();
            tickFailed = false;
          } catch (err) {
            // A background tick has no caller to answer: report once and keep serving; the next
            // request that changes something retries the write and answers 500 if it still fails.
            if (!tickFailed) opts.logger?.(`state could not be saved: ${(err as Error).message}`);
            tickFailed = true;
          }
        }, opts.tickMs)
      : undefined;
  timer?.unref();

  // Every in-process call settles first and persists after, exactly like a request.
  const act = <T>(fn: () => T): T => {
    engine.settle();
    const out = fn();
    persist();
    return out;
  };

  const backend: FakeBackend = {
    url,
    caCertPem: pki?.ca.certPem,
    controlToken,
    get credentials() {
      return credentials;
    },
    seedDemo: doSeed,
    reset: () =>
      act(() => {
        faults.reset();
        credentials = undefined;
        engine.reset();
      }),
    clock: {
      now: () => clock.now(),
      advance,
      freeze: (at) => act(() => clock.freeze(at)),
      unfreeze: () => act(() => clock.unfreeze()),
    },
    setTransitions: (mode) => act(() => engine.setTransitions(mode)),
    completeTransition: (id) => act(() => engine.completeTransition(id)),
    addFault: (f) => faults.add(f),
    removeFault: (id) => faults.remove(id),
    clearFaults: () => faults.clear(),
    lateCommitsPending: () => faults.held.pending,
    flushLateCommits: () => faults.held.flush(),
    setHostBehaviour: (id, b) => act(() => engine.setHostBehaviour(id, b)),
    loseNextRace: (id, times) => act(() => engine.loseNextRace(id, times)),
    createOrg: (i) => act(() => engine.createOrg(i)),
    createUser: (i) => act(() => engine.createUser(i)),
    addMember: (o, u, r) => act(() => engine.addMember(o, u, r)),
    removeMember: (o, u) => act(() => engine.removeMember(o, u)),
    createSession: (u, o) => act(() => engine.createSession(u, o)),
    createSshKey: (i) => act(() => engine.createSshKey(i)),
    createMachine: (i) => act(() => engine.createMachine(i)),
    createOffer: (i) => act(() => engine.createOffer(i)),
    createTemplate: (i) => act(() => engine.createTemplate(i)),
    setBalance: (o, b) => act(() => engine.setBalance(o, b)),
    topUp: (o, a) => act(() => engine.topUp(o, a)),
    balance: (o) => act(() => engine.state.orgs[o]?.balance_micro ?? Number.NaN),
    listInstances: (orgId) =>
      act(() =>
        Object.values(engine.state.instances)
          .filter((i) => orgId === undefined || i.org_id === orgId)
          .sort((a, b) => b.seq - a.seq),
      ),
    instance: (id) => act(() => engine.state.instances[id]),
    renderInstance: (id) =>
      act(() => {
        const inst = engine.state.instances[id];
        return inst ? engine.instances.render(inst) : undefined;
      }),
    ledger: (filter = {}) =>
      act(() =>
        engine.state.ledger
          .filter(
            (r) =>
              (filter.orgId === undefined || r.org_id === filter.orgId) &&
              (filter.instanceId === undefined || r.instance_id === filter.instanceId),
          )
          .sort((a, b) => a.seq - b.seq),
      ),
    appendLogs: (id, lines) => act(() => engine.appendLogs(id, lines)),
    state: () => act(() => engine.state),
    close: async () => {
      if (timer) clearInterval(timer);
      // A held request was promised a commit: it lands now rather than after the server is gone.
      await faults.held.flush();
      await app.close();
      engine.settle();
      persist();
      store?.close(engine);
    },
  };
  return backend;
}
