import { ApiError, NetworkError } from "../api/errors";
import { findDeployCandidates } from "../api/reconcile";
import { isTransient } from "../api/waiter";
import { useFakeBackend } from "../testing/fake-backend";
import { CLOCK_SKEW_MS, createdInWindow, LATE_COMMIT_HORIZON_MS, listUntilFound } from "./lost-requests";

// Finding what a request whose answer was lost created: the window its object's created_at must
// fall in, the listing loop (on a fake clock moved by its sleeps), and the candidates of a lost
// deploy as the API lists them.

describe("createdInWindow", () => {
  const sentAt = Date.parse("2026-11-24T10:00:00.000Z");
  const at = (ms: number) => new Date(ms).toISOString();

  test("the window is two minutes of clock skew before the send to a day after it", () => {
    expect(CLOCK_SKEW_MS).toBe(120_000);
    expect(LATE_COMMIT_HORIZON_MS).toBe(86_400_000);
  });

  test.each<[string, string | null, boolean]>([
    ["at the send", at(sentAt), true],
    ["the skew before it", at(sentAt - CLOCK_SKEW_MS), true],
    ["just past the skew", at(sentAt - CLOCK_SKEW_MS - 1), false],
    ["a day after", at(sentAt + LATE_COMMIT_HORIZON_MS), true],
    ["just past a day after", at(sentAt + LATE_COMMIT_HORIZON_MS + 1), false],
    ["unknown (null)", null, true],
    ["unreadable", "yesterday-ish", true],
  ])("created %s: %s", (_what, createdAt, inside) => {
    expect(createdInWindow(createdAt, sentAt)).toBe(inside);
  });
});

describe("listUntilFound", () => {
  /** A loop whose clock moves only by its sleeps, which are recorded. */
  function loop(find: (signal: AbortSignal | undefined) => Promise<string[]>, windowMs = 5000) {
    const clock = { t: 1_000_000, sleeps: [] as number[], finds: 0 };
    return {
      clock,
      run: (over: Partial<Parameters<typeof listUntilFound<string>>[0]> = {}) =>
        listUntilFound<string>({
          find: (sig) => {
            clock.finds++;
            return find(sig);
          },
          isTransient,
          windowMs,
          signal: undefined,
          sleep: async (ms) => {
            clock.sleeps.push(ms);
            clock.t += ms;
          },
          now: () => clock.t,
          ...over,
        }),
    };
  }

  test("found at once: no wait", async () => {
    const l = loop(async () => ["a"]);
    expect(await l.run()).toEqual(["a"]);
    expect(l.clock.sleeps).toEqual([]);
  });

  test("lists, backing off from 250 ms to 2 s, until the window would be passed", async () => {
    const l = loop(async () => [], 8000);
    expect(await l.run()).toEqual([]);
    expect(l.clock.sleeps).toEqual([250, 500, 1000, 2000, 2000, 2000]);
    expect(l.clock.finds).toBe(7);
  });

  test("a wait that ends exactly at the window's end is still taken", async () => {
    const l = loop(async () => [], 750);
    await l.run();
    expect(l.clock.sleeps).toEqual([250, 500]);
    expect(l.clock.finds).toBe(3);
  });

  test("an empty window lists once", async () => {
    const l = loop(async () => [], 0);
    expect(await l.run()).toEqual([]);
    expect(l.clock.finds).toBe(1);
  });

  test("what shows up later is returned", async () => {
    let n = 0;
    const l = loop(async () => (++n === 3 ? ["late"] : []));
    expect(await l.run()).toEqual(["late"]);
    expect(l.clock.sleeps).toEqual([250, 500]);
  });

  test("a transient listing failure is retried", async () => {
    let n = 0;
    const l = loop(async () => {
      n++;
      if (n === 1) throw new NetworkError("GET /v1/instances", "connection refused");
      if (n === 2)
        throw new ApiError({
          endpoint: "GET /v1/instances",
          status: 503,
          code: "SERVICE_UNAVAILABLE",
          message: "busy",
        });
      return ["x"];
    });
    expect(await l.run()).toEqual(["x"]);
    expect(l.clock.sleeps).toEqual([250, 500]);
  });

  test("any other failure is thrown at once", async () => {
    const refused = new ApiError({
      endpoint: "GET /v1/instances",
      status: 403,
      code: "FORBIDDEN",
      message: "no",
    });
    const l = loop(async () => {
      throw refused;
    });
    await expect(l.run()).rejects.toBe(refused);
    expect(l.clock.sleeps).toEqual([]);
  });

  test("a failure once the signal is aborted ends it with nothing, whatever the failure", async () => {
    const stop = new AbortController();
    const l = loop(async () => {
      stop.abort(new Error("stop"));
      throw new ApiError({ endpoint: "GET /v1/instances", status: 403, code: "FORBIDDEN", message: "no" });
    });
    expect(await l.run({ signal: stop.signal })).toEqual([]);
    expect(l.clock.sleeps).toEqual([]);
  });

  test("an abort during a wait ends it with nothing, without listing again", async () => {
    const stop = new AbortController();
    const l = loop(async () => []);
    const signals: (AbortSignal | undefined)[] = [];
    const got = await l.run({
      signal: stop.signal,
      find: async () => {
        l.clock.finds++;
        return [];
      },
      sleep: async (ms, sig) => {
        signals.push(sig);
        l.clock.t += ms;
        stop.abort(new Error("stop"));
        throw new Error("aborted");
      },
    });
    expect(got).toEqual([]);
    expect(l.clock.finds).toBe(1);
    expect(signals).toEqual([stop.signal]);
  });

  test("the loop's signal is what each listing gets", async () => {
    const stop = new AbortController();
    const seen: (AbortSignal | undefined)[] = [];
    const l = loop(async (sig) => {
      seen.push(sig);
      return seen.length === 2 ? ["x"] : [];
    });
    expect(await l.run({ signal: stop.signal })).toEqual(["x"]);
    expect(seen).toEqual([stop.signal, stop.signal]);
  });

  test("a wait that fails without an abort is not an end: it lists again", async () => {
    let n = 0;
    const l = loop(async () => (++n === 2 ? ["x"] : []));
    const got = await l.run({
      sleep: async (ms) => {
        l.clock.t += ms;
        throw new Error("a timer that failed");
      },
    });
    expect(got).toEqual(["x"]);
  });
});

describe("findDeployCandidates", () => {
  const fake = useFakeBackend();
  let offerId: string;

  beforeEach(() => {
    // An offer with room for every instance of a test.
    offerId = fake.backend.createOffer({
      machine_id: fake.backend.createMachine({ disk_gb: 4000 }).id,
      free_units: 30,
    }).id;
  });

  const client = () => fake.client();
  const body = (over: Record<string, unknown> = {}) => ({
    offer_id: offerId,
    template_id: fake.creds.template_id,
    disk_gb: 50,
    ...over,
  });

  test("every field the request set must match, the label too (none matches none)", async () => {
    const c = client();
    const unlabelled = await c.deployInstance(body());
    const labelled = await c.deployInstance(body({ label: "web" }));
    await c.deployInstance(body({ disk_gb: 60 }));
    await c.deployInstance(body({ label: "db" }));
    await c.deployInstance(body({ template_id: fake.backend.createTemplate({ name: "another" }).id }));
    await c.deployInstance(body({ offer_id: fake.creds.offer_id }));
    const sentAt = Date.now();
    expect((await findDeployCandidates(c, body(), { sentAt })).map((i) => i.id)).toEqual([unlabelled.id]);
    expect((await findDeployCandidates(c, body({ label: "web" }), { sentAt })).map((i) => i.id)).toEqual([
      labelled.id,
    ]);
  });

  test("destroyed instances are candidates too", async () => {
    const c = client();
    const inst = await c.deployInstance(body());
    await c.destroyInstance(inst.id);
    expect(fake.backend.instance(inst.id)!.status).toBe("destroyed");
    expect((await findDeployCandidates(c, body(), { sentAt: Date.now() })).map((i) => i.id)).toEqual([
      inst.id,
    ]);
  });

  test("created earlier than the send less the clock skew (5 minutes unless given) is no candidate", async () => {
    const c = client();
    const inst = await c.deployInstance(body());
    const created = Date.parse(inst.created_at!);
    const find = (sentAt: number, clockSkewMs?: number) =>
      findDeployCandidates(c, body(), { sentAt, ...(clockSkewMs === undefined ? {} : { clockSkewMs }) }).then(
        (l) => l.map((i) => i.id),
      );
    expect(await find(created + 5 * 60_000)).toEqual([inst.id]);
    expect(await find(created + 5 * 60_000 + 1)).toEqual([]);
    expect(await find(created + 1000, 1000)).toEqual([inst.id]);
    expect(await find(created + 1001, 1000)).toEqual([]);
  });

  test("an instance whose created_at is unknown or unreadable stays a candidate", async () => {
    // The contract allows a null created_at; the fake backend always sets one, so these are the
    // listed instances as such a server would answer them.
    const c = client();
    const inst = await c.deployInstance(body());
    const lister = {
      listInstances: async () => [
        { ...inst, id: "undated", created_at: null },
        { ...inst, id: "unreadable", created_at: "not a time" as string },
        { ...inst, id: "too_old", created_at: "2000-01-01T00:00:00Z" },
      ],
    };
    expect((await findDeployCandidates(lister, body(), { sentAt: Date.now() })).map((i) => i.id)).toEqual([
      "undated",
      "unreadable",
    ]);
  });

  test("an aborted signal reaches the listing", async () => {
    const stop = new AbortController();
    stop.abort(new Error("stop"));
    await expect(
      findDeployCandidates(client(), body(), { sentAt: Date.now(), signal: stop.signal }),
    ).rejects.toThrow();
  });
});
