variable "base_url" {
  description = "Base address of the gpurental API, e.g. https://api.example.com. null uses GPURENTAL_BASE_URL."
  type        = string
  default     = null
}

variable "org_id" {
  description = "Organization to act in (sent as X-Org-Id). null uses GPURENTAL_ORG_ID, or the credential's own organization."
  type        = string
  default     = null
}

variable "gpu_model" {
  description = "GPU model to rent, matched exactly and case-insensitively."
  type        = string
  default     = "RTX 4090"
}

variable "num_gpus" {
  description = "Number of GPUs in the offer."
  type        = number
  default     = 1
}

variable "max_price_per_hour_micro" {
  description = "Highest GPU price per hour to rent at, in micro-yuan (1 yuan = 1000000); null for no limit."
  type        = number
  default     = 3000000
}

variable "disk_gb" {
  description = "Disk size of the instance in GB (10 to 20000, and at most the machine's disk)."
  type        = number
  default     = 50
}

variable "label" {
  description = "Label shown for the instance in the console."
  type        = string
  default     = "terraform-example"
}

variable "ssh_key_id" {
  description = "ID of one of your SSH keys (see the gpurental_ssh_keys data source). Without one, SSH is impossible."
  type        = string
  default     = null
}

variable "api_key_name" {
  description = "Name of the team API key for CI jobs."
  type        = string
  default     = "terraform-example-ci"
}
