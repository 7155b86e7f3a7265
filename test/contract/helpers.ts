import { type DemoCredentials, type FakeBackend, startFakeBackend } from "../../src/fake-backend";

/** A parsed HTTP answer. */
export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests index freely into JSON answers
  body: any;
  headers: Headers;
}

/** Error object of a failed answer. */
export function errorOf(a: Answer): { code: string; message: string; [k: string]: unknown } {
  return a.body?.error;
}

/** Plain fetch against the fake, with a bearer token and optional JSON body. */
export async function call(
  fb: FakeBackend,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined && !("content-type" in headers)) headers["content-type"] = "application/json";
  const res = await fetch(`${fb.url}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    // leave as text
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** Starts one fake for a test file and reseeds it before each test. */
export function useFake(): { fb: () => FakeBackend; creds: () => DemoCredentials } {
  let fb: FakeBackend | undefined;
  let creds: DemoCredentials | undefined;
  beforeAll(async () => {
    fb = await startFakeBackend({ seed: "none" });
  });
  beforeEach(() => {
    fb?.clock.unfreeze();
    fb?.setTransitions("immediate");
    creds = fb?.seedDemo();
  });
  afterAll(async () => {
    await fb?.close();
  });
  return {
    fb: () => {
      if (!fb) throw new Error("fake not started");
      return fb;
    },
    creds: () => {
      if (!creds) throw new Error("fake not seeded");
      return creds;
    },
  };
}

/** Creates an API key through the API and returns its id and secret. */
export async function createKey(
  fb: FakeBackend,
  sessionToken: string,
  kind: "personal" | "team" = "personal",
  name = `${kind} key`,
): Promise<{ id: string; secret: string; prefix: string }> {
  const a = await call(fb, "POST", "/v1/api-keys", { token: sessionToken, body: { name, kind } });
  if (a.status !== 201) throw new Error(`key creation failed: ${a.status} ${JSON.stringify(a.body)}`);
  return { id: a.body.key.id, secret: a.body.secret, prefix: a.body.key.prefix };
}

/** Deploys with the demo defaults merged with `over`. */
export async function deploy(
  fb: FakeBackend,
  creds: DemoCredentials,
  token: string,
  over: Record<string, unknown> = {},
): Promise<Answer> {
  return call(fb, "POST", "/v1/instances", {
    token,
    body: { offer_id: creds.offer_id, template_id: creds.template_id, disk_gb: 50, ...over },
  });
}

/** Deploys and waits (one request later, immediate transitions) until it runs; returns the id. */
export async function runningInstance(
  fb: FakeBackend,
  creds: DemoCredentials,
  token = creds.admin_session_token,
  over: Record<string, unknown> = {},
): Promise<string> {
  const a = await deploy(fb, creds, token, over);
  if (a.status !== 201) throw new Error(`deploy failed: ${a.status} ${JSON.stringify(a.body)}`);
  const got = await call(fb, "GET", `/v1/instances/${a.body.id}`, { token });
  if (got.body.status !== "running") throw new Error(`expected running, got ${got.body.status}`);
  return a.body.id;
}

/** GET an instance's current object. */
export async function getInstance(fb: FakeBackend, token: string, id: string): Promise<Answer> {
  return call(fb, "GET", `/v1/instances/${id}`, { token });
}
