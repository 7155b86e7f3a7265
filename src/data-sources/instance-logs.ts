import { attr, type DataSourceDefinition, defineSchema, t, toNumber, wholeNumber } from "../framework";
import { apiId } from "../provider/ids";
import { clientOf, type ProviderData } from "../provider/provider-data";
import { readOptions, reportReadError } from "./common";

/** The API's bounds and default of `tail` (contract 4.2). */
export const LOGS_TAIL = { min: 1, max: 1000, default: 200 } as const;

const schema = defineSchema({
  description:
    "Reads the most recent log lines of an instance. The list is empty until the workload has run for the first time; there is no streaming, so each read is a snapshot.",
  attributes: {
    instance_id: attr.string({
      required: true,
      description: "ID of the instance.",
      validators: [apiId("instance_id", "an instance")],
    }),
    tail: attr.number({
      optional: true,
      computed: true,
      description: `How many of the most recent lines to read, from ${LOGS_TAIL.min} to ${LOGS_TAIL.max}. Default ${LOGS_TAIL.default}.`,
      validators: [wholeNumber("tail", LOGS_TAIL.min, LOGS_TAIL.max, "the API's limit for log lines")],
    }),
    lines: attr.list(t.string, {
      computed: true,
      description: "The log lines, oldest first.",
    }),
  },
});

/** The `gpurental_instance_logs` data source: the last lines of an instance's log. */
export const instanceLogsDataSource = {
  typeName: "gpurental_instance_logs",
  schema,
  async read({ config }, ctx) {
    const tail = config.tail === null ? LOGS_TAIL.default : toNumber(config.tail);
    try {
      const lines = await clientOf(ctx.providerData).getInstanceLogs(
        config.instance_id!,
        { tail },
        readOptions(ctx),
      );
      return { tail, lines };
    } catch (err) {
      reportReadError(ctx.diags, "gpurental_instance_logs", err);
      return {};
    }
  },
} satisfies DataSourceDefinition<typeof schema, ProviderData>;
