import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dir } from "../testing/journal-dir";
import { locateJournal, stableJson } from ".";

// The journal's edges: the file or its lock unusable, a lock held by someone else, compaction at its
// thresholds, records a reader must skip, and how the location is derived from what init left.

describe("location", () => {
  test("an unreadable backend file is the local backend, the same as none", () => {
    const none = locateJournal({ cwd: dir, env: {} });
    mkdirSync(join(dir, ".terraform"));
    writeFileSync(join(dir, ".terraform", "terraform.tfstate"), "{not json");
    const damaged = locateJournal({ cwd: dir, env: {} });
    expect(damaged).toEqual(none);
    expect(damaged.backend).toBe("local");
  });

  test.each([
    ["no backend block", { version: 3 }],
    ["a backend without a type", { backend: { config: { path: "terraform.tfstate" } } }],
    [
      "the local backend's default path",
      { backend: { type: "local", config: { path: "terraform.tfstate" } } },
    ],
    ["an empty path", { backend: { type: "local", config: { path: "", workspace_dir: "" } } }],
    [
      "the path written from the state's directory",
      { backend: { type: "local", config: { path: "./terraform.tfstate" } } },
    ],
  ])("the local backend's identity is its state file: %s is the default", (_what, meta) => {
    const none = locateJournal({ cwd: dir, env: {} });
    mkdirSync(join(dir, ".terraform"));
    writeFileSync(join(dir, ".terraform", "terraform.tfstate"), JSON.stringify(meta));
    expect(locateJournal({ cwd: dir, env: {} })).toEqual(none);
  });

  test("a local backend's workspace directory, a backend's type and its configuration each make another file", () => {
    mkdirSync(join(dir, ".terraform"));
    const files = new Map<string, string>();
    const with_ = (what: string, meta: unknown) => {
      writeFileSync(join(dir, ".terraform", "terraform.tfstate"), JSON.stringify(meta));
      const loc = locateJournal({ cwd: dir, env: {} });
      files.set(loc.file, what);
      return loc;
    };
    with_("default", {});
    with_("workspace_dir", {
      backend: { type: "local", config: { workspace_dir: "ws" } },
    });
    expect(with_("s3", { backend: { type: "s3", config: { bucket: "b" } } }).backend).toBe("s3");
    with_("gcs", { backend: { type: "gcs", config: { bucket: "b" } } });
    with_("s3 without config", { backend: { type: "s3" } });
    with_("s3 other bucket", {
      backend: { type: "s3", config: { bucket: "c" } },
    });
    expect([...files.values()]).toEqual([
      "default",
      "workspace_dir",
      "s3",
      "gcs",
      "s3 without config",
      "s3 other bucket",
    ]);
    // The same configuration with its keys in another order is the same state.
    const a = with_("s3 two keys", {
      backend: { type: "s3", config: { bucket: "b", key: "k" } },
    });
    const b = with_("s3 two keys, reordered", {
      backend: { type: "s3", config: { key: "k", bucket: "b" } },
    });
    expect(a.file).toBe(b.file);
  });

  test("the workspace's file name: unsafe characters replaced, at most 64 of them; a blank environment file is the default", () => {
    const long = locateJournal({
      cwd: dir,
      env: { TF_WORKSPACE: `a/b c${"x".repeat(100)}` },
    });
    expect(long.workspace).toBe(`a/b c${"x".repeat(100)}`);
    const name = long.file.slice(long.dir.length + 1);
    expect(name).toMatch(/^a_b_cx{59}-[0-9a-f]{12}\.jsonl$/);
    mkdirSync(join(dir, ".terraform"));
    writeFileSync(join(dir, ".terraform", "environment"), "  \n");
    const blank = locateJournal({ cwd: dir, env: {} });
    expect(blank.workspace).toBe("default");
    expect(blank.file).toBe(locateJournal({ cwd: dir, env: { TF_WORKSPACE: "default" } }).file);
    expect(blank.file).not.toBe(locateJournal({ cwd: dir, env: { TF_WORKSPACE: "prod" } }).file);
  });

  test("workspaces whose file names read alike still get files of their own", () => {
    const file = (ws: string) => locateJournal({ cwd: dir, env: { TF_WORKSPACE: ws } }).file;
    const long = "w".repeat(64);
    const files = [file("a/b"), file("a_b"), file(`${long}1`), file(`${long}2`)];
    expect(new Set(files).size).toBe(4);
  });

  test("a state's file name stays the same from one version to the next", () => {
    // The journal of an interrupted apply must be found by the next provider version.
    expect(locateJournal({ cwd: "/nonexistent-gpurental/project", env: {} }).file).toBe(
      "/nonexistent-gpurental/project/.terraform/gpurental-journal/default-f2cfc5e4f787.jsonl",
    );
    mkdirSync(join(dir, ".terraform"));
    writeFileSync(
      join(dir, ".terraform", "terraform.tfstate"),
      JSON.stringify({ backend: { type: "pg", config: { schema_name: "a", conn_str: "postgres://h/db" } } }),
    );
    const pg = locateJournal({ cwd: dir, env: { TF_WORKSPACE: "prod" } });
    expect(pg.file.slice(pg.dir.length + 1)).toBe("prod-e0f940e137b6.jsonl");
  });

  test("an absolute journal_dir is taken as it is; a relative GPURENTAL_JOURNAL_DIR from the working directory", () => {
    const abs = join(dir, "abs");
    expect(locateJournal({ cwd: "/elsewhere", env: {}, configured: abs }).dir).toBe(abs);
    expect(locateJournal({ cwd: dir, env: { GPURENTAL_JOURNAL_DIR: "rel" } }).dir).toBe(join(dir, "rel"));
    expect(
      locateJournal({
        cwd: dir,
        env: { GPURENTAL_JOURNAL_DIR: "" },
        configured: "",
      }).dir,
    ).toBe(join(dir, ".terraform", "gpurental-journal"));
  });

  test.each([
    [{ b: 1, a: [2, { d: undefined, c: null }] }, '{"a":[2,{"c":null}],"b":1}'],
    [[], "[]"],
    [{}, "{}"],
    [undefined, "null"],
    ["s", '"s"'],
  ])("stableJson(%j) is %s", (v, json) => {
    expect(stableJson(v)).toBe(json);
  });
});
