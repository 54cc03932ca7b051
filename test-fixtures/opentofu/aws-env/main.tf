# Records what the engine saw of the AWS credentials, as sha256 hashes in a file, and echoes the
# key id so the test can check it is redacted from the log.
variable "report_path" {
  type = string
}

resource "terraform_data" "aws" {
  input = var.report_path

  provisioner "local-exec" {
    command = <<-EOT
      {
        printf 'AWS_ACCESS_KEY_ID=%s\n' "$(printf '%s' "$AWS_ACCESS_KEY_ID" | sha256sum | cut -d' ' -f1)"
        printf 'AWS_SECRET_ACCESS_KEY=%s\n' "$(printf '%s' "$AWS_SECRET_ACCESS_KEY" | sha256sum | cut -d' ' -f1)"
        printf 'AWS_SESSION_TOKEN=%s\n' "$(printf '%s' "$AWS_SESSION_TOKEN" | sha256sum | cut -d' ' -f1)"
      } > "${self.input}"
      echo "engine runs with key $AWS_ACCESS_KEY_ID"
    EOT
  }
}
