# The same fleet as ../main.ts in plain Terraform, for pipelines without CDKTF: run the pipeline
# with PIPELINE_DIR=hcl. The state lives in PostgreSQL (PG_CONN_STR), in a schema of its own; the
# provider takes GPURENTAL_BASE_URL and GPURENTAL_TOKEN from the environment. Neither is a
# variable: a saved plan keeps every variable's value in clear text (docs/ci.md).

terraform {
  required_version = ">= 1.5"

  backend "pg" {
    schema_name = "gpu_fleet_hcl"
  }

  required_providers {
    gpurental = {
      source = "gpurental/gpurental"
    }
  }
}

provider "gpurental" {}

locals {
  fleet = {
    train = { gpu_model = "RTX 4090", max_price_per_hour_micro = 3000000, disk_gb = 100 }
    eval  = { gpu_model = "RTX 3090", max_price_per_hour_micro = 2000000, disk_gb = 50 }
  }
}

data "gpurental_templates" "ssh" {
  tab  = "recommended"
  mode = "ssh"
}

resource "gpurental_instance" "fleet" {
  for_each = local.fleet

  offer_filter = {
    gpu_model                = each.value.gpu_model
    num_gpus                 = 1
    max_price_per_hour_micro = each.value.max_price_per_hour_micro
  }
  template_id = data.gpurental_templates.ssh.templates[0].id
  disk_gb     = each.value.disk_gb
  label       = each.key
}

output "ssh" {
  value = {
    for name, i in gpurental_instance.fleet : name => "ssh -p ${i.ssh_port} ${i.ssh_user}@${i.ssh_host}"
  }
}
