# The cheapest single RTX 4090 whose machine is not going into maintenance within a day.
data "gpurental_offers" "rtx4090" {
  gpu_model = "RTX 4090"
  num_gpus  = 1
  sort      = "price_asc"
}

locals {
  rentable_offers = [
    for o in data.gpurental_offers.rtx4090.offers : o
    if o.next_maintenance == null ? true : timecmp(o.next_maintenance, timeadd(plantimestamp(), "24h")) > 0
  ]
}

output "cheapest_offer" {
  value = {
    id                   = local.rentable_offers[0].id
    price_per_hour_micro = local.rentable_offers[0].price_per_hour_micro
    disk_gb              = local.rentable_offers[0].machine.disk_gb
  }
}
