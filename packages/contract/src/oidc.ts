/** The OIDC issuer of job identity tokens (issue 16): discovery and the JWKS, both public. */
import { z } from 'zod';

export const OpenIdConfiguration = z.object({
  issuer: z.string(),
  jwks_uri: z.string(),
  response_types_supported: z.array(z.string()),
  subject_types_supported: z.array(z.string()),
  id_token_signing_alg_values_supported: z.array(z.string()),
  claims_supported: z.array(z.string()),
  scopes_supported: z.array(z.string()),
});

export const JsonWebKeySet = z.object({
  keys: z.array(
    z
      .object({ kty: z.string(), kid: z.string(), alg: z.string(), use: z.string() })
      .passthrough()
      .describe('a public key: RSA (n, e) or EC P-256 (crv, x, y)'),
  ),
});
