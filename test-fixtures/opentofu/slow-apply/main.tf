# An apply that takes a while and says so every second: for cancellation and restarts.
variable "seconds" {
  type    = number
  default = 30
}

variable "run" {
  type    = string
  default = "1"
}

resource "terraform_data" "slow" {
  input = var.run

  provisioner "local-exec" {
    command = "for i in $(seq 1 ${var.seconds}); do echo \"progress $i/${var.seconds}\"; sleep 1; done"
  }
}

output "finished" {
  value = terraform_data.slow.output
}
