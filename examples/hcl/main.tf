# Rents a GPU instance on the cheapest offer matching a market filter, with a recommended SSH
# template, creates a team API key for CI jobs, and prints the SSH command to reach the instance.
#
# Point it at a gpurental endpoint with GPURENTAL_BASE_URL (or the base_url variable) and give the
# credential in GPURENTAL_TOKEN: a token variable would be kept in clear text in saved plans.
# Creating a team API key needs an admin's signed-in session token.

terraform {
  required_version = ">= 1.5"

  required_providers {
    gpurental = {
      source = "gpurental/gpurental"
    }
  }
}

provider "gpurental" {
  # The token comes from GPURENTAL_TOKEN; null falls back to GPURENTAL_BASE_URL and GPURENTAL_ORG_ID.
  base_url = var.base_url
  org_id   = var.org_id
}

data "gpurental_templates" "ssh" {
  tab  = "recommended"
  mode = "ssh"

  lifecycle {
    postcondition {
      condition     = length(self.templates) > 0
      error_message = "No recommended SSH template is available."
    }
  }
}

locals {
  # Templates come newest first.
  template = data.gpurental_templates.ssh.templates[0]
}

# What the market offers now for this instance, cheapest first: for the outputs only. The instance
# does not take an id from here; it chooses with its own offer_filter (see below).
data "gpurental_offers" "market" {
  gpu_model                = var.gpu_model
  num_gpus                 = var.num_gpus
  max_price_per_hour_micro = var.max_price_per_hour_micro
  sort                     = "price_asc"

  deployable_with = {
    template_id = local.template.id
    disk_gb     = var.disk_gb
  }
}

resource "gpurental_api_key" "ci" {
  name = var.api_key_name
  kind = "team"
}

resource "gpurental_instance" "workstation" {
  # The cheapest matching offer that a deploy of this template and disk would be accepted on is
  # rented when the instance is created, and kept: a cheaper offer appearing or the chosen one
  # selling out changes nothing. Pin offer_id instead only to insist on one particular offer.
  offer_filter = {
    gpu_model                = var.gpu_model
    num_gpus                 = var.num_gpus
    max_price_per_hour_micro = var.max_price_per_hour_micro
  }
  template_id = local.template.id
  disk_gb     = var.disk_gb
  label       = var.label
  ssh_key_id  = var.ssh_key_id

  env = {
    TZ = "UTC"
  }

  timeouts = {
    create = "20m"
  }
}
