resource "gpurental_instance" "notebook" {
  offer_filter = { gpu_model = "RTX 4090", num_gpus = 1 }
  template_id  = "00000000-0000-4000-8000-000000000051"
  disk_gb      = 50

  # No access token, jupyter_url or open_url in the state; jupyter_address (token masked) stays.
  store_access_secrets = false
}

# The instance's secrets for this run only (Terraform 1.10 or later).
ephemeral "gpurental_instance_access" "notebook" {
  instance_id = gpurental_instance.notebook.id
}

# Handed to what needs them without a state: here another instance's write-only argument
# (Terraform 1.11 or later), e.g. a dashboard that reads the notebook's API.
resource "gpurental_instance" "dashboard" {
  offer_filter = { gpu_model = "RTX 4090", num_gpus = 1 }
  template_id  = "00000000-0000-4000-8000-000000000051"
  disk_gb      = 20

  secret_env_wo = {
    NOTEBOOK_URL   = ephemeral.gpurental_instance_access.notebook.jupyter_url
    NOTEBOOK_TOKEN = ephemeral.gpurental_instance_access.notebook.access_token
  }
  secret_env_wo_version = 1
}

output "notebook_address" {
  value = gpurental_instance.notebook.jupyter_address # token masked
}

output "notebook_ssh" {
  value = "ssh -p ${gpurental_instance.notebook.ssh_port} ${gpurental_instance.notebook.ssh_user}@${gpurental_instance.notebook.ssh_host}"
}
