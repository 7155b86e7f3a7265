variable "instance_id" {
  type = string
}

data "gpurental_instance" "existing" {
  id = var.instance_id
}

output "instance_ssh" {
  value = "ssh -p ${data.gpurental_instance.existing.ssh_port} ${data.gpurental_instance.existing.ssh_user}@${data.gpurental_instance.existing.ssh_host}"
}

output "instance_access_token" {
  value     = data.gpurental_instance.existing.access_token
  sensitive = true
}
