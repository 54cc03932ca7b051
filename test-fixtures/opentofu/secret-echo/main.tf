# A sensitive variable that reaches the log anyway: the shell reads it from TF_VAR_db_password,
# which the engine cannot mark sensitive. The agent must redact it before the log leaves the machine.
variable "db_password" {
  type      = string
  sensitive = true
}

resource "terraform_data" "echo" {
  input = "once"

  provisioner "local-exec" {
    command = "echo \"connecting with password $TF_VAR_db_password\"; printf 'split:%s\\n' \"$TF_VAR_db_password\" >&2"
  }
}
