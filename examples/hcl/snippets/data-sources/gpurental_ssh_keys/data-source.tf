# Needs a session token: API keys cannot read SSH keys.
data "gpurental_ssh_keys" "mine" {}

output "laptop_key_id" {
  value = one([for k in data.gpurental_ssh_keys.mine.ssh_keys : k.id if k.name == "laptop"])
}
