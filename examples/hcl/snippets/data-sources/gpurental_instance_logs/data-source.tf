variable "trainer_instance_id" {
  type = string
}

data "gpurental_instance_logs" "trainer" {
  instance_id = var.trainer_instance_id
  tail        = 50
}

output "trainer_log" {
  value = join("\n", data.gpurental_instance_logs.trainer.lines)
}
