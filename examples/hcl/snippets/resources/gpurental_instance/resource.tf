data "gpurental_templates" "pytorch" {
  tab  = "recommended"
  mode = "ssh"
}

data "gpurental_ssh_keys" "mine" {}

resource "gpurental_instance" "trainer" {
  # Rents the cheapest matching offer when the instance is created, and keeps it. To insist on one
  # particular offer, set offer_id = "<offer id>" instead (a changed offer_id replaces the instance).
  offer_filter = {
    gpu_model                = "RTX 4090"
    num_gpus                 = 1
    max_price_per_hour_micro = 3000000 # ¥3.00 per hour
    region                   = "cn-east-1"
  }
  template_id = data.gpurental_templates.pytorch.templates[0].id
  disk_gb     = 100
  label       = "trainer"
  ssh_key_id  = data.gpurental_ssh_keys.mine.ssh_keys[0].id

  env = {
    WANDB_PROJECT = "resnet"
  }
  # Write-only (Terraform 1.11 or later): sent when the instance is deployed, never stored in the
  # plan or the state. New values alone change nothing; bump secret_env_wo_version to redeploy the
  # instance with them. (secret_env takes the same map on older Terraform, but stores it.)
  secret_env_wo = {
    WANDB_API_KEY = var.wandb_api_key
  }
  secret_env_wo_version = 1

  # Set to "stopped" to stop the instance and keep its disk.
  desired_status = "running"

  timeouts = {
    create = "30m"
  }
}

variable "wandb_api_key" {
  type      = string
  sensitive = true
  ephemeral = true # given to each command, kept in no plan file
}

output "rented" {
  value = "${gpurental_instance.trainer.offer.gpu_model} on offer ${gpurental_instance.trainer.offer_id} at ${gpurental_instance.trainer.price_per_hour_micro} micro-yuan per hour"
}

output "ssh_command" {
  value = "ssh -p ${gpurental_instance.trainer.ssh_port} ${gpurental_instance.trainer.ssh_user}@${gpurental_instance.trainer.ssh_host}"
}
