import type { Dispatcher } from "undici";
import { GpurentalClient } from "../api/client";
import { RequestAbortedError } from "../api/errors";
import { planCreateChecks } from "../resources/instance/plan";
import { useFakeBackend } from "../testing/fake-backend";
import { SharedReads } from "./shared-reads";

const fake = useFakeBackend();

/** A read that answers when told to; counts how often it was made. */
function gate<T>() {
  let made = 0;
  const waiting: Array<{ resolve: (v: T) => void; reject: (e: unknown) => void }> = [];
  return {
    read: () => {
      made++;
      return new Promise<T>((resolve, reject) => waiting.push({ resolve, reject }));
    },
    made: () => made,
    answer: (v: T) => {
      for (const w of waiting.splice(0)) w.resolve(v);
    },
    fail: (e: unknown) => {
      for (const w of waiting.splice(0)) w.reject(e);
    },
  };
}

describe("sharedRead", () => {
  test("reads of one key in flight at once are one read; a read after it has answered asks again", async () => {
    const owner = new SharedReads();
    const g = gate<string>();
    const first = owner.read("offer 1", undefined, g.read);
    const second = owner.read("offer 1", undefined, g.read);
    const other = owner.read("offer 2", undefined, g.read);
    expect(g.made()).toBe(2);
    expect(owner.inFlight).toBe(2);
    g.answer("answer");
    await expect(Promise.all([first, second, other])).resolves.toEqual(["answer", "answer", "answer"]);
    expect(owner.inFlight).toBe(0);
    const later = owner.read("offer 1", undefined, g.read);
    expect(g.made()).toBe(3);
    g.answer("newer");
    await expect(later).resolves.toBe("newer");
  });

  test("reads of different owners (clients of other credentials) are never shared", () => {
    const g = gate<string>();
    void new SharedReads().read("me", undefined, g.read);
    void new SharedReads().read("me", undefined, g.read);
    expect(g.made()).toBe(2);
    g.answer("x");
  });

  test("a failure reaches every caller; a read aborted by its first caller is made again for the others", async () => {
    const owner = new SharedReads();
    const g = gate<string>();
    const a = owner.read("k", undefined, g.read);
    const b = owner.read("k", undefined, g.read);
    g.fail(new Error("503"));
    await expect(a).rejects.toThrow("503");
    await expect(b).rejects.toThrow("503");

    const stopped = new AbortController();
    stopped.abort();
    const leader = owner.read("k", stopped.signal, g.read);
    const follower = owner.read("k", new AbortController().signal, g.read);
    const alsoStopped = owner.read("k", stopped.signal, g.read);
    expect(g.made()).toBe(2);
    g.fail(new RequestAbortedError("GET /v1/me"));
    await expect(leader).rejects.toBeInstanceOf(RequestAbortedError);
    await expect(alsoStopped).rejects.toBeInstanceOf(RequestAbortedError);
    await new Promise((r) => setImmediate(r));
    expect(g.made()).toBe(3);
    g.answer("own");
    await expect(follower).resolves.toBe("own");
  });
});

describe("plan-time checks of several instances at once", () => {
  test("make each read once, and find the same as alone", async () => {
    const requests: string[] = [];
    const counting = fake.agent.compose(
      (dispatch: Dispatcher["dispatch"]) =>
        (opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) => {
          requests.push(`${opts.method} ${String(opts.path).split("?")[0]}`);
          return dispatch(opts, handler);
        },
    );
    const client = new GpurentalClient({
      baseUrl: fake.url,
      token: fake.creds.admin_session_token,
      dispatcher: counting,
    });
    const input = {
      offer_id: fake.creds.offer_id,
      offer_filter: null,
      template_id: fake.creds.template_id,
      disk_gb: 50,
      ssh_key_id: null,
    };
    const signal = new AbortController().signal;
    const provider = {
      client,
      credential: { kind: "unknown" as const, orgId: undefined },
      reads: new SharedReads(),
    };
    const alone = await planCreateChecks(provider, input, signal);
    const readsAlone = requests.splice(0).sort();
    const together = await Promise.all(
      Array.from({ length: 10 }, () => planCreateChecks(provider, input, signal)),
    );
    expect(requests.sort()).toEqual(readsAlone);
    for (const t of together) expect(t).toEqual(alone);
    expect(provider.reads.inFlight).toBe(0);
  });
});
