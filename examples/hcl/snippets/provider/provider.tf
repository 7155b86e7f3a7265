terraform {
  required_providers {
    gpurental = {
      source = "gpurental/gpurental"
    }
  }
}

# Every argument can come from the environment instead:
# GPURENTAL_BASE_URL, GPURENTAL_TOKEN and GPURENTAL_ORG_ID.
provider "gpurental" {
  base_url = "https://api.gpurental.example"
  token    = var.gpurental_token
}

variable "gpurental_token" {
  description = "API key secret (gpr_...) or session token (gps_...)."
  type        = string
  sensitive   = true
}
