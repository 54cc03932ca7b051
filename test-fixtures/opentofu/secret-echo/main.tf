# A sensitive variable that reaches the log anyway: the configuration hands it to a shell with
# nonsensitive(), so the engine no longer masks it. The agent must redact it before the log leaves
# the machine.
variable "db_password" {
  type      = string
  sensitive = true
}

resource "terraform_data" "echo" {
  input = "once"

  provisioner "local-exec" {
    command = "echo \"connecting with password $DB_PASSWORD\"; printf 'split:%s\\n' \"$DB_PASSWORD\" >&2"
    environment = {
      DB_PASSWORD = nonsensitive(var.db_password)
    }
  }
}
