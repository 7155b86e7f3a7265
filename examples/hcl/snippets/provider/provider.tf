terraform {
  required_providers {
    gpurental = {
      source = "gpurental/gpurental"
    }
  }
}

# The token comes from GPURENTAL_TOKEN, never from a Terraform variable: a saved plan keeps every
# variable's value in clear text, sensitive or not. base_url and org_id can come from
# GPURENTAL_BASE_URL and GPURENTAL_ORG_ID too.
provider "gpurental" {
  base_url = "https://api.gpurental.example"
}
