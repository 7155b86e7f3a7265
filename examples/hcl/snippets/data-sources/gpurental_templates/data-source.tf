data "gpurental_templates" "jupyter" {
  tab  = "recommended"
  mode = "jupyter"
}

output "jupyter_templates" {
  value = { for t in data.gpurental_templates.jupyter.templates : t.name => t.id if t.active && !t.coming_soon }
}
