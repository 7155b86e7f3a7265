import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { build } from "esbuild";
import { installProvider } from "../../src/cli/provider/provider";
import { DEMO_IDS, type DemoCredentials, type FakeBackend, startFakeBackend } from "../../src/fake-backend";
import { type ProcessResult, runProcess } from "../../src/testing/child-process";
import { version } from "../../src/version";
import { cdktfCliEnv } from "./cli-env";
import type { MarketScenario } from "./fixtures/market-app";

// The market scenarios through `cdktf deploy` for the CDKTF Instance with an offer filter, against
// the in-process fake backend, offline: the fixture app is bundled like the demo's, the provider
// installed into a private mirror, and every step deploys the scenario of the moment against one
// state. The steps run in order and build on each other. Needs the built package (dist/).

jest.setTimeout(600_000);

const ROOT = join(__dirname, "..", "..");
const CDKTF = join(
  dirname(require.resolve("cdktf-cli/package.json", { paths: [ROOT] })),
  "bundle",
  "bin",
  "cdktf",
);

let work: string;
let fake: FakeBackend;
let creds: DemoCredentials;
let env: NodeJS.ProcessEnv;
let outputsFile: string;

/** Runs the cdktf CLI in the app folder with the scenario; resolves with its exit code and output. */
function cdktf(args: string[], scenario: MarketScenario["instances"]): Promise<ProcessResult> {
  const full: MarketScenario = {
    statePath: join(work, "terraform.market.tfstate"),
    templateId: creds.template_id,
    instances: scenario,
  };
  return runProcess(process.execPath, [CDKTF, ...args], {
    cwd: join(work, "app"),
    env: { ...env, GPURENTAL_MARKET_SCENARIO: JSON.stringify(full) },
  });
}

async function deploy(scenario: MarketScenario["instances"]): Promise<Record<string, string>> {
  rmSync(outputsFile, { force: true });
  const r = await cdktf(
    ["deploy", "market", "--auto-approve", "--skip-provider-lock", "--outputs-file", outputsFile],
    scenario,
  );
  if (r.code !== 0) throw new Error(`cdktf deploy exited ${r.code}\n${r.output}`);
  lastOutput = r.output;
  const outputs = JSON.parse(readFileSync(outputsFile, "utf8")) as Record<string, Record<string, string>>;
  return outputs.market ?? {};
}
let lastOutput = "";

async function control(method: string, path: string, body?: unknown): Promise<{ id?: string }> {
  const res = await fetch(`${fake.url}/_control${path}`, {
    method,
    headers: { "x-control-token": fake.controlToken, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { id?: string };
}

async function newOffer(price: number): Promise<string> {
  const m = await control("POST", "/machines", { disk_gb: 2000 });
  return (
    await control("POST", "/offers", { machine_id: m.id, gpu_model: "RTX 4090", price_per_hour_micro: price })
  ).id!;
}

const live = () => fake.listInstances(creds.org_id).filter((i) => i.status !== "destroyed");

const RTX = { gpuModel: "RTX 4090", numGpus: 1, maxPricePerHourMicro: 3_000_000 };

beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist", "cli", "main.js"))) {
    throw new Error("the package is not built: run `npm run build` first");
  }
  work = mkdtempSync(join(tmpdir(), "gpurental-cdktf-market-"));
  outputsFile = join(work, "outputs.json");
  fake = await startFakeBackend({ port: 0, seed: "demo", transitions: "immediate" });
  creds = fake.credentials!;
  const installed = installProvider({ dir: join(work, "mirror"), version });
  writeFileSync(join(work, "terraform.rc"), installed.cliConfig);
  mkdirSync(join(work, "app"));
  await build({
    entryPoints: [join(__dirname, "fixtures", "market-app.ts")],
    outfile: join(work, "app", "app.js"),
    bundle: true,
    platform: "node",
    target: "node20",
    packages: "external",
    logLevel: "silent",
  });
  writeFileSync(
    join(work, "app", "cdktf.json"),
    JSON.stringify({
      language: "typescript",
      app: "node app.js",
      output: "cdktf.out",
      projectId: "gpurental-market-test",
      sendCrashReports: false,
      terraformProviders: [],
      terraformModules: [],
      context: {},
    }),
  );
  env = cdktfCliEnv({
    HOME: join(work, "home"),
    TMPDIR: join(work, "tmp"),
    GPURENTAL_BASE_URL: fake.url,
    GPURENTAL_TOKEN: creds.admin_session_token,
    GPURENTAL_PROVIDER_CODE_CACHE_DIR: join(work, "code-cache"),
    GPURENTAL_PROVIDER_RESIDENT: "off",
    TF_CLI_CONFIG_FILE: join(work, "terraform.rc"),
    CDKTF_HOME: join(work, "cdktf-home"),
    // The bundled app leaves cdktf, constructs and zod to be required from this package.
    NODE_PATH: join(ROOT, "node_modules"),
  });
  mkdirSync(env.HOME!, { recursive: true });
  mkdirSync(env.TMPDIR!, { recursive: true });
});

afterAll(async () => {
  await fake?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the CDKTF Instance with an offer filter, through cdktf deploy", () => {
  let market = "";

  test("deploys on the cheapest candidate, and a pinned offer as given", async () => {
    const out = await deploy({ market: { offer: RTX }, pinned: { offerId: DEMO_IDS.offerSmall } });
    // The ¥2.30 RTX 4090's machine goes into maintenance within 24 hours: tried last.
    expect(out.market_offer).toBe(DEMO_IDS.offer);
    expect(out.pinned_offer).toBe(DEMO_IDS.offerSmall);
    market = out.market_id!;
    expect(live().map((i) => i.status)).toEqual(["running", "running"]);
  });

  test("(a) a cheaper offer, (b) the chosen offer sold out and (f) the pinned offer withdrawn change nothing", async () => {
    await newOffer(1_000_000);
    await control("PATCH", `/offers/${DEMO_IDS.offer}`, { availability: "sold_out", free_units: 0 });
    await control("PATCH", `/offers/${DEMO_IDS.offerSmall}`, { availability: "withdrawn" });
    const diff = await cdktf(["diff", "market", "--skip-provider-lock"], {
      market: { offer: RTX },
      pinned: { offerId: DEMO_IDS.offerSmall },
    });
    expect({ code: diff.code }).toEqual({ code: 0 });
    expect(diff.output).toContain("No changes. Your infrastructure matches the configuration.");
    const out = await deploy({ market: { offer: RTX }, pinned: { offerId: DEMO_IDS.offerSmall } });
    expect(out.market_id).toBe(market);
    expect(live()).toHaveLength(2);
  });

  test("(c) the cheapest candidate losing the race: the new instance lands on the next, with a warning naming both", async () => {
    const cheapest = await newOffer(900_000);
    const next = await newOffer(950_000);
    await control("POST", `/offers/${cheapest}/lose-next-race`, {});
    const out = await deploy({
      market: { offer: RTX },
      pinned: { offerId: DEMO_IDS.offerSmall },
      racer: { offer: RTX },
    });
    expect(out.racer_offer).toBe(next);
    const flat = lastOutput.replace(/\s+/g, " ");
    expect(flat).toContain(`Deployed on offer ${next} (¥0.95/h) instead of offer ${cheapest} (¥0.90/h)`);
    expect(out.market_id).toBe(market);
  });

  test("(d) a filter nothing satisfies fails the deploy, saying why", async () => {
    const r = await cdktf(["deploy", "market", "--auto-approve", "--skip-provider-lock"], {
      market: { offer: RTX },
      pinned: { offerId: DEMO_IDS.offerSmall },
      racer: { offer: RTX },
      none: { offer: { ...RTX, maxPricePerHourMicro: 500_000 } },
    });
    expect(r.code).not.toBe(0);
    const flat = r.output.replace(/\s+/g, " ");
    expect(flat).toContain("No offer matches offer_filter");
    expect(flat).toContain("above the maximum price (cheapest ¥0.90/h)");
    expect(live()).toHaveLength(3);
  });

  test("(e) a tightened filter still met keeps the instance; one it does not meet replaces it", async () => {
    const tight = { ...RTX, maxPricePerHourMicro: 2_600_000, region: "cn-east-1" };
    const kept = await deploy({
      market: { offer: tight },
      pinned: { offerId: DEMO_IDS.offerSmall },
      racer: { offer: RTX },
    });
    expect(kept.market_id).toBe(market);
    // Rented at ¥2.50: a maximum of ¥2.00 no longer matches, so it is replaced, on the cheapest.
    const replaced = await deploy({
      market: { offer: { ...tight, maxPricePerHourMicro: 2_000_000 } },
      pinned: { offerId: DEMO_IDS.offerSmall },
      racer: { offer: RTX },
    });
    expect(replaced.market_id).not.toBe(market);
    expect(fake.instance(market)?.status).toBe("destroyed");
    expect(live()).toHaveLength(3);
  });

  test("destroys everything", async () => {
    const r = await cdktf(["destroy", "market", "--auto-approve", "--skip-provider-lock"], {
      market: { offer: RTX },
      pinned: { offerId: DEMO_IDS.offerSmall },
      racer: { offer: RTX },
    });
    expect({ code: r.code, tail: r.code === 0 ? "" : r.output }).toEqual({ code: 0, tail: "" });
    expect(live()).toEqual([]);
  });
});
