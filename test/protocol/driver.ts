// A protocol driver that plays Terraform's part against the real provider process: it starts the
// executable as go-plugin does (magic cookie, PLUGIN_PROTOCOL_VERSIONS, PLUGIN_CLIENT_CERT), dials
// the handshake's address over mTLS with a gRPC client built from the protocol file of the
// Terraform version it plays (src/plugin/proto/terraform/, so an older version drops the fields it
// does not know, as that Terraform does), and makes the calls in the order and shape Terraform's
// own code makes them. No newer CLI than 1.11.4 runs on these machines; this is how identity,
// `terraform query` and actions are proven, and the configuration a query generates goes back
// through the real 1.11 CLI (test/protocol/query.e2e.test.ts).
//
// The pieces: versions.ts (what each version speaks and does, with the citations), wire.ts
// (schemas, values, diagnostics, blocks and plans), provider-process.ts (one process, started and
// dialled as go-plugin does); this file orders the calls as Terraform's commands do.
import { encodeJson, isRecord, t, typeFromBytes, valuesEqual } from "../../src/plugin/cty";
import { type DriverOptions, ProviderProcess } from "./provider-process";
import { VERSIONS, type VersionFacts } from "./versions";
import {
  type ActionBlock,
  type Blocks,
  type CallRecord,
  CommandFailed,
  type Decoded,
  type DriverDiagnostic,
  type DriverSchema,
  decodeDv,
  diagnosticsOf,
  dv,
  EMPTY,
  fullObject,
  type ImportBlock,
  type ListBlock,
  type LoadedSchema,
  type Msg,
  type PlannedChange,
  proposedNew,
  type QueryResult,
  type Rec,
  type ResourceBlock,
  type SchemaAttr,
  type StoredObject,
  toSchema,
} from "./wire";

export type { DriverOptions } from "./provider-process";
export { type TerraformVersion, VERSIONS } from "./versions";
export {
  type ActionBlock,
  type Blocks,
  type CallRecord,
  CommandFailed,
  type Decoded,
  type DriverDiagnostic,
  type DriverSchema,
  fullObject,
  type GeneratedResource,
  type ImportBlock,
  type ListBlock,
  type LoadedSchema,
  type PlannedChange,
  type QueryResult,
  type ResourceBlock,
  type SchemaAttr,
  type StoredObject,
} from "./wire";

export class TerraformDriver {
  readonly facts: VersionFacts;
  /** Every RPC of every command so far, in order. */
  readonly calls: CallRecord[] = [];
  /** Every diagnostic of every command so far. */
  readonly diagnostics: DriverDiagnostic[] = [];
  /** The state: objects by address. */
  readonly state = new Map<string, StoredObject>();
  private processes = 0;
  private schemaCache: LoadedSchema | undefined;

  constructor(readonly opts: DriverOptions) {
    this.facts = VERSIONS[opts.version];
  }

  /** The capabilities ConfigureProvider and the resource RPCs send. */
  capabilities(apply: boolean): Msg {
    return {
      deferral_allowed: apply,
      write_only_attributes_allowed: true,
      ...(this.facts.v611 ? { store_planned_private: true, computed_blocks_allowed: true } : {}),
    };
  }

  private async withProcess<T>(fn: (call: Caller) => Promise<T>): Promise<T> {
    const index = ++this.processes;
    const p = await ProviderProcess.start(this.opts);
    const caller: Caller = {
      call: async (rpc, req) => {
        this.calls.push({ process: index, rpc });
        const res = await p.call(rpc, req);
        this.opts.onResponse?.(rpc, res);
        return res;
      },
      stream: async (rpc, req, take) => {
        this.calls.push({ process: index, rpc });
        const events = await p.stream(rpc, req, take);
        for (const e of events) this.opts.onResponse?.(rpc, e);
        return events;
      },
    };
    try {
      return await fn(caller);
    } finally {
      await p.close();
    }
  }

  /** The schema load of a process: the first of a command asks, later ones use the cache. */
  private async schema(c: Caller): Promise<LoadedSchema> {
    if (this.schemaCache?.capabilities.get_provider_schema_optional) return this.schemaCache;
    const raw = await c.call("GetProviderSchema", {});
    this.fail(diagnosticsOf(raw.diagnostics, "GetProviderSchema"), "GetProviderSchema");
    const identityRaw = this.facts.identity ? await c.call("GetResourceIdentitySchemas", {}) : null;
    if (identityRaw)
      this.fail(diagnosticsOf(identityRaw.diagnostics, "GetResourceIdentitySchemas"), "schema");
    const map = (m: unknown, get: (v: Msg) => Msg = (v) => v) =>
      Object.fromEntries(
        Object.entries((m as Record<string, Msg> | undefined) ?? {}).map(([k, v]) => [
          k,
          toSchema(
            get(v) as { version?: number; block: { attributes: SchemaAttr[]; block_types: unknown[] } },
          ),
        ]),
      );
    const identities: LoadedSchema["identities"] = {};
    for (const [name, s] of Object.entries((identityRaw?.identity_schemas as Record<string, Msg>) ?? {})) {
      const attrs = s.identity_attributes as { name: string; type: Buffer }[];
      identities[name] = {
        version: Number(s.version),
        type: t.object(Object.fromEntries(attrs.map((a) => [a.name, typeFromBytes(a.type)]))),
      };
    }
    this.schemaCache = {
      raw,
      identityRaw,
      resources: map(raw.resource_schemas),
      identities,
      lists: this.facts.query ? map(raw.list_resource_schemas) : {},
      actions: this.facts.query ? map(raw.action_schemas, (v) => v.schema as Msg) : {},
      provider: toSchema(raw.provider as { block: { attributes: SchemaAttr[]; block_types: unknown[] } }),
      capabilities: (raw.server_capabilities as Msg | null) ?? {},
    };
    return this.schemaCache;
  }

  /** The first process of every command: the schema only. */
  async loadSchema(): Promise<LoadedSchema> {
    this.schemaCache = undefined;
    return this.withProcess((c) => this.schema(c));
  }

  private fail(diags: DriverDiagnostic[], during: string): void {
    this.diagnostics.push(...diags);
    if (diags.some((d) => d.severity === "error")) throw new CommandFailed(this.diagnostics.slice(), during);
  }

  private resourceSchema(s: LoadedSchema, type: string): DriverSchema {
    const r = s.resources[type];
    if (!r) throw new Error(`no resource type ${type}`);
    return r;
  }

  private identityOut(s: LoadedSchema, type: string, data: unknown): Rec | null {
    const id = s.identities[type];
    const d = (data as { identity_data?: unknown } | null | undefined)?.identity_data;
    if (!id || !d) return null;
    const v = decodeDv(d, id.type);
    if (v === null) return null;
    if (!isRecord(v)) throw new Error(`${type}: the identity is not an object`);
    return v as Rec;
  }

  private identityIn(s: LoadedSchema, type: string, value: Rec | null): Msg | null {
    const id = s.identities[type];
    if (!this.facts.identity || !id || !value) return null;
    return { identity_data: dv(value, id.type) };
  }

  private async configure(c: Caller, s: LoadedSchema, apply: boolean): Promise<void> {
    const config = dv(fullObject(s.provider, this.opts.providerConfig), s.provider.type);
    const v = await c.call("ValidateProviderConfig", { config });
    this.fail(diagnosticsOf(v.diagnostics, "ValidateProviderConfig"), "ValidateProviderConfig");
    const r = await c.call("ConfigureProvider", {
      terraform_version: this.facts.terraformVersion,
      config,
      client_capabilities: this.capabilities(apply),
    });
    this.fail(diagnosticsOf(r.diagnostics, "ConfigureProvider"), "ConfigureProvider");
  }

  /** The validate walk (`terraform validate`, and the second process of every plan). */
  private async validateWalk(c: Caller, s: LoadedSchema, blocks: Blocks): Promise<void> {
    const provider = dv(fullObject(s.provider, this.opts.providerConfig), s.provider.type);
    this.fail(
      diagnosticsOf(
        (await c.call("ValidateProviderConfig", { config: provider })).diagnostics,
        "ValidateProviderConfig",
      ),
      "validate",
    );
    for (const r of blocks.resources ?? []) {
      const schema = this.resourceSchema(s, r.type);
      const res = await c.call("ValidateResourceConfig", {
        type_name: r.type,
        config: dv(fullObject(schema, r.config), schema.type),
        client_capabilities: this.capabilities(false),
      });
      this.fail(diagnosticsOf(res.diagnostics, "ValidateResourceConfig"), "validate");
    }
    for (const l of blocks.lists ?? []) {
      const schema = s.lists[l.type];
      if (!schema) throw new Error(`no list resource ${l.type}`);
      const res = await c.call("ValidateListResourceConfig", {
        type_name: l.type,
        config: dv(fullObject(schema, l.config), schema.type),
      });
      this.fail(diagnosticsOf(res.diagnostics, "ValidateListResourceConfig"), "validate");
    }
    for (const a of blocks.actions ?? []) {
      const schema = s.actions[a.type];
      if (!schema) throw new Error(`no action ${a.type}`);
      const res = await c.call("ValidateActionConfig", {
        type_name: a.type,
        config: dv(fullObject(schema, a.config), schema.type),
      });
      this.fail(diagnosticsOf(res.diagnostics, "ValidateActionConfig"), "validate");
    }
  }

  /** Refresh one stored object: UpgradeResourceState, then ReadResource. */
  private async refresh(
    c: Caller,
    s: LoadedSchema,
    address: string,
    obj: StoredObject,
  ): Promise<StoredObject | null> {
    const schema = this.resourceSchema(s, obj.type);
    // Terraform sends the stored attributes as JSON with the schema version stored beside them.
    const up = await c.call("UpgradeResourceState", {
      type_name: obj.type,
      version: schema.version,
      raw_state: { json: Buffer.from(encodeJson(obj.value, schema.type)) },
    });
    this.fail(diagnosticsOf(up.diagnostics, "UpgradeResourceState"), `refresh of ${address}`);
    const current = decodeDv(up.upgraded_state, schema.type) as Rec;
    const read = await c.call("ReadResource", {
      type_name: obj.type,
      current_state: dv(current, schema.type),
      private: obj.private,
      client_capabilities: this.capabilities(false),
      ...(this.identityIn(s, obj.type, obj.identity)
        ? { current_identity: this.identityIn(s, obj.type, obj.identity) }
        : {}),
    });
    this.fail(diagnosticsOf(read.diagnostics, "ReadResource"), `refresh of ${address}`);
    const value = decodeDv(read.new_state, schema.type);
    if (value === null) return null;
    return {
      type: obj.type,
      value: value as Rec,
      private: (read.private as Buffer | undefined) ?? EMPTY,
      identity: this.identityOut(s, obj.type, read.new_identity) ?? obj.identity,
    };
  }

  /** PlanResourceChange for one resource block, with the prior object (null: create). */
  private async planOne(
    c: Caller,
    s: LoadedSchema,
    r: ResourceBlock,
    prior: StoredObject | null,
    opts: { apply: boolean; plannedPrivate?: Buffer },
  ): Promise<PlannedChange> {
    const schema = this.resourceSchema(s, r.type);
    const address = `${r.type}.${r.name}`;
    const config = fullObject(schema, r.config);
    const proposed = proposedNew(schema.attributes, prior?.value ?? null, config);
    const res = await c.call("PlanResourceChange", {
      type_name: r.type,
      prior_state: dv(prior?.value ?? null, schema.type),
      proposed_new_state: dv(proposed, schema.type),
      config: dv(config, schema.type),
      prior_private: prior?.private ?? EMPTY,
      client_capabilities: this.capabilities(opts.apply),
      ...(this.identityIn(s, r.type, prior?.identity ?? null)
        ? { prior_identity: this.identityIn(s, r.type, prior?.identity ?? null) }
        : {}),
      ...(this.facts.v611 && opts.plannedPrivate ? { planned_private: opts.plannedPrivate } : {}),
    });
    this.fail(diagnosticsOf(res.diagnostics, "PlanResourceChange"), `plan of ${address}`);
    const planned = decodeDv(res.planned_state, schema.type) as Rec;
    const replace = ((res.requires_replace as unknown[]) ?? []).length > 0 && prior !== null;
    const same = prior !== null && valuesEqual(prior.value, planned, schema.type);
    return {
      address,
      action: prior === null ? "create" : same ? "noop" : replace ? "replace" : "update",
      importing: false,
      prior,
      planned,
      plannedPrivate: (res.planned_private as Buffer | undefined) ?? EMPTY,
      plannedIdentity: this.identityOut(s, r.type, res.planned_identity),
      config,
    };
  }

  /** ImportResourceState by id or identity, then the refresh of what it returned. */
  private async importOne(c: Caller, s: LoadedSchema, imp: ImportBlock, type: string): Promise<StoredObject> {
    const schema = this.resourceSchema(s, type);
    const byIdentity = imp.identity !== undefined;
    if (byIdentity && !this.facts.identity)
      throw new Error(`Terraform ${this.opts.version} has no import by identity`);
    const identitySchema = s.identities[type];
    if (byIdentity && !identitySchema) throw new Error(`${type} has no identity schema`);
    const res = await c.call("ImportResourceState", {
      type_name: type,
      id: imp.id ?? "",
      client_capabilities: this.capabilities(false),
      ...(byIdentity && identitySchema
        ? {
            identity: {
              identity_data: dv(
                Object.fromEntries(
                  Object.keys(identitySchema.type.attributes).map((k) => [k, imp.identity?.[k] ?? null]),
                ),
                identitySchema.type,
              ),
            },
          }
        : {}),
    });
    this.fail(diagnosticsOf(res.diagnostics, "ImportResourceState"), `import of ${imp.to}`);
    const imported = (res.imported_resources as Msg[])[0];
    if (!imported) throw new Error(`import of ${imp.to} returned no object`);
    const identity = this.identityOut(s, type, imported.identity);
    if (byIdentity && !identity) throw new Error(`import of ${imp.to} didn't return an identity`);
    const stub: StoredObject = {
      type,
      value: decodeDv(imported.state, schema.type) as Rec,
      private: (imported.private as Buffer | undefined) ?? EMPTY,
      identity,
    };
    const refreshed = await this.refresh(c, s, imp.to, stub);
    if (!refreshed) throw new Error(`Cannot import non-existent remote object ${imp.to}`);
    return refreshed;
  }

  /** The plan walk of `terraform plan` (and of `terraform apply`): import, refresh, plan. */
  private async planWalk(
    c: Caller,
    s: LoadedSchema,
    blocks: Blocks,
    opts: { apply: boolean },
  ): Promise<PlannedChange[]> {
    await this.configure(c, s, opts.apply);
    const changes: PlannedChange[] = [];
    const configured = new Set((blocks.resources ?? []).map((r) => `${r.type}.${r.name}`));
    for (const r of blocks.resources ?? []) {
      const address = `${r.type}.${r.name}`;
      const schema = this.resourceSchema(s, r.type);
      const v = await c.call("ValidateResourceConfig", {
        type_name: r.type,
        config: dv(fullObject(schema, r.config), schema.type),
        client_capabilities: this.capabilities(opts.apply),
      });
      this.fail(diagnosticsOf(v.diagnostics, "ValidateResourceConfig"), `plan of ${address}`);
      let prior = this.state.get(address) ?? null;
      let importing = false;
      const imp = (blocks.imports ?? []).find((i) => i.to === address);
      if (!prior && imp) {
        prior = await this.importOne(c, s, imp, r.type);
        importing = true;
      } else if (prior) {
        prior = await this.refresh(c, s, address, prior);
      }
      const change = await this.planOne(c, s, r, prior, opts);
      changes.push({ ...change, importing });
    }
    // Objects in state without configuration: planned for destroy. The provider sets no
    // plan_destroy, so Terraform plans them itself, without PlanResourceChange.
    for (const [address, obj] of this.state) {
      if (configured.has(address)) continue;
      const refreshed = await this.refresh(c, s, address, obj);
      if (!refreshed) continue;
      changes.push({
        address,
        action: "delete",
        importing: false,
        prior: refreshed,
        planned: null,
        plannedPrivate: refreshed.private,
        plannedIdentity: null,
        config: null,
      });
    }
    return changes;
  }

  /** `terraform plan`: the schema, validate and plan processes. */
  async plan(blocks: Blocks): Promise<PlannedChange[]> {
    const s = await this.loadSchema();
    await this.withProcess((c) => this.schema(c).then(() => this.validateWalk(c, s, blocks)));
    return this.withProcess(async (c) => this.planWalk(c, await this.schema(c), blocks, { apply: false }));
  }

  /** `terraform apply`: plan as above, then the apply walk in a process of its own. */
  async apply(blocks: Blocks): Promise<PlannedChange[]> {
    const s = await this.loadSchema();
    await this.withProcess((c) => this.schema(c).then(() => this.validateWalk(c, s, blocks)));
    const changes = await this.withProcess(async (c) => {
      const schema = await this.schema(c);
      const planned = await this.planWalk(c, schema, blocks, { apply: false });
      // 1.16: actions on before_destroy are planned with the destroy.
      for (const ch of planned) {
        const r = this.beforeDestroyOf(blocks, ch);
        if (r) await this.planAction(c, schema, r);
      }
      return planned;
    });
    await this.withProcess(async (c) => {
      const schema = await this.schema(c);
      await this.configure(c, schema, true);
      for (const ch of changes) {
        const block = (blocks.resources ?? []).find((r) => `${r.type}.${r.name}` === ch.address);
        if (ch.action === "noop") {
          if (ch.importing && ch.prior) this.state.set(ch.address, ch.prior);
          continue;
        }
        if (ch.action === "delete") {
          const trigger = this.beforeDestroyOf(blocks, ch);
          if (trigger) await this.invokeAction(c, schema, trigger);
          await this.applyOne(
            c,
            schema,
            ch.address,
            ch.prior!.type,
            ch.prior,
            null,
            null,
            ch.plannedPrivate,
            null,
          );
          this.state.delete(ch.address);
          continue;
        }
        if (!block) continue;
        if (ch.action === "replace") {
          await this.applyOne(
            c,
            schema,
            ch.address,
            block.type,
            ch.prior,
            null,
            null,
            ch.prior?.private ?? EMPTY,
            null,
          );
          this.state.delete(ch.address);
        }
        const prior = ch.action === "replace" ? null : ch.prior;
        // The apply-time plan, with the configuration wholly known.
        const final = await this.planOne(c, schema, block, prior, {
          apply: true,
          plannedPrivate: ch.plannedPrivate,
        });
        const obj = await this.applyOne(
          c,
          schema,
          ch.address,
          block.type,
          prior,
          final.planned,
          final.config,
          final.plannedPrivate,
          final.plannedIdentity,
        );
        if (obj) this.state.set(ch.address, obj);
      }
    });
    return changes;
  }

  private beforeDestroyOf(blocks: Blocks, ch: PlannedChange): ActionBlock | undefined {
    if (ch.action !== "delete" || !this.facts.v611) return undefined;
    return blocks.destroyed?.find((r) => `${r.type}.${r.name}` === ch.address)?.beforeDestroy;
  }

  private async applyOne(
    c: Caller,
    s: LoadedSchema,
    address: string,
    type: string,
    prior: StoredObject | null,
    planned: Rec | null,
    config: Rec | null,
    plannedPrivate: Buffer,
    plannedIdentity: Rec | null,
  ): Promise<StoredObject | null> {
    const schema = this.resourceSchema(s, type);
    const res = await c.call("ApplyResourceChange", {
      type_name: type,
      prior_state: dv(prior?.value ?? null, schema.type),
      planned_state: dv(planned, schema.type),
      config: dv(config, schema.type),
      planned_private: plannedPrivate,
      ...(this.identityIn(s, type, plannedIdentity)
        ? { planned_identity: this.identityIn(s, type, plannedIdentity) }
        : {}),
    });
    const value = decodeDv(res.new_state, schema.type);
    const obj =
      value === null
        ? null
        : {
            type,
            value: value as Rec,
            private: (res.private as Buffer | undefined) ?? EMPTY,
            identity: this.identityOut(s, type, res.new_identity),
          };
    // A failed create that left an object is kept (tainted), as Terraform keeps it.
    if (obj) this.state.set(address, obj);
    this.fail(diagnosticsOf(res.diagnostics, "ApplyResourceChange"), `apply of ${address}`);
    return obj;
  }

  /** `terraform query` (1.14+): list blocks, and with `generateConfig` the configuration to keep. */
  async query(lists: ListBlock[], opts: { generateConfig?: boolean } = {}): Promise<QueryResult> {
    if (!this.facts.query) throw new Error(`Terraform ${this.opts.version} has no terraform query`);
    const s = await this.loadSchema();
    await this.withProcess((c) => this.schema(c).then(() => this.validateWalk(c, s, { lists })));
    return this.withProcess(async (c) => {
      const schema = await this.schema(c);
      await this.configure(c, schema, false);
      const result: QueryResult = { found: [], generated: [] };
      for (const l of lists) {
        const ls = schema.lists[l.type]!;
        const rs = this.resourceSchema(schema, l.type);
        const config = dv(fullObject(ls, l.config), ls.type);
        const v = await c.call("ValidateListResourceConfig", { type_name: l.type, config });
        this.fail(
          diagnosticsOf(v.diagnostics, "ValidateListResourceConfig"),
          `query of list.${l.type}.${l.name}`,
        );
        const limit = l.limit ?? 100;
        const include = opts.generateConfig ? true : (l.includeResource ?? false);
        const events = await c.stream(
          "ListResource",
          { type_name: l.type, config, include_resource_object: include, limit },
          limit,
        );
        const found: QueryResult["found"] = [];
        for (const e of events) {
          const diags = diagnosticsOf(e.diagnostic, "ListResource");
          this.fail(diags, `query of list.${l.type}.${l.name}`);
          const identity = this.identityOut(schema, l.type, e.identity);
          if (!identity) {
            if (diags.length > 0) continue;
            throw new Error(`missing identity data in ListResource event for ${l.type}`);
          }
          found.push({
            list: `list.${l.type}.${l.name}`,
            displayName: String(e.display_name ?? ""),
            identity,
            object: include && e.resource_object ? (decodeDv(e.resource_object, rs.type) as Rec) : null,
          });
        }
        result.found.push(...found);
        if (!opts.generateConfig) continue;
        for (const [i, f] of found.entries()) {
          const state = this.opts.patch === "1.14.0" ? null : f.object;
          const g = await c.call("GenerateResourceConfig", {
            type_name: l.type,
            ...(state ? { state: dv(state, rs.type) } : {}),
          });
          this.fail(diagnosticsOf(g.diagnostics, "GenerateResourceConfig"), `configuration of ${l.type}`);
          result.generated.push({
            address: `${l.type}.${l.name}_${i}`,
            type: l.type,
            attributes: rs.attributes,
            config: decodeDv(g.config, rs.type) as Rec | null,
            identity: f.identity,
            identityAttributes: Object.keys(schema.identities[l.type]!.type.attributes),
          });
        }
      }
      return result;
    });
  }

  private async planAction(c: Caller, s: LoadedSchema, a: ActionBlock): Promise<void> {
    const schema = s.actions[a.type];
    if (!schema) throw new Error(`no action ${a.type}`);
    const res = await c.call("PlanAction", {
      action_type: a.type,
      config: dv(fullObject(schema, a.config), schema.type),
      client_capabilities: this.capabilities(false),
    });
    this.fail(diagnosticsOf(res.diagnostics, "PlanAction"), `plan of action.${a.type}.${a.name}`);
  }

  /** The events of one invocation: progress messages, and the completion's diagnostics. */
  readonly progress: string[] = [];

  private async invokeAction(c: Caller, s: LoadedSchema, a: ActionBlock): Promise<void> {
    const schema = s.actions[a.type]!;
    const events = await c.stream("InvokeAction", {
      action_type: a.type,
      config: dv(fullObject(schema, a.config), schema.type),
      client_capabilities: this.capabilities(true),
    });
    let completed = false;
    for (const e of events) {
      if (e.type === "progress") this.progress.push(String((e.progress as Msg).message));
      else if (e.type === "completed") {
        completed = true;
        this.fail(
          diagnosticsOf((e.completed as Msg).diagnostics, "InvokeAction"),
          `action.${a.type}.${a.name}`,
        );
      } else throw new Error(`unexpected event type ${String(e.type)} in InvokeAction response`);
    }
    if (!completed) throw new Error(`action.${a.type}.${a.name}: the stream ended without a completion`);
  }

  /** `terraform apply -invoke=action.<type>.<name>` (1.14+). */
  async invoke(action: ActionBlock): Promise<void> {
    if (!this.facts.query) throw new Error(`Terraform ${this.opts.version} has no actions`);
    const s = await this.loadSchema();
    await this.withProcess((c) => this.schema(c).then(() => this.validateWalk(c, s, { actions: [action] })));
    await this.withProcess(async (c) => {
      const schema = await this.schema(c);
      await this.configure(c, schema, false);
      await this.planAction(c, schema, action);
    });
    await this.withProcess(async (c) => {
      const schema = await this.schema(c);
      await this.configure(c, schema, true);
      await this.invokeAction(c, schema, action);
    });
  }
}

interface Caller {
  call(rpc: string, req: Msg): Promise<Decoded>;
  stream(rpc: string, req: Msg, take?: number): Promise<Decoded[]>;
}
