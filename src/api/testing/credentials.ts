// One credential of every kind the project handles, and the shapes in which each reaches a sink
// (an error, a log line, a diagnostic, a command's output). Tests of every sink feed these in and
// check that none comes out. Plain data, no test framework.

/** A sample of each credential kind; none is the token of the client under test. */
export const CREDENTIALS = {
  /** A signed-in session token. */
  session: `gps_${"5e".repeat(24)}`,
  /** An API key secret. */
  keySecret: `gpr_${"a7".repeat(24)}`,
  /** A bearer credential of no gpurental shape (another service's, or a custom one). */
  bearer: "opaque-bearer.Zm9vYmFy.9f8e7d",
  /** An instance access token (the JupyterLab token, the app ports' bearer key). */
  accessToken: "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
  /** The value of a secret environment variable. */
  secretEnvValue: "hunter2-correct-horse-battery",
  /** A password in a connection string or a form. */
  password: "pa55-w0rd-in-a-form",
} as const;

/** A credential kind. */
export type CredentialKind = keyof typeof CREDENTIALS;

/** Free text carrying one credential, as a server message, an error or a log message may hold it. */
export const CREDENTIAL_TEXTS: readonly (readonly [shape: string, text: string, secret: string])[] = [
  ["a session token in a sentence", `401 for ${CREDENTIALS.session} on GET /v1/me`, CREDENTIALS.session],
  ["an API key secret in a sentence", `created key ${CREDENTIALS.keySecret}.`, CREDENTIALS.keySecret],
  ["an API key secret in JSON", `{"secret":"${CREDENTIALS.keySecret}"}`, CREDENTIALS.keySecret],
  ["an Authorization header", `Authorization: Bearer ${CREDENTIALS.bearer}`, CREDENTIALS.bearer],
  ["a bearer credential in lower case", `sent bearer ${CREDENTIALS.bearer} twice`, CREDENTIALS.bearer],
  [
    "an Authorization value of another scheme in JSON",
    `{"authorization":"Basic ${CREDENTIALS.bearer}"}`,
    CREDENTIALS.bearer,
  ],
  ["an access_token field in JSON", `{"access_token":"${CREDENTIALS.accessToken}"}`, CREDENTIALS.accessToken],
  ["an access_token in text", `access_token: ${CREDENTIALS.accessToken}`, CREDENTIALS.accessToken],
  [
    "a jupyter_url with its token query",
    `jupyter_url https://203.0.113.10:50022/lab?token=${CREDENTIALS.accessToken}`,
    CREDENTIALS.accessToken,
  ],
  [
    "an open_url with its token query and more",
    `https://relay.example/i/1/?token=${CREDENTIALS.accessToken}&tab=2`,
    CREDENTIALS.accessToken,
  ],
  ["a JUPYTER_TOKEN assignment", `JUPYTER_TOKEN=${CREDENTIALS.accessToken}`, CREDENTIALS.accessToken],
  ["an X-Control-Token header", `X-Control-Token: ${CREDENTIALS.password}`, CREDENTIALS.password],
  ["a password in a connection string", `password=${CREDENTIALS.password};host=db`, CREDENTIALS.password],
  ["an api_key assignment", `api_key='${CREDENTIALS.password}'`, CREDENTIALS.password],
  [
    "a password in a URL",
    `cannot reach postgres://tf:${CREDENTIALS.password}@db.example:5432/state`,
    CREDENTIALS.password,
  ],
  [
    "a user name that is a token, in a URL",
    `"https://${CREDENTIALS.bearer}@git.example/x"`,
    CREDENTIALS.bearer,
  ],
];

/** Structured values carrying credentials, as log fields or error details hold them. */
export const CREDENTIAL_VALUES: readonly (readonly [shape: string, value: unknown, secret: string])[] = [
  ["a field named token", { token: "plain-looking-value-1" }, "plain-looking-value-1"],
  ["a field named secret", { secret: "plain-looking-value-2" }, "plain-looking-value-2"],
  ["a field named password", { password: "plain-looking-value-3" }, "plain-looking-value-3"],
  ["a field named Authorization", { Authorization: "Basic plain-looking-value-4" }, "plain-looking-value-4"],
  ["a field named access_token", { access_token: CREDENTIALS.accessToken }, CREDENTIALS.accessToken],
  ["a field named client_secret", { client_secret: "plain-looking-value-5" }, "plain-looking-value-5"],
  ["a header named X-Control-Token", { "X-Control-Token": "plain-looking-value-6" }, "plain-looking-value-6"],
  ["a header named Set-Cookie", { "set-cookie": "sid=plain-looking-value-7" }, "plain-looking-value-7"],
  ["a field named api_key", { api_key: "plain-looking-value-8" }, "plain-looking-value-8"],
  ["a field named private_key", { private_key: "plain-looking-value-9" }, "plain-looking-value-9"],
  ["a number under a credential name", { token: 918273645 }, "918273645"],
  [
    "an instance's URLs",
    {
      instance: {
        jupyter_url: `https://203.0.113.10:50022/lab?token=${CREDENTIALS.accessToken}`,
        open_url: `https://203.0.113.10:60022/?token=${CREDENTIALS.accessToken}`,
      },
    },
    CREDENTIALS.accessToken,
  ],
  [
    "a secret env entry of a deploy body",
    { env_overrides: [{ key: "DB_URL", value: CREDENTIALS.secretEnvValue, secret: true }] },
    CREDENTIALS.secretEnvValue,
  ],
  [
    "the secret_env map of an instance",
    { config: { secret_env: { DB_URL: CREDENTIALS.secretEnvValue } } },
    CREDENTIALS.secretEnvValue,
  ],
  ["an error", { error: new Error(`refused ${CREDENTIALS.session}`) }, CREDENTIALS.session],
  ["text deep in arrays", { a: [[{ note: `see ${CREDENTIALS.keySecret}` }]] }, CREDENTIALS.keySecret],
];
