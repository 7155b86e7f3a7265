import { fingerprintOf, secretDigest } from "../../journal";
import type { DeploySettings } from "../../provider/provider-data";
import { client, env, fake, journal } from "../../testing/api-key-journal";
import { createKeyJournaled } from "./journal";

// Key creations and the sweep of lost keys, called directly with a client of the in-process fake
// backend and a journal in a temporary working directory. What is asserted is what a user or the
// journal's next reader sees: the keys live on the backend, the journal's entries and how they were
// closed, the errors and the warnings logged.

describe("fingerprints", () => {
  const account: DeploySettings["account"] = { base_url: "https://api.example", org_id: null };

  test("a key creation's entry is fingerprinted by its name, kind and account", async () => {
    const fp = async (
      name: string,
      kind: "team" | "personal",
      acct: DeploySettings["account"] = { base_url: fake.url, org_id: null },
    ) => {
      const j = journal();
      const made = await createKeyJournaled({ name, kind }, env(client(), j, { account: acct }));
      return j.entries().find((e) => e.entry === made.entry)!.fingerprint;
    };
    const ci = await fp("ci", "team");
    expect(await fp("ci", "team")).toBe(ci);
    const others = [
      await fp("cd", "team"),
      await fp("ci", "personal"),
      await fp("ci", "team", { base_url: fake.url, org_id: fake.creds.org_id }),
    ];
    expect(new Set([ci, ...others]).size).toBe(4);
    expect(ci).toBe(
      fingerprintOf({
        kind: "api_key",
        account: { base_url: fake.url, org_id: null },
        name: "ci",
        key_kind: "team",
      }),
    );
  });

  test("fingerprints and secret digests stay what earlier releases wrote, so their journals still match", () => {
    expect(fingerprintOf({ kind: "api_key", account, name: "ci", key_kind: "team" })).toBe(
      "sha256:711bdca881bd38105f755030d84cbd8e1c2efd6b6d72c595627d05c91266b2b5",
    );
    expect(secretDigest({ PASSWORD: "hunter2" })).toBe("332aba4715bd3ed8523621dddbd5a503");
    expect(fingerprintOf({ label: "a" }, { PASSWORD: "hunter2" })).toBe(
      "sha256:735860e71ac064d1db280042f9b296d5107631060cf727df081a90a8fa1e6039",
    );
  });

  test("no secrets, empty secrets and null secrets are the same configuration; any secret value changes it", () => {
    const plain = fingerprintOf({ label: "a" });
    expect(fingerprintOf({ label: "a" }, {})).toBe(plain);
    expect(fingerprintOf({ label: "a" }, null)).toBe(plain);
    expect(fingerprintOf({ label: "a" }, { PASSWORD: "hunter2" })).not.toBe(plain);
    expect(fingerprintOf({ label: "a" }, { PASSWORD: "hunter3" })).not.toBe(
      fingerprintOf({ label: "a" }, { PASSWORD: "hunter2" }),
    );
    expect(fingerprintOf({ label: "a" }, { PASSWORD: "hunter2" })).not.toContain("hunter2");
  });
});
