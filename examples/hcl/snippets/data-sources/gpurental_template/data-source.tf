variable "template_id" {
  type = string
}

data "gpurental_template" "chosen" {
  id = var.template_id
}

output "template_image" {
  value = data.gpurental_template.chosen.image
}

output "template_variables" {
  value = [for e in data.gpurental_template.chosen.env : e.key]
}
