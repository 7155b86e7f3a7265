// The fake backend as unit tests use it: one in-process server on port 0 for the test file (or the
// describe block that calls this), the demo seed afresh before each test with transitions immediate
// and no fault left from the test before, a keep-alive undici agent of the test's own (and clients
// through it), and, when
// asked, a temporary working directory, removed afterwards. It registers Jest hooks, so the build
// leaves this folder out (tsconfig.build.json). The contract suites have their own useFake()
// (test/contract/helpers.ts), which speaks raw HTTP and starts with no seed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { Agent } from "undici";
import { type ClientOptions, GpurentalClient } from "../api/client";
import { type DemoCredentials, type FakeBackend, startFakeBackend } from "../fake-backend";
import { createHarness } from "../framework/testing";
import type { CtyValue } from "../plugin/cty";
import { type CreateProviderOptions, createProvider } from "../provider";

/** What the tests of a file read; each throws when read outside the hooks and tests that have it. */
export interface FakeBackendFixture {
  /** The fake backend, started once. */
  readonly backend: FakeBackend;
  /** Its base URL. */
  readonly url: string;
  /** The demo credentials of this test's seed. */
  readonly creds: DemoCredentials;
  /** A keep-alive agent for this test's clients, closed after it. */
  readonly agent: Agent;
  /** The temporary working directory (with the `workDir` option). */
  readonly workDir: string;
  /**
   * The provider, driven in memory as Terraform drives it: reaching the fake backend through this
   * test's agent with quick retries, in the working directory where there is one, reading `env`
   * (none by default) for its fallbacks.
   */
  provider(opts?: ProviderHarnessOptions): ReturnType<typeof createHarness>;
  /**
   * A client of the fake backend as the demo admin, through this test's agent; `options` change
   * any of that (another token, its retries, a logger).
   */
  client(options?: Partial<ClientOptions>): GpurentalClient;
  /** The same, configured with the demo admin's session and `config`; the test fails on any diagnostic. */
  configured(
    config?: Record<string, CtyValue>,
    opts?: ProviderHarnessOptions,
  ): Promise<ReturnType<typeof createHarness>>;
}

/** What a test may set of the provider it drives. */
export type ProviderHarnessOptions = Pick<CreateProviderOptions, "env" | "run" | "ended">;

/** Options of {@link useFakeBackend}. */
export interface FakeBackendFixtureOptions {
  /** A temporary working directory, fresh for each test ("test") or one for them all ("file"); none by default. */
  workDir?: "test" | "file";
}

/** Registers the hooks that give each test a freshly seeded fake backend; returns what the tests read. */
export function useFakeBackend(options: FakeBackendFixtureOptions = {}): FakeBackendFixture {
  let backend: FakeBackend | undefined;
  let creds: DemoCredentials | undefined;
  let agent: Agent | undefined;
  let workDir: string | undefined;

  const makeWorkDir = () => {
    // Named after the test file, so that a leftover says where it came from.
    const file = basename(expect.getState().testPath ?? "unit", ".test.ts");
    workDir = mkdtempSync(join(tmpdir(), `gpurental-${file}-`));
  };
  const removeWorkDir = () => {
    if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
    workDir = undefined;
  };

  beforeAll(async () => {
    backend = await startFakeBackend({ port: 0, seed: "demo" });
    if (options.workDir === "file") makeWorkDir();
  });
  afterAll(async () => {
    removeWorkDir();
    await backend?.close();
  });
  beforeEach(() => {
    creds = present(backend, "backend").seedDemo();
    present(backend, "backend").setTransitions("immediate");
    agent = new Agent({ keepAliveTimeout: 10 });
    if (options.workDir === "test") makeWorkDir();
  });
  afterEach(async () => {
    backend?.clearFaults();
    await agent?.close();
    agent = undefined;
    if (options.workDir === "test") removeWorkDir();
  });

  const fixture: FakeBackendFixture = {
    client(clientOptions = {}) {
      return new GpurentalClient({
        baseUrl: present(backend, "backend").url,
        token: present(creds, "creds").admin_session_token,
        dispatcher: present(agent, "agent"),
        ...clientOptions,
      });
    },
    provider(opts = {}) {
      return createHarness(
        createProvider({
          ...(workDir !== undefined ? { cwd: workDir } : {}),
          env: {},
          ...opts,
          clientOptions: {
            dispatcher: present(agent, "agent"),
            retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
          },
        }),
      );
    },
    async configured(config = {}, opts = {}) {
      const h = fixture.provider(opts);
      const diags = await h.configure({
        base_url: present(backend, "backend").url,
        token: present(creds, "creds").admin_session_token,
        ...config,
      });
      expect(diags).toEqual([]);
      return h;
    },
    get backend() {
      return present(backend, "backend");
    },
    get url() {
      return present(backend, "backend").url;
    },
    get creds() {
      return present(creds, "creds");
    },
    get agent() {
      return present(agent, "agent");
    },
    get workDir() {
      return present(workDir, "workDir");
    },
  };
  return fixture;
}

/** `value`, or a clear error where a test reads what the fixture does not hold at that point. */
function present<T>(value: T | undefined, name: keyof FakeBackendFixture): T {
  if (value === undefined) throw new Error(`fake backend fixture: no ${name} here (see useFakeBackend)`);
  return value;
}
