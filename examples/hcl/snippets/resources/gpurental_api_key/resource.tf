# A team key for CI jobs; creating it needs an admin's session token.
resource "gpurental_api_key" "ci" {
  name = "ci-pipeline"
  kind = "team"
}

output "ci_api_key_secret" {
  value     = gpurental_api_key.ci.secret
  sensitive = true
}
