# Everything a DEPLOY reports, with no provider to download: variables, a terraform_data
# resource with a local-exec provisioner, the outputs the control plane keeps on the vine and
# one sensitive output that must never leave the agent.
variable "cluster" {
  type    = string
  default = "demo"
}

variable "api_token" {
  type      = string
  default   = "not-set"
  sensitive = true
}

resource "terraform_data" "cluster" {
  input = var.cluster

  provisioner "local-exec" {
    command = "echo provisioning cluster ${self.input}"
  }
}

output "cluster_name" {
  value = terraform_data.cluster.output
}

output "cluster_endpoint" {
  value = "https://${terraform_data.cluster.output}.k8s.example.com"
}

output "argocd_url" {
  value = "https://argocd.${terraform_data.cluster.output}.example.com"
}

output "replicas" {
  value = 3
}

output "api_token" {
  value     = var.api_token
  sensitive = true
}
