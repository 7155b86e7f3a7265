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

  describe("a backend's credentials change between CI jobs; the state and its journal stay", () => {
    const fileWith = (type: string, config: unknown, env: NodeJS.ProcessEnv = {}) => {
      mkdirSync(join(dir, ".terraform"), { recursive: true });
      writeFileSync(
        join(dir, ".terraform", "terraform.tfstate"),
        JSON.stringify({ backend: { type, config } }),
      );
      return locateJournal({ cwd: dir, env });
    };

    test.each([
      [
        "an http backend's job token",
        "http",
        {
          address: "https://gitlab.example/api/v4/projects/7/terraform/state/prod",
          username: "gitlab-ci-token",
          password: "job-1",
        },
        { password: "job-2" },
      ],
      [
        "an s3 session's keys",
        "s3",
        { bucket: "b", key: "k", region: "eu-west-1", access_key: "A1", secret_key: "s1", token: "t1" },
        { access_key: "A2", secret_key: "s2", token: "t2" },
      ],
      [
        "an s3 role session",
        "s3",
        { bucket: "b", key: "k", assume_role: { role_arn: "arn:r", session_name: "job-1" } },
        { assume_role: { role_arn: "arn:r", session_name: "job-2" } },
      ],
      [
        "a rotated database user in a URL",
        "pg",
        { conn_str: "postgres://v-ci-1:pw1@db.example:5432/tf?sslmode=require" },
        { conn_str: "postgres://v-ci-2:pw2@db.example:5432/tf?sslmode=require" },
      ],
      [
        "a password in a libpq string",
        "pg",
        { conn_str: "host=db.example dbname=tf user=u1 password='a b'" },
        { conn_str: "host=db.example dbname=tf user=u2 password=c" },
      ],
      [
        "a client certificate's files at a path of the job's own, in a URL",
        "pg",
        {
          conn_str:
            "postgres://u@db.example/tf?sslmode=verify-full&sslcert=/tmp/j1/c.crt&sslkey=/tmp/j1/c.key",
        },
        {
          conn_str:
            "postgres://u@db.example/tf?sslcert=/tmp/j2/c.crt&sslmode=verify-full&sslkey=/tmp/j2/c.key&sslrootcert=/tmp/j2/ca.crt",
        },
      ],
      [
        "a client certificate's files in a libpq string",
        "pg",
        { conn_str: "host=db.example dbname=tf sslkey=/run/secrets/1/k passfile=/run/secrets/1/p" },
        { conn_str: "host=db.example  dbname=tf sslkey='/run/secrets/2/k'" },
      ],
      [
        "azurerm's secrets",
        "azurerm",
        { storage_account_name: "sa", container_name: "c", key: "k", sas_token: "x", client_secret: "y" },
        { sas_token: "z", client_secret: "w" },
      ],
    ])("%s", (_what, type, config, changed) => {
      const first = fileWith(type, config);
      const next = fileWith(type, { ...config, ...changed });
      expect(next.file).toBe(first.file);
      // What says where the state is still counts (the kubernetes backend names it secret_suffix).
      expect(fileWith("kubernetes", { secret_suffix: "a" }).file).not.toBe(
        fileWith("kubernetes", { secret_suffix: "b" }).file,
      );
      const elsewhere = fileWith(type, {
        ...config,
        ...changed,
        key: "other",
        address: "https://other.example/s",
        conn_str: "postgres://u@db2.example/tf",
        bucket: "b2",
        container_name: "c2",
      });
      expect(elsewhere.file).not.toBe(first.file);
    });

    test("a configuration as Terraform records it, every unset setting null, keeps the key it always had", () => {
      const recorded = {
        bucket: "b",
        key: "user=alice/terraform.tfstate",
        region: "eu-west-1",
        access_key: null,
        secret_key: null,
        token: null,
        assume_role: null,
        use_oidc: true,
        skip_credentials_validation: false,
      };
      expect(fileWith("s3", recorded).legacyFile).toBeUndefined();
      // A path that reads like a connection setting is a path.
      expect(fileWith("s3", { ...recorded, key: "user=bob/terraform.tfstate" }).file).not.toBe(
        fileWith("s3", recorded).file,
      );
      expect(
        fileWith("http", { address: "https://state.example/prod", password: null, username: null })
          .legacyFile,
      ).toBe(undefined);
    });

    test("a database user names the state's database when the connection string names none", () => {
      const file = (conn: string) => fileWith("pg", { conn_str: conn, schema_name: null }).file;
      expect(file("postgres://alice@db.example/")).not.toBe(file("postgres://bob@db.example/"));
      expect(file("host=db.example user=alice")).not.toBe(file("host=db.example user=bob"));
      expect(file("postgres://alice:p1@db.example/tf")).toBe(file("postgres://bob:p2@db.example/tf"));
      expect(file("host=db.example dbname=tf user=alice password=p&1#x")).toBe(
        file("host=db.example dbname=tf user=bob password=p2"),
      );
    });

    test("two pg stacks told apart only by the environment get journals of their own", () => {
      const env = { PG_CONN_STR: "postgres://u:p1@db.example/tf" };
      const a = fileWith("pg", { conn_str: null, schema_name: null }, { ...env, PG_SCHEMA_NAME: "stack_a" });
      const b = fileWith("pg", { conn_str: null, schema_name: null }, { ...env, PG_SCHEMA_NAME: "stack_b" });
      expect(a.file).not.toBe(b.file);
      // The password in the variable is a credential like any other.
      const a2 = fileWith(
        "pg",
        { conn_str: null, schema_name: null },
        { PG_CONN_STR: "postgres://u:p2@db.example/tf", PG_SCHEMA_NAME: "stack_a" },
      );
      expect(a2.file).toBe(a.file);
      // A setting in the block wins over the variable, as in the backend.
      const c = fileWith(
        "pg",
        { conn_str: null, schema_name: "stack_a" },
        { ...env, PG_SCHEMA_NAME: "stack_b" },
      );
      expect(c.file).toBe(a.file);
    });

    test("a configuration whose key changed names the older key's file too", () => {
      const config = { address: "https://state.example/prod", password: "job-1" };
      const today = fileWith("http", config);
      expect(today.legacyFile).toBeDefined();
      expect(today.legacyFile).not.toBe(today.file);
      // A configuration without credentials has one key, as it always had.
      expect(fileWith("http", { address: "https://state.example/prod" }).legacyFile).toBeUndefined();
      // The version before left a client certificate's files in the key, and took the password out:
      // its key is the older one, where a run of it wrote.
      const withFiles = { conn_str: "postgres://u:pw@db.example/tf?sslkey=/tmp/j1/c.key", schema_name: null };
      const before = fileWith("pg", {
        ...withFiles,
        conn_str: "postgres://u:other@db.example/tf?sslkey=/tmp/j1/c.key",
      });
      expect(before.file).toBe(fileWith("pg", withFiles).file);
      expect(before.legacyFile).toBe(fileWith("pg", withFiles).legacyFile);
      expect(before.legacyFile).not.toBe(
        fileWith("pg", { ...withFiles, conn_str: "postgres://u:pw@db.example/tf?sslkey=/tmp/j2/c.key" })
          .legacyFile,
      );
    });
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
