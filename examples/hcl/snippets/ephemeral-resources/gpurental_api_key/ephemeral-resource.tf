# A team key for this run only (Terraform 1.10 or later): created when the run needs it, revoked
# when the run is done with it, never in a plan or the state. The default provider holds an
# admin's session token (GPURENTAL_TOKEN); the alias deploys with the run's key, so the instances
# show the key in deployed_via_api_key.
ephemeral "gpurental_api_key" "run" {
  name = "nightly-training-run"
  kind = "team"
}

provider "gpurental" {
  alias = "run"
  token = ephemeral.gpurental_api_key.run.secret
}

resource "gpurental_instance" "nightly" {
  provider     = gpurental.run
  offer_filter = { gpu_model = "RTX 4090", num_gpus = 1 }
  template_id  = "00000000-0000-4000-8000-000000000051"
  disk_gb      = 50

  # Write-only (Terraform 1.11 or later): sent at deploy time and stored nowhere. The key is revoked
  # when the run ends, so it serves what the instance does while the apply lasts (e.g. registering
  # itself), not a job that outlives the run.
  secret_env_wo         = { GPURENTAL_TOKEN = ephemeral.gpurental_api_key.run.secret }
  secret_env_wo_version = 1
}
