# Rents the cheapest matching GPU offer with a recommended SSH template, creates a team API key for
# CI jobs, and prints the SSH command to reach the instance.
#
# Point it at a gpurental endpoint with GPURENTAL_BASE_URL and GPURENTAL_TOKEN, or with the
# base_url and token variables. Creating a team API key needs an admin's signed-in session token.

terraform {
  required_version = ">= 1.5"

  required_providers {
    gpurental = {
      source = "gpurental/gpurental"
    }
  }
}

provider "gpurental" {
  # null falls back to GPURENTAL_BASE_URL, GPURENTAL_TOKEN and GPURENTAL_ORG_ID.
  base_url = var.base_url
  token    = var.token
  org_id   = var.org_id
}

data "gpurental_offers" "candidates" {
  gpu_model = var.gpu_model
  num_gpus  = var.num_gpus
  sort      = "price_asc"

  lifecycle {
    postcondition {
      condition     = length(self.offers) > 0
      error_message = "No available offer matches gpu_model \"${var.gpu_model}\" with ${var.num_gpus} GPU(s)."
    }
  }
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
  # Offers come cheapest first, templates newest first.
  offer    = data.gpurental_offers.candidates.offers[0]
  template = data.gpurental_templates.ssh.templates[0]
}

resource "gpurental_api_key" "ci" {
  name = var.api_key_name
  kind = "team"
}

resource "gpurental_instance" "workstation" {
  offer_id    = local.offer.id
  template_id = local.template.id
  disk_gb     = var.disk_gb
  label       = var.label
  ssh_key_id  = var.ssh_key_id

  env = {
    TZ = "UTC"
  }

  timeouts {
    create = "20m"
  }
}
