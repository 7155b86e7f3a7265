data "gpurental_api_keys" "all" {}

output "keys_of_former_members" {
  value = [for k in data.gpurental_api_keys.all.api_keys : "${k.name} (${k.prefix})" if !k.creator_is_member]
}
