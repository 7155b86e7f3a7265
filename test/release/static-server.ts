import { readFile, stat } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { extname, join, resolve, sep } from "node:path";

// A small static HTTPS file server for the release's site folder, as any file server or object
// store would serve it. `overrides` replaces a file's bytes (a tampered zip, a wrong signature).

/** A running static server. */
export interface StaticServer {
  port: number;
  /** Files served instead of the folder's, by URL path (e.g. "/releases/0.1.0/x.zip"). */
  overrides: Map<string, Buffer>;
  /** The paths requested, in order. */
  requests: string[];
  close(): Promise<void>;
}

const TYPES: Record<string, string> = { ".json": "application/json", ".zip": "application/zip" };

/** Serves `dir` over HTTPS on 127.0.0.1 with the given certificate. */
export async function serveStatic(
  dir: string,
  tls: { certPem: string; keyPem: string },
): Promise<StaticServer> {
  const base = resolve(dir);
  const overrides = new Map<string, Buffer>();
  const requests: string[] = [];
  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "https://localhost").pathname);
    requests.push(path);
    const file = resolve(join(base, path));
    const send = (status: number, body: Buffer | string, type = "text/plain") => {
      res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
      res.end(req.method === "HEAD" ? undefined : body);
    };
    const type =
      TYPES[extname(file)] ?? (extname(file) === "" ? "application/json" : "application/octet-stream");
    const override = overrides.get(path);
    if (override) return send(200, override, type);
    if (!file.startsWith(base + sep)) return send(404, "not found\n");
    stat(file)
      .then(async (st) => (st.isFile() ? send(200, await readFile(file), type) : send(404, "not found\n")))
      .catch(() => send(404, "not found\n"));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return {
    port: (server.address() as AddressInfo).port,
    overrides,
    requests,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
