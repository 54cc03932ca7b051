/** Settings of the Terraform Cloud protocol (issue 26). */
export interface TfeSettings {
  /** Lifetime of the API token `tofu login` mints (`TRELLIS_TFE_LOGIN_TOKEN_DAYS`, default 90). */
  loginTokenDays: number;
  /** How long a `hosted-state-*-url` works (default 5 minutes). */
  signedUrlSeconds: number;
  /** How long the authorization code of a `tofu login` may wait for its token request. */
  loginCodeSeconds: number;
}

export const DEFAULT_TFE_SETTINGS: TfeSettings = {
  loginTokenDays: 90,
  signedUrlSeconds: 300,
  loginCodeSeconds: 300,
};
