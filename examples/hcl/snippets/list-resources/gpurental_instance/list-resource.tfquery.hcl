# Running training instances, with their objects, so that
# `terraform query -generate-config-out=generated.tf` writes configuration to keep.
list "gpurental_instance" "training" {
  provider         = gpurental
  include_resource = true
  limit            = 50

  config {
    label_prefix  = "train-"
    status        = "running"
    gpu_model     = "RTX 4090"
    created_after = "2026-11-01T00:00:00Z"
  }
}
