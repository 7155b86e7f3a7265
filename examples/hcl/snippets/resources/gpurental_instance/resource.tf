data "gpurental_offers" "rtx4090" {
  gpu_model = "RTX 4090"
  num_gpus  = 1
  sort      = "price_asc"
}

data "gpurental_templates" "pytorch" {
  tab  = "recommended"
  mode = "ssh"
}

data "gpurental_ssh_keys" "mine" {}

resource "gpurental_instance" "trainer" {
  offer_id    = data.gpurental_offers.rtx4090.offers[0].id
  template_id = data.gpurental_templates.pytorch.templates[0].id
  disk_gb     = 100
  label       = "trainer"
  ssh_key_id  = data.gpurental_ssh_keys.mine.ssh_keys[0].id

  env = {
    WANDB_PROJECT = "resnet"
  }
  secret_env = {
    WANDB_API_KEY = var.wandb_api_key
  }

  # Set to "stopped" to stop the instance and keep its disk.
  desired_status = "running"

  timeouts = {
    create = "30m"
  }
}

variable "wandb_api_key" {
  type      = string
  sensitive = true
}

output "ssh_command" {
  value = "ssh -p ${gpurental_instance.trainer.ssh_port} ${gpurental_instance.trainer.ssh_user}@${gpurental_instance.trainer.ssh_host}"
}
