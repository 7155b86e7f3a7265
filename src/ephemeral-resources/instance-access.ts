import { attr, defineSchema, type EphemeralResourceDefinition } from "../framework";
import { budgetOf, READ_TIMEOUT_MS, within } from "../provider/deadline";
import { apiId } from "../provider/ids";
import { clientOf, type ProviderData } from "../provider/provider-data";
import { errorToDiagnostic } from "../provider/refusals";

// ephemeral "gpurental_instance_access": an instance's access secrets (its access token and the
// addresses that carry it) and how to reach it by SSH, read for one run and never written to a plan
// or a state. Nothing is created, so there is nothing to close or renew: the token lives as long as
// the instance.

const str = (description: string, sensitive = false) =>
  attr.string({ computed: true, description, sensitive });

const schema = defineSchema({
  description: [
    "An instance's access secrets for the length of one Terraform run (Terraform 1.10 or later): its access token, the JupyterLab and open-button addresses that carry it, and the SSH command, read from the API when the run needs them and never written to a plan or a state. Feed them to what needs them without a state: another provider's write-only argument, a provider configuration, or a provisioner.",
    "It is the way to an instance's secrets when `gpurental_instance` has `store_access_secrets = false`. The values are those of the instance when the run reads them: an instance that is still starting may not have reported `jupyter_url` or `open_url` yet (null). Referenced from an instance created in the same run, it is read after the instance is created.",
  ].join("\n\n"),
  attributes: {
    instance_id: attr.string({
      required: true,
      description: "ID of the instance, e.g. `gpurental_instance.gpu.id`.",
      validators: [apiId("instance_id", "an instance")],
    }),
    status: str("Status of the instance when it was read."),
    access_token: str(
      "The instance access token: the JupyterLab token, the bearer key of the template's app ports, and the password of accounts the template creates. Null when the template uses none.",
      true,
    ),
    jupyter_url: str(
      "JupyterLab address with its token, once a jupyter template reports it; otherwise null.",
      true,
    ),
    open_url: str(
      "Address of the template's open button (may carry the token), once reported; otherwise null.",
      true,
    ),
    ssh_host: str("Public IP address of the instance's host."),
    ssh_port: attr.number({ computed: true, description: "SSH port of the instance." }),
    ssh_user: str("User to connect as with SSH."),
    ssh_command: str("`ssh -p <port> <user>@<host>`: the command that opens a shell on the instance."),
  },
});

/** The `gpurental_instance_access` ephemeral resource. */
export const instanceAccessEphemeral = {
  typeName: "gpurental_instance_access",
  schema,

  async open({ config }, ctx) {
    const id = config.instance_id as string;
    try {
      const inst = await clientOf(ctx.providerData).getInstance(
        id,
        within(budgetOf(ctx.timeoutMs ?? READ_TIMEOUT_MS, ctx.signal)),
      );
      if (inst.status === "destroyed") {
        ctx.diags.addAttributeError(
          [{ attribute: "instance_id" }],
          `Instance ${id} is destroyed`,
          "A destroyed instance has no access token; reference a live instance.",
        );
        return { result: {} };
      }
      return {
        result: {
          status: inst.status,
          access_token: inst.access_token,
          jupyter_url: inst.jupyter_url,
          open_url: inst.open_url,
          ssh_host: inst.ssh_host,
          ssh_port: inst.ssh_port,
          ssh_user: inst.ssh_user,
          ssh_command: `ssh -p ${inst.ssh_port} ${inst.ssh_user}@${inst.ssh_host}`,
        },
      };
    } catch (err) {
      const d = errorToDiagnostic(err, "read");
      ctx.diags.add({ ...d, path: [{ attribute: "instance_id" }] });
      return { result: {} };
    }
  },
} satisfies EphemeralResourceDefinition<typeof schema, ProviderData>;
