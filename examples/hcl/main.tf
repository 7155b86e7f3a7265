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
      condition = anytrue([
        for o in self.offers : o.next_maintenance == null ? true : timecmp(o.next_maintenance, timeadd(plantimestamp(), "24h")) > 0
      ])
      error_message = "No offer of ${var.num_gpus} x ${var.gpu_model} can be rented now (sold out, or every machine goes into maintenance within 24 hours)."
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
  # Deploys are refused on a machine booked for maintenance within 24 hours (MACHINE_IN_MAINTENANCE).
  clear_of_maintenance = {
    for o in data.gpurental_offers.candidates.offers :
    o.id => o.next_maintenance == null ? true : timecmp(o.next_maintenance, timeadd(plantimestamp(), "24h")) > 0
  }
  # Offers come cheapest first, templates newest first.
  offer    = [for o in data.gpurental_offers.candidates.offers : o if local.clear_of_maintenance[o.id]][0]
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

  timeouts = {
    create = "20m"
  }
}
