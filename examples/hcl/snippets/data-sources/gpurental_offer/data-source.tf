variable "offer_id" {
  type = string
}

data "gpurental_offer" "chosen" {
  id = var.offer_id

  lifecycle {
    postcondition {
      condition     = self.availability == "available" && self.free_units > 0
      error_message = "Offer ${var.offer_id} is ${self.availability} and cannot be rented now."
    }
  }
}

output "offer_machine" {
  value = data.gpurental_offer.chosen.machine
}
