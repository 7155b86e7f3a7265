# The organization's team keys made for CI.
list "gpurental_api_key" "ci" {
  provider = gpurental

  config {
    kind        = "team"
    name_prefix = "ci-"
  }
}
