# A configuration error the engine reports at plan time.
resource "terraform_data" "broken" {
  input = undefined_thing.value
}
