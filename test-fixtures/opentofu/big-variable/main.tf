# A variable larger than one environment entry may be (128 KiB on Linux): it must reach the
# engine in a file, not as TF_VAR_blob.
variable "blob" {
  type = string
}

resource "terraform_data" "blob" {
  input = sha256(var.blob)
}

output "blob_length" {
  value = length(var.blob)
}

output "blob_sha256" {
  value = terraform_data.blob.output
}
