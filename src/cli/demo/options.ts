import type { FakeBackend, TransitionMode } from "../../fake-backend";
import type { Cdk } from "../cdk";

// What `gpurental demo` takes and gives back, shared by the CDK demo (demo.ts) and the HCL demo
// (hcl.ts).

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** The CDK whose example app and CLI run: "cdktf" (examples/cdktf-app, the default) or "cdktn" (examples/cdktn-app). */
  cdk?: Cdk;
  /** Port of the fake backend; 0 picks a free one. */
  port?: number;
  /**
   * Leave the instance and the fake backend running until `signal` aborts (Ctrl-C in the CLI), then
   * destroy them as a normal run does, unless `hurry` aborts too.
   */
  keep?: boolean;
  /** Stream cdktf's and terraform's own output. */
  verbose?: boolean;
  /**
   * Folder for the mirror, synth output, state and logs, kept afterwards; by default a fresh temp
   * folder, removed however the demo ends.
   */
  workDir?: string;
  /** Where the fresh temp work folder is made when no `workDir` is given; the system's temp directory by default. */
  tempDir?: string;
  /** How the fake backend's instance transitions land; "realistic" (a few seconds each) by default. */
  transitions?: TransitionMode;
  /** Where progress goes; process.stdout by default. */
  out?: NodeJS.WritableStream;
  /** Aborting stops the demo (or, with `keep`, ends the wait and destroys) and cleans up. */
  signal?: AbortSignal;
  /**
   * Aborting skips or cuts short the destroy that ends a `keep` run (a second Ctrl-C, SIGTERM): the
   * fake backend stops with what it holds, which lived only in this process.
   */
  hurry?: AbortSignal;
  /** Longest a cdktf deploy or destroy may take; 10 minutes by default. */
  stepTimeoutMs?: number;
  /** The provider bundle to install; this package's dist/provider.js by default. */
  providerBundle?: string;
  /** Called after the deploy, before the destroy, with the running fake backend (tests inspect it). */
  onDeployed?: (context: DeployedContext) => void | Promise<void>;
}

/** What {@link DemoOptions.onDeployed} receives. */
export interface DeployedContext {
  /** The running fake backend. */
  backend: FakeBackend;
  /** The stack's non-sensitive outputs. */
  outputs: Record<string, unknown>;
  /** The demo organization. */
  orgId: string;
  /** The stack's Terraform state file. */
  statePath: string;
}

/** What a demo run did, for callers that check it (tests). */
export interface DemoResult {
  /** The stack's non-sensitive outputs, as cdktf wrote them. */
  outputs: Record<string, unknown>;
  /** Status of the instance in the fake backend right after the deploy. */
  statusAfterDeploy: string;
  /** The organization's GPU and storage spend at the end of the deploy, in micro-yuan. */
  spendMicro: number;
  /** Instances of the demo organization not destroyed when the demo ended (0 unless hurried). */
  liveInstancesAtEnd: number;
  /** API keys of the demo organization not revoked when the demo ended (0 unless hurried). */
  liveApiKeysAtEnd: number;
  /** The work folder (already removed unless it was given as `workDir`). */
  workDir: string;
}
