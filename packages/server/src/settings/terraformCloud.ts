import { integer, optionalText } from './Setting.js';

/** HTTPS served directly, and the Terraform Cloud protocol of the stock CLI (docs/terraform-cloud.md). */
export const TERRAFORM_CLOUD_SETTINGS = {
  tlsCertFile: optionalText({
    env: 'TRELLIS_TLS_CERT_FILE',
    accepts: 'a PEM file',
    description:
      'serve HTTPS directly with this certificate chain (with `TRELLIS_TLS_KEY_FILE`; both or neither): small installs and tests. The stock CLI only discovers `https://` hosts; behind a TLS-terminating proxy leave both unset (`docs/terraform-cloud.md`)',
  }),
  tlsKeyFile: optionalText({
    env: 'TRELLIS_TLS_KEY_FILE',
    accepts: 'a PEM file',
    description: 'the private key of `TRELLIS_TLS_CERT_FILE`',
  }),
  tfeLoginTokenDays: integer({
    env: 'TRELLIS_TFE_LOGIN_TOKEN_DAYS',
    default: 90,
    min: 1,
    max: 365,
    description: 'lifetime in days of the API token `tofu login` mints (a `trt_` token of the person, revocable)',
  }),
  tfeAuthFailureLimit: integer({
    env: 'TRELLIS_TFE_AUTH_FAILURE_LIMIT',
    default: 30,
    min: 1,
    max: 100_000,
    description:
      'failed bearer tokens and `tofu login` token requests per client address and window on the Terraform Cloud API and the registry before `429` (a token that verified from the address within the hour still passes)',
  }),
  tfeAuthFailureWindowSeconds: integer({
    env: 'TRELLIS_TFE_AUTH_FAILURE_WINDOW_S',
    default: 60,
    min: 1,
    max: 86_400,
    description: 'the window of `TRELLIS_TFE_AUTH_FAILURE_LIMIT`, in seconds',
  }),
};
