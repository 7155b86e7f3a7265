import { getEventListeners } from "node:events";
import { client, deployBody, fail, hang, logs, ok, server } from "../testing/scripted-server";
import { until } from "../testing/until";
import { RequestAbortedError } from "./errors";

// Transport-level behaviour (dropped connections, timeouts, odd bodies) against a tiny scripted
// server; behaviour of the real API is tested against the fake backend in client.fake-backend.test.ts.

describe("cancellation", () => {
  test("an aborted signal cancels the request in flight", async () => {
    server.always(hang);
    const ac = new AbortController();
    const p = client().getInstance("i1", { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    const e = await p.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RequestAbortedError);
    expect((e as Error).name).toBe("AbortError");
  });

  test("a deploy aborted in flight is reported as aborted, not as a failed connection", async () => {
    server.always(hang);
    const ac = new AbortController();
    const p = client().deployInstance(deployBody, { signal: ac.signal });
    // Aborted once the server holds it: in flight, whatever the machine's load.
    await until("the server has the deploy", () => server.seen.length === 1);
    ac.abort();
    const e = await p.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RequestAbortedError);
    expect(server.seen).toHaveLength(1);
    expect(logs.filter((l) => l.msg === "connection failed")).toEqual([]);
  });

  test("an abort during a retry wait stops retrying", async () => {
    server.always(fail(503, "SERVICE_UNAVAILABLE"));
    const ac = new AbortController();
    const c = client({
      sleep: async () => {
        ac.abort();
        throw new Error("aborted");
      },
    });
    await expect(c.listOffers(undefined, { signal: ac.signal })).rejects.toThrow(RequestAbortedError);
    expect(server.seen).toHaveLength(1);
  });

  test("calls leave no listeners on the long-lived client signal", async () => {
    const ac = new AbortController();
    server.always(ok({ items: [] }));
    const c = client({ signal: ac.signal });
    for (let i = 0; i < 20; i++) await c.listOffers();
    await c.listOffers(undefined, { signal: new AbortController().signal });
    expect(getEventListeners(ac.signal, "abort")).toHaveLength(0);
  });

  test("the client-wide signal cancels every call", async () => {
    const ac = new AbortController();
    ac.abort();
    server.always(ok({ items: [] }));
    await expect(client({ signal: ac.signal }).listOffers()).rejects.toThrow(RequestAbortedError);
    expect(server.seen).toHaveLength(0);
  });

  test("a call that outlives the client's stop goes on, bounded by its own signal; without one it stops", async () => {
    const stop = new AbortController();
    stop.abort();
    server.always(ok({ items: [] }));
    const c = client({ signal: stop.signal });
    const own = new AbortController();
    await expect(c.listOffers(undefined, { signal: own.signal, outlivesStop: true })).resolves.toEqual([]);
    expect(server.seen).toHaveLength(1);
    await expect(c.listOffers(undefined, { outlivesStop: true })).rejects.toThrow(RequestAbortedError);
    own.abort();
    await expect(c.listOffers(undefined, { signal: own.signal, outlivesStop: true })).rejects.toThrow(
      RequestAbortedError,
    );
    expect(server.seen).toHaveLength(1);
  });
});
