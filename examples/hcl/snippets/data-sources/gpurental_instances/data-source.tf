data "gpurental_instances" "all" {}

output "running_instances" {
  value = [for i in data.gpurental_instances.all.instances : i.id if i.status == "running"]
}

output "hourly_burn_micro" {
  value = sum(concat([0], [for i in data.gpurental_instances.all.instances : i.price_per_hour_micro if i.status == "running"]))
}
