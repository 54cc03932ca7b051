# Variables of every kind a person sets as text, as the engine read them from TF_VAR_*: text for
# primitive types, an expression (JSON or HCL) for complex ones.
variable "tags" {
  type = map(string)
}

variable "zones" {
  type = list(string)
}

variable "replicas" {
  type = number
}

variable "policy" {
  type = string
}

output "summary" {
  value = "${join(",", sort(keys(var.tags)))}|${join(",", var.zones)}|${var.replicas + 1}|${jsondecode(var.policy).Version}"
}
