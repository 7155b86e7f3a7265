#!/usr/bin/env node
// Builds what the provider executable loads at start-up:
//   1. src/plugin/proto/descriptor.json, the parsed form of our .proto files, so that the provider
//      never parses .proto text at launch (protobufjs/light reads the JSON directly);
//   2. dist/provider-bundle/: provider.js, an esbuild bundle of src/executable/main.ts (up to the
//      handshake), so that start-up reads one file instead of resolving and compiling hundreds of
//      modules; provider-transport.js and provider-impl.js beside it (loaded after the handshake);
//      provider-launcher.js, which loads them with a V8 code cache (src/executable/code-cache-loader.ts);
//      provider-journal-pg.js, the PostgreSQL journal's client, run in a worker thread; and
//      provider-schema.pb, the GetProviderSchema answer encoded at build time.
//      The directory keeps them apart from tsc's output (src/provider.ts compiles to dist/provider.js).
// Usage: node scripts/build/bundle-provider.js [--descriptor-only] [--outdir <dir>] [--entry <ts> --outfile <js>]
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..", "..");
const protoDir = path.join(root, "src", "plugin", "proto");
const PROTO_FILES = ["timestamp.proto", "tfplugin6.proto", "grpc_controller.proto", "health.proto"];

/** Parses our .proto files (snake_case names kept) into protobufjs JSON. */
function buildDescriptor() {
  const protobuf = require("protobufjs");
  const rootNs = new protobuf.Root();
  for (const file of PROTO_FILES) {
    const source = fs.readFileSync(path.join(protoDir, file), "utf8");
    protobuf.parse(source, rootNs, { keepCase: true, alternateCommentMode: false });
  }
  rootNs.resolveAll();
  return rootNs.toJSON({ keepComments: false });
}

/** The descriptor as the committed file holds it. */
function descriptorText() {
  return `${JSON.stringify(buildDescriptor(), null, 2)}\n`;
}

function writeDescriptor() {
  const out = path.join(protoDir, "descriptor.json");
  fs.writeFileSync(out, descriptorText());
  // Keep the committed file in the project's format (the sync test compares parsed JSON). Biome
  // runs in the project root: from elsewhere it finds no biome.json and indents with tabs.
  const biome = path.join(root, "node_modules", ".bin", "biome");
  if (fs.existsSync(biome))
    spawnSync(biome, ["format", "--write", out], {
      stdio: "ignore",
      cwd: root,
    });
  return out;
}

// grpc-js requires @grpc/proto-loader (and through it the full protobufjs with its .proto parser)
// only to serve channelz and ORCA, which the provider never registers. Leaving them out takes a
// third off the bundle, and parsing the bundle is most of the start-up time.
const unusedModules = {
  name: "unused-modules",
  setup(build) {
    build.onResolve({ filter: /^@grpc\/proto-loader$/ }, (args) => ({
      path: args.path,
      namespace: "unused",
    }));
    build.onLoad({ filter: /.*/, namespace: "unused" }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`${args.path} is not part of the provider bundle`)});`,
      loader: "js",
    }));
  },
};

// grpc-js requires `http` (HTTP CONNECT proxies), `dns` (the dns: resolver) and `zlib` (compressed
// messages) at module load, but a provider server on a unix socket or 127.0.0.1 uses none of them,
// and Terraform does not compress. Not loading dns and zlib saves about 1 ms per launch (Node's
// http2 loads http itself). grpc-js only touches them inside functions, so it gets a stand-in that
// loads the real module on first use.
const LAZY_BUILTINS = /^(node:)?(http|dns|zlib)$/;
const lazyBuiltins = {
  name: "lazy-builtins",
  setup(build) {
    build.onResolve({ filter: LAZY_BUILTINS }, (args) =>
      /[\\/]@grpc[\\/]grpc-js[\\/]/.test(args.importer)
        ? { path: args.path.replace(/^node:/, ""), namespace: "lazy-builtin" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, (args) => ({
      contents: [
        "let real;",
        `const load = () => (real ??= require(${JSON.stringify(`node:${args.path}`)}));`,
        "module.exports = new Proxy({}, {",
        "  get: (_, key) => load()[key],",
        "  has: (_, key) => key in load(),",
        "  ownKeys: () => Reflect.ownKeys(load()),",
        "  getOwnPropertyDescriptor: (_, key) => {",
        "    const d = Reflect.getOwnPropertyDescriptor(load(), key);",
        "    return d && { ...d, configurable: true };",
        "  },",
        "});",
      ].join("\n"),
      loader: "js",
    }));
  },
};

// grpc-js's index initialises its client side too (channels, subchannels, load balancers, HTTP
// proxies, name resolvers) and its channelz and ORCA code reach the client through make-client.
// The provider's gRPC half (src/plugin/grpc-server.ts) gets the server half only: Server,
// ServerCredentials and status. It binds no address itself (it serves the connections server.ts
// accepts), so no resolver is registered, and make-client loads on first use, which a server
// without admin services never makes. The facade's exports are static, so an import of anything
// else from grpc-server.ts fails the build instead of being undefined at run time.
const grpcSrc = path.join(root, "node_modules", "@grpc", "grpc-js", "build", "src");
const grpcServerOnly = {
  name: "grpc-server-only",
  setup(build) {
    build.onResolve({ filter: /^@grpc\/grpc-js$/ }, (args) =>
      path.resolve(args.importer) === path.join(root, "src", "plugin", "grpc-server.ts")
        ? { path: "grpc-js-server", namespace: "grpc-js-server" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "grpc-js-server" }, () => ({
      resolveDir: grpcSrc,
      contents: [
        'import * as server from "./server";',
        'import * as credentials from "./server-credentials";',
        'import * as constants from "./constants";',
        "export const Server = server.Server;",
        "export const ServerCredentials = credentials.ServerCredentials;",
        "export const status = constants.Status;",
      ].join("\n"),
      loader: "js",
    }));
    build.onResolve({ filter: /^\.\/make-client$/ }, (args) =>
      /[\\/]@grpc[\\/]grpc-js[\\/]build[\\/]src[\\/](channelz|orca)\.js$/.test(args.importer)
        ? { path: path.join(path.dirname(args.importer), "make-client.js"), namespace: "lazy-grpc-module" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "lazy-grpc-module" }, (args) => ({
      resolveDir: path.dirname(args.path),
      contents: [
        "let real;",
        `const load = () => (real ??= require(${JSON.stringify(args.path)}));`,
        "module.exports = new Proxy({}, {",
        "  get: (_, key) => load()[key],",
        "  has: (_, key) => key in load(),",
        "  ownKeys: () => Reflect.ownKeys(load()),",
        "  getOwnPropertyDescriptor: (_, key) => {",
        "    const d = Reflect.getOwnPropertyDescriptor(load(), key);",
        "    return d && { ...d, configurable: true };",
        "  },",
        "});",
      ].join("\n"),
      loader: "js",
    }));
  },
};

// Packages of the provider itself that only some provider processes need, with the exports the
// provider uses. undici (the API client's HTTP) took about 15 ms to load, and the first process of
// every Terraform command only answers GetProviderSchema, which makes no request. The stand-in
// loads the package on the first call; an import of another export fails the build. `entry` is
// what is loaded: for undici, its request() without the rest of its index (scripts/build/undici-request.js).
const LAZY_PACKAGES = {
  undici: {
    exports: ["request"],
    // Constructed with `new`; only HTTPS and proxied clients make one (src/api/network/network.ts).
    classes: ["Agent", "ProxyAgent"],
    entry: path.join(__dirname, "undici-request.js"),
  },
};
const lazyPackages = {
  name: "lazy-packages",
  setup(build) {
    const filter = new RegExp(`^(${Object.keys(LAZY_PACKAGES).join("|")})$`);
    build.onResolve({ filter }, (args) =>
      args.namespace === "lazy-package" ? undefined : { path: args.path, namespace: "lazy-package" },
    );
    build.onLoad({ filter: /.*/, namespace: "lazy-package" }, (args) => {
      const pkg = LAZY_PACKAGES[args.path];
      return {
        resolveDir: root,
        contents: [
          "let real;",
          `const load = () => (real ??= require(${JSON.stringify(pkg.entry ?? args.path)}));`,
          ...pkg.exports.map(
            (name) => `export function ${name}(...args) { return load().${name}(...args); }`,
          ),
          // A function that returns an object gives that object to `new`.
          ...(pkg.classes ?? []).map(
            (name) => `export function ${name}(...args) { return new (load().${name})(...args); }`,
          ),
        ].join("\n"),
        loader: "js",
      };
    });
  },
};

// The protocol's message codecs generated at build time (scripts/build/proto-codecs.js) in place of
// src/plugin/proto/codecs.ts, which builds them with protobufjs's reflection in every process.
const protoCodecsFile = path.join(root, "src", "plugin", "proto", "codecs.ts");
const staticProtoCodecs = {
  name: "static-proto-codecs",
  setup(build) {
    build.onResolve({ filter: /^\.\/codecs$/ }, (args) =>
      path.resolve(args.resolveDir, "codecs.ts") === protoCodecsFile
        ? { path: "proto-codecs", namespace: "static-proto-codecs" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "static-proto-codecs" }, async () => {
      const { generateCodecs } = require("./proto-codecs");
      const descriptor = JSON.parse(
        await fs.promises.readFile(path.join(protoDir, "descriptor.json"), "utf8"),
      );
      return { contents: generateCodecs(descriptor), resolveDir: root, loader: "js" };
    });
  },
};

// The descriptor as a JSON.parse of a string literal: V8 parses JSON several times faster than the
// same data written as a JavaScript object literal, which esbuild would otherwise emit.
const jsonAsString = {
  name: "json-as-string",
  setup(build) {
    build.onLoad({ filter: /descriptor\.json$/ }, async (args) => {
      const text = JSON.stringify(JSON.parse(await fs.promises.readFile(args.path, "utf8")));
      return { contents: `module.exports = JSON.parse(${JSON.stringify(text)});`, loader: "js" };
    });
  },
};

// The production bundle is split in three, in the order the process needs them:
//   provider.js            up to the handshake: cookie, certificate, listener (src/plugin/server.ts);
//   provider-transport.js  grpc-js with Node's http2 and tls, loaded right after the handshake
//                          (src/plugin/grpc-server.ts);
//   provider-impl.js       the provider itself (framework, resources, API client, zod, undici),
//                          loaded once the gRPC server runs (src/executable/provider-impl.ts).
// Each part is loaded through the launcher's code cache when the launcher offers it.
const SPLIT_POINTS = {
  "./grpc-server": "provider-transport.js",
  "../plugin/grpc-server": "provider-transport.js",
  "./provider-impl": "provider-impl.js",
};
const splitParts = {
  name: "split-parts",
  setup(build) {
    const filter = /^(\.\/grpc-server|\.\.\/plugin\/grpc-server|\.\/provider-impl)$/;
    // A stub that requires the file at run time (a computed path, so esbuild leaves it alone); an
    // external dynamic import() would stay an ESM import, which a vm.Script cannot perform.
    build.onResolve({ filter }, (args) => ({ path: SPLIT_POINTS[args.path], namespace: "split" }));
    build.onLoad({ filter: /.*/, namespace: "split" }, (args) => ({
      contents: [
        `const file = require("node:path").join(__dirname, ${JSON.stringify(args.path)});`,
        'const load = globalThis[Symbol.for("gpurental.provider.loadBundle")];',
        'module.exports = typeof load === "function" ? load(file) : require(file);',
      ].join("\n"),
      loader: "js",
    }));
  },
};

async function bundle(entry, outfile, opts = {}) {
  const esbuild = require("esbuild");
  await esbuild.build({
    plugins: [
      grpcServerOnly,
      lazyBuiltins,
      lazyPackages,
      unusedModules,
      jsonAsString,
      staticProtoCodecs,
      ...(opts.split ? [splitParts] : []),
    ],
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    // Whitespace and syntax only: identifiers stay readable in stack traces.
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    sourcemap: opts.sourcemap === false ? false : "linked",
    sourcesContent: false,
    legalComments: "none",
    logLevel: "warning",
  });
  markBundle(outfile, { ascii: true });
  return outfile;
}

/** The line that names a bundle's content; the loader's code cache is named by it. */
const BUNDLE_ID_PREFIX = "//# gpurental-bundle=";

/**
 * Writes the bundle's content id (the first 16 hex digits of its SHA-256) into it, on a line of
 * its own before the source map's, so that its code cache is the cache of exactly this code
 * (src/executable/code-cache-loader.ts, bundleId): V8 accepts a cache made for any source of the
 * same length.
 */
function markBundle(file, opts = {}) {
  const text = fs.readFileSync(file, "utf8");
  // The provider's bundles are read as latin1 (src/executable/code-cache-loader.ts, loadBundle),
  // which gives what UTF-8 would only for ASCII: esbuild's default output, escaping the rest.
  const wide = opts.ascii ? /[\u0080-\uffff]/.exec(text) : null;
  if (wide) {
    throw new Error(
      `${file}: character U+${wide[0].codePointAt(0).toString(16).padStart(4, "0")} at ${wide.index}; the provider's bundles must be ASCII`,
    );
  }
  const id = require("node:crypto").createHash("sha256").update(text).digest("hex").slice(0, 16);
  const map = text.lastIndexOf("\n//# sourceMappingURL=");
  const at = map === -1 ? text.length : map + 1;
  const line = `${BUNDLE_ID_PREFIX}${id}\n`;
  fs.writeFileSync(
    file,
    text.endsWith("\n") || map !== -1 ? text.slice(0, at) + line + text.slice(at) : `${text}\n${line}`,
  );
}

/** ELF's e_machine of each platform's code. */
const ELF_MACHINES = { linux_amd64: 0x3e, linux_arm64: 0xb7 };

/**
 * The npm provider's launcher (src/executable/compact/node-launcher.c) for every linux platform
 * whose C compiler and static libc this machine has, as node-launcher-<platform> in `outDir`.
 * `gpurental provider install` puts the one of its platform, where there is one, in front of the
 * Node.js script, so that a command in automation starts Node.js once instead of once per launch.
 * Returns the platforms built.
 */
function buildNodeLaunchers(outDir) {
  // What an earlier build left must not pass for this one's.
  for (const f of fs.readdirSync(outDir)) if (f.startsWith("node-launcher-")) fs.rmSync(path.join(outDir, f));
  if (process.platform !== "linux") return [];
  const { COMPACT_PLATFORMS, compileNodeLauncher, ToolError } = require("../release/compact-executable");
  const host = { x64: "linux_amd64", arm64: "linux_arm64" }[process.arch];
  const built = [];
  for (const [platform, { cc }] of Object.entries(COMPACT_PLATFORMS)) {
    // The release's compilers are named for an x86-64 build machine; on a machine of the platform
    // itself, its own gcc builds it too.
    const compilers = platform === host && cc !== "gcc" ? [cc, "gcc"] : [cc];
    const compiler = compilers.find((c) => {
      const libc = spawnSync(c, ["-print-file-name=libc.a"], { encoding: "utf8" });
      return !libc.error && libc.status === 0 && path.isAbsolute(libc.stdout.trim());
    });
    if (!compiler) continue;
    const out = path.join(outDir, `node-launcher-${platform}`);
    try {
      compileNodeLauncher(out, platform, compiler);
    } catch (err) {
      // The script alone still works everywhere: a launcher that does not build is left out.
      if (!(err instanceof ToolError)) throw err;
      process.stderr.write(
        `bundle-provider: the npm provider's ${platform} launcher is left out: ${err.message}\n`,
      );
      fs.rmSync(out, { force: true });
      continue;
    }
    // `gcc` of another machine makes that machine's code, which must not go under this name.
    if (fs.readFileSync(out).readUInt16LE(18) !== ELF_MACHINES[platform]) {
      fs.rmSync(out);
      continue;
    }
    built.push(platform);
  }
  return built;
}

/** The pre-encoded GetProviderSchema answer, written beside the production bundles. */
const SCHEMA_FILE = "provider-schema.pb";

/**
 * Builds the production bundles into `outDir`: provider.js, provider-transport.js,
 * provider-impl.js, provider-launcher.js, and provider-schema.pb, the GetProviderSchema answer
 * encoded once here from the bundled provider itself. The first provider process of every
 * Terraform command asks for nothing but the schema; answering it from this file spares that
 * process loading provider-impl.js at all (see docs/design/provider-process.md, "Start-up time").
 * With `nodeLaunchers` (the default), the npm provider's launchers too (buildNodeLaunchers).
 */
async function buildProvider(outDir, opts = {}) {
  const part = (name) => path.join(outDir, name);
  const { sourcemap } = opts;
  await bundle(path.join(root, "src", "executable", "main.ts"), part("provider.js"), {
    split: true,
    sourcemap,
  });
  await bundle(path.join(root, "src", "plugin", "grpc-server.ts"), part("provider-transport.js"), {
    sourcemap,
  });
  await bundle(path.join(root, "src", "executable", "provider-impl.ts"), part("provider-impl.js"), {
    sourcemap,
  });
  await bundle(path.join(root, "src", "executable", "code-cache-loader.ts"), part("provider-launcher.js"), {
    sourcemap,
  });
  // The PostgreSQL journal's client (pg), started in a worker thread by a provider given a
  // journal_url (src/journal/pg/bridge.ts), and by no other.
  await bundle(path.join(root, "src", "journal", "pg", "worker.ts"), part("provider-journal-pg.js"), {
    sourcemap,
  });

  if (opts.nodeLaunchers !== false) buildNodeLaunchers(outDir);

  // Fresh copies of the bundles just written (a test may build twice in one process).
  for (const name of ["provider-transport.js", "provider-impl.js"]) delete require.cache[part(name)];
  const { encodeResponse } = require(part("provider-transport.js"));
  const { createService } = require(part("provider-impl.js"));
  const schema = await createService().GetProviderSchema({});
  if (schema.diagnostics.length > 0)
    throw new Error(`the provider's schema has diagnostics: ${JSON.stringify(schema.diagnostics)}`);
  fs.writeFileSync(part(SCHEMA_FILE), encodeResponse("tfplugin6.Provider", "GetProviderSchema", schema));
  return outDir;
}

async function main(argv) {
  const arg = (name) => {
    const i = argv.indexOf(name);
    return i === -1 ? undefined : argv[i + 1];
  };
  writeDescriptor();
  if (argv.includes("--descriptor-only")) return;
  if (arg("--entry")) {
    // A single bundle, as test providers use it: nothing split off, no pre-encoded schema.
    const outfile = path.resolve(root, arg("--outfile") ?? "dist/provider-bundle/provider.js");
    await bundle(path.resolve(root, arg("--entry")), outfile);
    process.stderr.write(`bundled ${path.relative(root, outfile)}\n`);
    return;
  }
  const outDir = path.resolve(root, arg("--outdir") ?? "dist/provider-bundle");
  await buildProvider(outDir);
  const launchers = fs.readdirSync(outDir).filter((f) => f.startsWith("node-launcher-"));
  process.stderr.write(
    `bundled the provider into ${path.relative(root, outDir) || "."} (${
      launchers.length > 0
        ? `with the npm provider's launcher for ${launchers.map((f) => f.slice("node-launcher-".length)).join(" and ")}`
        : "without the npm provider's launcher: no C compiler for it here, so Node.js starts at every launch"
    })\n`,
  );
}

module.exports = {
  buildDescriptor,
  descriptorText,
  bundle,
  buildProvider,
  markBundle,
  PROTO_FILES,
  SCHEMA_FILE,
};

if (require.main === module) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(`bundle-provider: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  });
}
