# The single RTX 4090 offers a deploy of this template with 100 GB of disk would be accepted on,
# cheapest first (machines going into maintenance within a day last). To rent one, give the
# instance the same criteria as offer_filter rather than one of these ids as offer_id.
data "gpurental_templates" "pytorch" {
  tab  = "recommended"
  mode = "ssh"
}

data "gpurental_offers" "rtx4090" {
  gpu_model                = "RTX 4090"
  num_gpus                 = 1
  max_price_per_hour_micro = 3000000
  sort                     = "price_asc"

  deployable_with = {
    template_id = data.gpurental_templates.pytorch.templates[0].id
    disk_gb     = 100
  }
}

output "cheapest_offer" {
  value = length(data.gpurental_offers.rtx4090.offers) == 0 ? null : {
    id                   = data.gpurental_offers.rtx4090.offers[0].id
    price_per_hour_micro = data.gpurental_offers.rtx4090.offers[0].price_per_hour_micro
    region               = data.gpurental_offers.rtx4090.offers[0].region
  }
}
