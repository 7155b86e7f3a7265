# Stop an instance for the night without editing its configuration:
#   terraform apply -invoke=action.gpurental_instance_power.night
# and start it again in the morning with a second action (state = "running").
action "gpurental_instance_power" "night" {
  config {
    instance_id = gpurental_instance.train.id
    state       = "stopped"
    timeout     = "20m"
  }
}

resource "gpurental_instance" "train" {
  offer_filter = { gpu_model = "RTX 4090", num_gpus = 1 }
  template_id  = "00000000-0000-4000-8000-000000000051"
  disk_gb      = 50
  label        = "train-1"

  lifecycle {
    # Power belongs to the actions once the instance exists: without this, the next
    # apply starts it again (its desired_status is "running"), with a warning saying why.
    ignore_changes = [desired_status]
  }
}
