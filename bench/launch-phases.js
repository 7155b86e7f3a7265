"use strict";
// How bench/launches.js reads a traced plan: the events of each provider launch in Terraform's
// TF_LOG=trace log, joined by pid with the marks each process noted (bench/launch-marks.js), and
// cut into phases with their wall and CPU times. Pure: the caller runs the plan and reads the files.

/** Terraform's own log: the events of each provider launch, in order. */
function parseTerraformLog(text) {
  const launches = [];
  let cur;
  for (const line of text.split("\n")) {
    const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z) \[\w+\]\s+(.*)$/.exec(line);
    if (!m) continue;
    const t = Date.parse(m[1]);
    const msg = m[2];
    if (msg.startsWith("provider: configuring client automatic mTLS")) {
      cur = { mtls: t, calls: [] };
      launches.push(cur);
    }
    if (!cur) continue;
    if (msg.startsWith("provider: starting plugin:")) cur.starting = t;
    else if (msg.startsWith("provider: plugin started:")) cur.pid = Number(/pid=(\d+)/.exec(msg)?.[1]);
    else if (msg.startsWith("provider: using plugin:")) cur.handshakeRead = t;
    else if (/^GRPCProvider\.v6: \w+$/.test(msg)) {
      const call = msg.slice("GRPCProvider.v6: ".length);
      if (call === "Close") cur.close = t;
      else cur.calls.push({ call, t });
    } else if (msg.startsWith("provider: plugin process exited:")) cur.exited = t;
  }
  return { launches };
}

/** Joins Terraform's launches with the processes' marks (by pid), and cuts them into phases. */
function launchesOf(tf, procs) {
  return tf.launches.map((l, i) => {
    const p = procs.find((x) => x.pid === l.pid) ?? procs[i];
    return { tf: l, proc: p, phases: p ? phasesOf(l, p) : [] };
  });
}

/**
 * The phases of one launch: [label, wall ms, cpu ms or NaN]. Wall times are the clock between two
 * events (Terraform's log has millisecond timestamps); CPU times are the process's own, between two
 * of its marks.
 */
function phasesOf(l, p) {
  const ms = p.marks;
  const find = (what, phase, from = 0) =>
    ms.find((m, i) => i >= from && m.what === what && (phase === undefined || m.phase === phase));
  const findLast = (re) => [...ms].reverse().find((m) => re.test(m.what));
  const out = [];
  const add = (label, a, b, cpu = true) => {
    if (a === undefined || b === undefined) return;
    const at = (x) => (typeof x === "number" ? x : x.t);
    const wall = at(b) - at(a);
    const c = cpu && typeof a === "object" && typeof b === "object" ? b.cpu - a.cpu : Number.NaN;
    out.push([label, wall, c]);
  };
  const preload = find("preload");
  const preloadEnd = find("preload end");
  const exit = find("exit");
  const compile = (f) => find(`compile ${f}`, "start");
  const ran = (f) => find(`run ${f}`, "end");
  add("Terraform: its client certificate", l.mtls, l.starting, false);
  // CPU from exec (the process's count starts there) to the preload.
  if (preload) out.push(["exec, node's own start-up", preload.t - l.starting, preload.cpu]);
  add("(the measuring preload itself)", preload, preloadEnd);
  add("executable, launcher, code cache found", preloadEnd, compile("provider.js"));
  add("provider.js: code cache, top level", compile("provider.js"), ran("provider.js"));
  const key = find("key pair", "start");
  const signed = find("sign", "end");
  const handshake = find("handshake");
  add("cookie, protocol, resident mode off", ran("provider.js"), key ?? handshake);
  add("certificate: key pair, DER, signature", key, signed);
  add("listener bound, handshake line written", signed ?? ran("provider.js"), handshake);
  add("provider-transport.js (grpc-js, http2, tls)", handshake, ran("provider-transport.js"));
  const accept = find("accept");
  const tls = find("tls");
  if (accept && ran("provider-transport.js"))
    out.push([
      "the host's connection waits for it",
      Math.max(0, accept.t - ran("provider-transport.js").t),
      Math.max(0, accept.cpu - ran("provider-transport.js").cpu),
    ]);
  add("TLS handshake (mTLS)", accept, tls);
  // The calls, from the TLS session to Terraform's Close.
  const lastRpc = findLast(/^rpc /);
  const callsEnd = l.close ?? lastRpc?.t;
  if (tls && callsEnd !== undefined) {
    if (!lastRpc && exit) {
      // The schema-only launch: GetProviderSchema answered from the pre-encoded bytes, no service.
      out.push(["calls (GetProviderSchema pre-encoded), to Close", callsEnd - tls.t, Number.NaN]);
      out.push(["Close to exit (Shutdown)", exit.t - callsEnd, Number.NaN]);
      out.push(["  CPU from the TLS session to exit", exit.t - tls.t, exit.cpu - tls.cpu]);
    }
    if (lastRpc) for (const row of callRows(ms, tls, lastRpc)) out.push(row);
  }
  if (exit && lastRpc)
    out.push(["last answer to exit (Close, Shutdown)", exit.t - lastRpc.t, exit.cpu - lastRpc.cpu]);
  add("exit seen by Terraform", exit, l.exited, false);
  if (exit)
    out.push(["= the launch, Terraform's start to exit seen", (l.exited ?? exit.t) - l.mtls, exit.cpu]);
  return out;
}

/**
 * The calls of a launch, from its TLS session to the end of its last call: each moment between
 * two marks goes to what was running then: loading provider-impl.js, else an API request (all of
 * its time, whatever else runs meanwhile), else the RPC handlers open (shared equally when
 * Terraform has several in flight), else gRPC, HTTP/2, TLS and Terraform between calls. So the
 * rows add up to the whole, however many calls overlap.
 */
function callRows(ms, tls, lastRpc) {
  const from = ms.indexOf(tls);
  const to = ms.indexOf(lastRpc);
  const open = new Map(); // label -> count open
  const sums = new Map(); // row label -> { wall, cpu, n }
  const row = (label) => {
    let r = sums.get(label);
    if (!r) {
      r = { wall: 0, cpu: 0, n: 0 };
      sums.set(label, r);
    }
    return r;
  };
  const IMPL = "  provider-impl.js (zod, framework, resources)";
  const BETWEEN = "  gRPC, HTTP/2, TLS, Terraform between calls";
  row(IMPL);
  for (let i = from; i < to; i++) {
    const m = ms[i];
    const label = /^(compile|run) provider-impl\.js$/.test(m.what)
      ? IMPL
      : m.what.startsWith("rpc ")
        ? `  ${m.what.slice(4)}`
        : m.what.startsWith("http ") && m.what !== "http connected"
          ? `    API ${m.what.slice(5).replace(/\/[0-9a-f-]{36}/g, "/{id}")}`
          : undefined;
    if (label && m.phase === "start") {
      open.set(label, (open.get(label) ?? 0) + 1);
      row(label).n += 1;
    } else if (label && m.phase === "end") open.set(label, (open.get(label) ?? 1) - 1);
    const next = ms[i + 1];
    const dt = next.t - m.t;
    const dc = next.cpu - m.cpu;
    const live = [...open].filter(([, n]) => n > 0).map(([k]) => k);
    const impl = live.filter((k) => k === IMPL);
    const api = live.filter((k) => k.startsWith("    API"));
    const rpcs = live.filter((k) => k.startsWith("  ") && !k.startsWith("    ") && k !== IMPL);
    const owners = impl.length ? impl : api.length ? api : rpcs.length ? rpcs : [BETWEEN];
    for (const k of owners) {
      row(k).wall += dt / owners.length;
      row(k).cpu += dc / owners.length;
    }
  }
  const rows = [["calls, from the TLS session to the last answer", lastRpc.t - tls.t, lastRpc.cpu - tls.cpu]];
  for (const [label, r] of sums) {
    if (label === IMPL && r.n === 0) continue;
    const count = r.n > 1 && label !== IMPL ? ` (${r.n})` : "";
    rows.push([`${label}${count}`, r.wall, r.cpu]);
  }
  return rows;
}

module.exports = { parseTerraformLog, launchesOf };
