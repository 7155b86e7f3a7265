import { readFileSync, writeFileSync } from "node:fs";
import { ApiError } from "../../api/errors";
import { currentRun } from "../../journal";
import {
  body,
  bound,
  client,
  deployEnv,
  fake,
  journalOf,
  live,
  lostEntry,
} from "../../testing/instance-deploy";
import { adoptFromJournal, type DeployEnv, deployJournaled } from "./deploy";

// Sending a deploy through the journal, and adopting what an earlier one left, without Terraform:
// the journal a reader finds afterwards, the instances on the fake backend, the errors and the
// warnings. Time that the code sleeps through is a fake clock, moved by the sleeps themselves.
// The parts that need no backend (matching, fingerprints, notes): instance-deploy.pure.test.ts.

describe("journal writes after the request that fail are logged, never failing what already happened", () => {
  /** Makes the journal unwritable for this provider: a newer provider's format version. */
  function spoilJournal(): void {
    const file = journalOf(currentRun()).file;
    const [header, ...rest] = readFileSync(file, "utf8").split("\n");
    writeFileSync(file, [JSON.stringify({ ...JSON.parse(header!), version: 99 }), ...rest].join("\n"));
  }

  let written: string[];
  beforeEach(() => {
    written = [];
    jest.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
  });
  afterEach(() => jest.restoreAllMocks());

  const warnings = () =>
    written
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l["@level"] === "warn")
      .map((l) => [l["@message"], String(l.error).includes("newer provider")]);

  /**
   * A deploy environment whose client spoils the journal each time `at` is called, just before the
   * real call (and, for a `lost` deploy, loses its answer): the journal's writes after it fail.
   */
  function spoiledEnv(at: "deployInstance" | "listInstances", lost = false): DeployEnv {
    const { env } = deployEnv();
    const real = bound(env.client);
    const spoilFirst =
      <A extends unknown[], R>(call: (...a: A) => Promise<R>) =>
      async (...a: A): Promise<R> => {
        spoilJournal();
        if (lost) fake.backend.addFault({ route: "POST /v1/instances", kind: "lost-response", times: 1 });
        return call(...a);
      };
    env.client =
      at === "deployInstance"
        ? { ...real, deployInstance: spoilFirst(real.deployInstance) }
        : { ...real, listInstances: spoilFirst(real.listInstances) };
    return env;
  }

  test("the answer of a deploy", async () => {
    const env = spoiledEnv("deployInstance");
    const got = await deployJournaled(body(), env);
    expect(got.instance.id).toBe(live()[0]!.id);
    expect(warnings()).toEqual([["deploy journal: could not record a deploy's answer", true]]);
  });

  test("the instance a lost deploy created", async () => {
    const env = spoiledEnv("deployInstance", true);
    const got = await deployJournaled(body(), env);
    expect(got.instance.id).toBe(live()[0]!.id);
    expect(warnings()).toEqual([["deploy journal: could not record a deploy's instance", true]]);
  });

  test("a refused deploy", async () => {
    const env = spoiledEnv("deployInstance");
    const err = await deployJournaled(
      body({ disk_gb: 1900, offer_id: fake.creds.small_disk_offer_id }),
      env,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(warnings()).toEqual([["deploy journal: could not record a refused deploy", true]]);
  });

  test("the instance an adopted entry's deploy created", async () => {
    lostEntry(Date.now() - 60_000);
    const inst = await client().deployInstance(body());
    const env = spoiledEnv("listInstances");
    const got = await adoptFromJournal(env);
    expect(got).toMatchObject({ kind: "adopted", instance: { id: inst.id } });
    expect(warnings()).toEqual([["deploy journal: could not record an adopted instance", true]]);
  });

  test("a deploy that left nothing", async () => {
    lostEntry(Date.now() - 60_000);
    const env = spoiledEnv("listInstances");
    const got = await adoptFromJournal(env);
    expect(got.kind === "none" && got.diagnostics.map((d) => d.summary)).toEqual([
      expect.stringMatching(/never appeared$/),
    ]);
    expect(warnings()).toEqual([["deploy journal: could not record a deploy that left nothing", true]]);
  });
});
