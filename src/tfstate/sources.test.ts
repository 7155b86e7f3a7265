import { execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { loadPlan, readStateSources, type SourceContext } from "./sources";

// Sources that are not plain files: a pipe (`<(cat s.tfstate)`, a FIFO), which has no position to
// read a header at and can be read only once, and paths the system refuses to read (a directory
// where a file is expected, a device that fails). Each ends in the module's own error naming the
// argument, the path and the reason in words, never the system's bare text.

const FIXTURES = join(__dirname, "fixtures");
const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");

let root: string;
let ctx: SourceContext;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "gpurental-sources-"));
  ctx = { env: { PATH: "" }, cwd: root, readStdin: async () => "" };
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/**
 * Reads through `read` a named pipe that a child process fills with `content`: opening it blocks
 * until the writer is there, and it gives its bytes once, as `<(cat file)` does.
 */
async function throughPipe<T>(name: string, content: string | Buffer, read: (path: string) => Promise<T>) {
  const path = join(root, name);
  const source = join(root, `${name}.content`);
  writeFileSync(source, content);
  execFileSync("mkfifo", [path]);
  // The writer is a process of its own: this one blocks while it reads the pipe.
  const writer = spawn("sh", ["-c", 'cat "$1" > "$2"', "sh", source, path], { stdio: "ignore" });
  const written = new Promise<void>((resolve) => writer.on("exit", () => resolve()));
  try {
    return await read(path);
  } finally {
    await written;
  }
}

test("a state from a pipe is read once, whole, and told from its content", async () => {
  const states = await throughPipe("s.tfstate", fixture("raw-state-v4.json"), (path) =>
    readStateSources([path], ctx),
  );
  expect(states.map((s) => [s.format, s.objects.length])).toEqual([["state-v4", 8]]);
});

test("a plan from a pipe: JSON is read as it is; a saved plan (zip) goes to terraform as a private copy", async () => {
  const loaded = await throughPipe("plan.json", fixture("plan.json"), (path) => loadPlan(path, ctx));
  expect(loaded.plan.changes).toHaveLength(13);

  // A stand-in for terraform: prints the fixture's JSON when the file it is given is a zip, and
  // records the file's path and mode.
  const record = join(root, "terraform-saw");
  const fake = join(root, "fake-terraform");
  writeFileSync(
    fake,
    `#!/bin/sh
f="$4"
printf '%s %s' "$f" "$(stat -c %a "$f")" > "${record}"
[ "$(head -c 2 "$f")" = PK ] || { echo "not a zip: $f" >&2; exit 1; }
cat "${join(FIXTURES, "plan.json")}"
`,
  );
  chmodSync(fake, 0o755);
  const withTf: SourceContext = { ...ctx, env: { PATH: process.env.PATH, TERRAFORM_BINARY_NAME: fake } };
  const zip = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(64)]);
  const fromZip = await throughPipe("plan.bin", zip, (path) => loadPlan(path, withTf));
  expect(fromZip.plan.changes).toHaveLength(13);
  const [copy, mode] = readFileSync(record, "utf8").split(" ");
  expect(copy).not.toBe(join(root, "plan.bin"));
  expect(mode).toBe("600");
  // The copy is gone once terraform has read it.
  expect(existsSync(copy!)).toBe(false);
  // So is its private folder. (Other test files make folders of their own in the same temporary
  // folder at the same time: only this one is looked at.)
  expect(dirname(copy!).startsWith(join(tmpdir(), "gpurental-plan-"))).toBe(true);
  expect(existsSync(dirname(copy!))).toBe(false);
  // The same as a state source.
  const [prior] = await throughPipe("plan2.bin", zip, (path) => readStateSources([path], withTf));
  expect(prior!.format).toBe("show-json-plan");
});

test("a directory where a stack's file is expected is named with the argument and the reason", async () => {
  mkdirSync(join(root, "d", "cdk.tf.json"), { recursive: true });
  await expect(readStateSources(["d"], ctx)).rejects.toThrow(
    `the CDKTF stack d: cannot read ${join(root, "d", "cdk.tf.json")}: it is a directory, not a file (EISDIR)`,
  );
  await expect(readStateSources(["d"], ctx)).rejects.toThrow(
    expect.objectContaining({ name: "SourceError" }),
  );
  // A project's stack directory whose cdk.tf.json is a directory is skipped as not synthesized;
  // a project's cdktf.json that is a directory is named.
  mkdirSync(join(root, "p", "cdktf.json"), { recursive: true });
  await expect(readStateSources(["p"], ctx)).rejects.toThrow(
    `the CDKTF project ${join(root, "p")}: cannot read ${join(root, "p", "cdktf.json")}: it is a directory, not a file (EISDIR)`,
  );
});

test("a device that fails to read is named with the reason in words", async () => {
  if (!existsSync("/proc/self/mem")) return;
  await expect(readStateSources(["/proc/self/mem"], ctx)).rejects.toThrow(
    "cannot read /proc/self/mem: an input/output error: the device or file system failed to read it (EIO)",
  );
  await expect(loadPlan("/proc/self/mem", ctx)).rejects.toThrow(/^cannot read \/proc\/self\/mem: .*\(EIO\)$/);
});
