import { parseEncryptionKeys, parseOidcIssuer } from './syntaxes.js';
import { type Setting, custom, family, httpUrl, integer, oneOf, optionalText, secret, text } from './Setting.js';
import { PROVIDERS, type ProviderName } from './providers.js';

const perProvider = <T>(row: Setting<T>) => family<ProviderName, T>('<PROVIDER>', PROVIDERS, row);

/** Secrets, sign-in, the limits on guessing, and the identity of jobs. */
export const ACCESS_SETTINGS = {
  cliJwtSecret: secret({
    env: 'CLI_JWT_SECRET',
    minLength: 32,
    unit: 'bytes',
    shownDefault:
      'generated and kept in `<data dir>/secrets.json` (mode 0600) when the server starts (reading the configuration writes nothing), with a warning',
    description: 'signs CLI tokens and (derived) web sessions; **the same on every replica**',
  }),
  releaseApiSecret: secret({
    env: 'RELEASE_API_SECRET',
    shownDefault: 'unset: release endpoints answer `503`',
    description: 'the CI-only secret of `POST /api/releases/worker` and `POST /api/tendrils/register`',
  }),
  bootstrapToken: secret({
    env: 'TRELLIS_BOOTSTRAP_TOKEN',
    minLength: 32,
    hint: 'generate one with: openssl rand -base64 32',
    shownDefault: 'generated when no OAuth provider is configured',
    description:
      'enables `GET /auth/bootstrap?token=…`, which signs in the local admin. A generated token works once per start and is printed at start as a sign-in link; one you set (`openssl rand -base64 32`; shorter stops the server with a configuration error) works until you change it, and is **never printed**: paste it on the `/signin` page. Wrong tokens are limited per client address (`TRELLIS_BOOTSTRAP_FAILURE_LIMIT`)',
  }),
  bootstrapEmail: text({
    env: 'TRELLIS_BOOTSTRAP_EMAIL',
    default: 'admin@localhost',
    description: 'the account the bootstrap link signs in',
  }),
  oauth: {
    clientId: perProvider(
      optionalText({
        env: 'TRELLIS_<PROVIDER>_CLIENT_ID',
        description:
          'the OAuth application of `GITHUB`, `GITLAB`, `BITBUCKET` or `GOOGLE` (with its `_CLIENT_SECRET`: both or neither); each configured provider gets a sign-in button. The callback URL to register is `<TRELLIS_WEB_URL>/api/auth/callback`; see [sign-in.md](sign-in.md)',
      }),
    ),
    clientSecret: perProvider(
      secret({ env: 'TRELLIS_<PROVIDER>_CLIENT_SECRET', description: 'the secret of that OAuth application' }),
    ),
    baseUrl: perProvider(
      httpUrl({
        env: 'TRELLIS_<PROVIDER>_BASE_URL',
        shownDefault: 'the public service',
        description:
          'GitHub Enterprise Server (`https://ghe.example.com`), self-managed GitLab (their API address and the clone URLs of connected vines are derived from it: `<base>/api/v3`, `<base>/api/v4`; see [git.md](git.md#connecting-a-vine)), or, for `GOOGLE`, the OpenID Connect issuer of any provider (Okta, Keycloak, Entra ID; default `https://accounts.google.com`)',
      }),
    ),
    apiUrl: perProvider(
      httpUrl({
        env: 'TRELLIS_<PROVIDER>_API_URL',
        shownDefault: 'derived from the base URL',
        description:
          "Git providers only: the REST API's root when it is not where the base URL puts it (a proxy in front of the API, a test server); clone URLs still come from the base URL",
      }),
    ),
    displayName: perProvider(
      optionalText({
        env: 'TRELLIS_<PROVIDER>_DISPLAY_NAME',
        shownDefault: "`GitHub`, `GitLab`, `Bitbucket`, `Google` (or the issuer's host)",
        description: 'the label of the sign-in button',
      }),
    ),
  },
  encryptionKeys: custom({
    env: 'TRELLIS_ENCRYPTION_KEY',
    accepts: '32-byte keys as base64 or hex, comma-separated',
    default: [],
    secret: true,
    shownDefault: 'derived (HKDF-SHA256) from `CLI_JWT_SECRET`',
    description:
      'AES-256-GCM key of the provider tokens at rest (`openssl rand -base64 32`); `new,old` to rotate: the first encrypts, all decrypt; **the same on every replica**',
    parse: parseEncryptionKeys,
  }),
  bootstrapFailureLimit: integer({
    env: 'TRELLIS_BOOTSTRAP_FAILURE_LIMIT',
    default: 10,
    min: 1,
    max: 10_000,
    description:
      'wrong bootstrap tokens a client address may send in the window (`TRELLIS_BOOTSTRAP_FAILURE_WINDOW_S`); then `429` with `Retry-After` until the window ends',
  }),
  bootstrapFailureWindowSeconds: integer({
    env: 'TRELLIS_BOOTSTRAP_FAILURE_WINDOW_S',
    default: 900,
    min: 1,
    max: 86_400,
    description: 'the window of `TRELLIS_BOOTSTRAP_FAILURE_LIMIT`',
  }),
  workerAuthFailureLimit: integer({
    env: 'TRELLIS_WORKER_AUTH_FAILURE_LIMIT',
    default: 30,
    min: 1,
    max: 100_000,
    description:
      'failed agent authentications (unknown worker id, wrong token) a client address may have in the window (`TRELLIS_WORKER_AUTH_FAILURE_WINDOW_S`); then `429` for requests whose credentials the server has not just verified',
  }),
  workerAuthFailureWindowSeconds: integer({
    env: 'TRELLIS_WORKER_AUTH_FAILURE_WINDOW_S',
    default: 60,
    min: 1,
    max: 86_400,
    description: 'the window of `TRELLIS_WORKER_AUTH_FAILURE_LIMIT`',
  }),
  workerAuthCacheSeconds: integer({
    env: 'TRELLIS_WORKER_AUTH_CACHE_S',
    default: 5,
    min: 0,
    max: 60,
    description:
      "how long an agent's verified credentials are reused without a database read (`0`: never); dropped at once on every replica when the worker is destroyed",
  }),
  apiTokenAuthCacheSeconds: integer({
    env: 'TRELLIS_API_TOKEN_AUTH_CACHE_S',
    default: 5,
    min: 0,
    max: 60,
    description:
      "how long an API token's verified authentication (the token, its creator and their memberships) is reused without a database read (`0`: never); dropped at once on every replica when a token is revoked or a membership changes",
  }),
  oidc: {
    issuer: custom({
      env: 'TRELLIS_OIDC_ISSUER',
      accepts: 'an `https://` URL (`http://` on this machine)',
      default: null,
      shownDefault: 'the public URL (`TRELLIS_WEB_URL`)',
      description:
        'the `iss` of job identity tokens and the base of `/.well-known/openid-configuration` ([workload-identity.md](workload-identity.md)). Plain `http://` only on this machine (`localhost`, `127.0.0.1`, `::1`) for local development; no query or fragment. A defaulted plain-http public URL elsewhere gives a warning at start: clouds refuse such an issuer',
      parse: parseOidcIssuer,
    }),
    algorithm: oneOf({
      env: 'TRELLIS_OIDC_SIGNING_ALGORITHM',
      values: ['RS256', 'ES256'],
      default: 'RS256',
      description: 'algorithm of newly generated signing keys: `RS256` (RSA 2048) or `ES256` (P-256)',
    }),
    tokenLifetimeSeconds: integer({
      env: 'TRELLIS_OIDC_TOKEN_LIFETIME_S',
      default: 3600,
      min: 300,
      max: 43_200,
      description: "how long a job's identity token is valid (the job's limit; at most 12 hours)",
    }),
    keyRotationDays: integer({
      env: 'TRELLIS_OIDC_KEY_ROTATION_DAYS',
      default: 90,
      min: 0,
      max: 3650,
      description:
        'a signing key older than this is replaced at its next use (`0`: only `trellis-server keys rotate`); the previous public key stays in the JWKS until every token it signed has expired',
    }),
  },
};
