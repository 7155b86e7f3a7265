output "instance_id" {
  description = "ID of the instance."
  value       = gpurental_instance.workstation.id
}

output "instance_status" {
  description = "Status of the instance after the apply."
  value       = gpurental_instance.workstation.status
}

output "offer" {
  description = "The offer the instance rents, chosen by offer_filter when it was created, and the GPU price per hour snapshotted then."
  value = {
    id                   = gpurental_instance.workstation.offer_id
    gpu_model            = gpurental_instance.workstation.offer.gpu_model
    price_per_hour_micro = gpurental_instance.workstation.price_per_hour_micro
  }
}

output "market_now" {
  description = "How many offers this instance could be deployed on now, and the cheapest GPU price per hour among them."
  value = {
    offers                        = length(data.gpurental_offers.market.offers)
    cheapest_price_per_hour_micro = try(data.gpurental_offers.market.offers[0].price_per_hour_micro, null)
  }
}

output "ssh_command" {
  description = "Command that opens a shell on the instance."
  value       = "ssh -p ${gpurental_instance.workstation.ssh_port} ${gpurental_instance.workstation.ssh_user}@${gpurental_instance.workstation.ssh_host}"
}

output "access_token" {
  description = "The instance access token (JupyterLab token, app bearer key, pre-created account password)."
  value       = gpurental_instance.workstation.access_token
  sensitive   = true
}

output "ci_api_key_secret" {
  description = "Secret of the team API key; store it in your CI system. Only known to Terraform for keys it created."
  value       = gpurental_api_key.ci.secret
  sensitive   = true
}
