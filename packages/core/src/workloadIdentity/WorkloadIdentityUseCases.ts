import {
  isSpeculativeTrigger,
  type Job,
  type JobTrigger,
  type JsonObject,
  type OidcCloudIdentitySettings,
  type SigningKey,
} from '../domain/records.js';
import { ConflictError } from '../domain/errors.js';
import { type Stores, systemScope } from '../ports/UnitOfWork.js';
import {
  type CoreDeps,
  DEFAULT_WORKLOAD_IDENTITY_SETTINGS,
  isoNow,
  MAX_IDENTITY_TOKEN_LIFETIME_SECONDS,
} from '../usecases/CoreDeps.js';

/** A retired key stays in the JWKS this long past the longest token it can have signed. */
const CLOCK_SKEW_SECONDS = 300;

/** The AWS STS audience (what `AssumeRoleWithWebIdentity` expects by default). */
export const AWS_DEFAULT_AUDIENCE = 'sts.amazonaws.com';
/** Azure AD's audience for workload identity federation. */
export const AZURE_DEFAULT_AUDIENCE = 'api://AzureADTokenExchange';

/** The `aud` of a job token: the identity's own, else each cloud's documented default. */
export function identityAudience(identity: OidcCloudIdentitySettings): string {
  if (identity.audience) return identity.audience;
  switch (identity.provider) {
    case 'aws':
      return AWS_DEFAULT_AUDIENCE;
    case 'gcp':
      // Google Cloud's default allowed audience of a workload identity pool provider.
      return `https://iam.googleapis.com/${identity.workload_identity_provider}`;
    case 'azure':
      return AZURE_DEFAULT_AUDIENCE;
  }
}

/** The claims cloud trust policies match on (issue 16). */
export const JOB_TOKEN_CLAIMS = [
  'iss',
  'aud',
  'sub',
  'jti',
  'iat',
  'nbf',
  'exp',
  'trellis_job_id',
  'trellis_job_type',
  'trellis_vine_id',
  'trellis_vineyard_id',
  'trellis_owner_id',
  'trellis_vine_name',
  'trellis_vineyard_name',
  'trellis_owner_name',
  'trellis_speculative',
  'repository',
  'ref',
  'commit_sha',
] as const;

/**
 * The names a job token carries besides the ids (`trellis_*_name`), read in the claim's unit of
 * work: for people reading a token, never for trust policies (names are reused, issue 23).
 */
export interface JobTokenSubject {
  ownerName: string;
  vineyardName: string;
  vineName: string;
}

export interface OpenIdConfiguration {
  issuer: string;
  jwks_uri: string;
  response_types_supported: string[];
  subject_types_supported: string[];
  id_token_signing_alg_values_supported: string[];
  claims_supported: string[];
  scopes_supported: string[];
}

export interface RotationResult {
  kid: string;
  algorithm: string;
  retired: number;
}

function signingKeyContext(id: string): string {
  return `signing-key:${id}`;
}

/** The last part of `sub`: a deployable run, or a speculative plan (a drift check, a pull request's). */
export type JobTokenRun = 'standard' | 'speculative';

/**
 * The `sub` of a job token (issue 23): `vineyard:<vineyard id>:vine:<vine id>:job_type:<type>:run:<standard|speculative>`.
 * Ids, never names: a vineyard, vine or organization renamed (or deleted, its name taken by
 * another) must not hand its trust to whoever takes the name next. Clouds match only `sub` and
 * `aud` (AWS, Azure), so what a trust policy must tell apart is in it: which vines, which job
 * type, and whether the plan is speculative (a drift check or a pull request's plan is never
 * deployed; a fork's code may run in it). A vineyard id names its owner (ids are the server's,
 * never reused). At most 120 bytes: Google Cloud's `google.subject` takes at most 127.
 */
export function jobTokenSubject(
  ids: { vineyard_id: string; vine_id: string },
  jobType: string,
  run: JobTokenRun,
): string {
  return `vineyard:${ids.vineyard_id}:vine:${ids.vine_id}:job_type:${jobType}:run:${run}`;
}

/**
 * Trellis as an OpenID Connect issuer (issue 16): the discovery document, the JWKS, signing keys
 * (generated on first use, sealed in the database so every replica signs with the same one,
 * rotated on demand or by age) and the job tokens clouds exchange for short-lived credentials.
 */
/** A public key as the JWKS publishes it: the key's own members (RSA n, e; EC crv, x, y) and these. */
export interface PublishedJwk extends JsonObject {
  kty: string;
  kid: string;
  alg: string;
  use: 'sig';
}

export class WorkloadIdentityUseCases {
  constructor(private readonly deps: CoreDeps) {}

  /** Settings made before issue 16 (an embedder's own CoreSettings) get the defaults. */
  private get settings() {
    return this.deps.settings.workloadIdentity ?? DEFAULT_WORKLOAD_IDENTITY_SETTINGS;
  }

  discovery(): OpenIdConfiguration {
    const issuer = this.settings.issuer;
    return {
      issuer,
      jwks_uri: `${issuer.replace(/\/+$/, '')}/.well-known/jwks.json`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256', 'ES256'],
      claims_supported: [...JOB_TOKEN_CLAIMS],
      scopes_supported: ['openid'],
    };
  }

  /** The public keys that verify job tokens: the signing key and retired ones still needed. */
  async jwks(): Promise<{ keys: PublishedJwk[] }> {
    const now = isoNow(this.deps);
    let keys = await this.deps.uow.read(systemScope, (stores) => stores.signingKeys.listPublished(now));
    if (keys.length === 0) keys = [await this.ensureKey()];
    return {
      keys: keys.map((key) => ({
        ...key.public_jwk,
        kty: String(key.public_jwk.kty),
        kid: key.id,
        alg: key.algorithm,
        use: 'sig',
      })),
    };
  }

  /** The signing key, generated when there is none (first start) or rotated when older than the interval. */
  async ensureKey(): Promise<SigningKey> {
    const current = await this.deps.uow.read(systemScope, (stores) => stores.signingKeys.current());
    if (current && !this.tooOld(current)) return current;
    try {
      return await this.deps.uow.run(systemScope, async (stores) => {
        // Another replica may have made one meanwhile.
        const again = await stores.signingKeys.current();
        if (again && !this.tooOld(again)) return again;
        // The first key retires nothing: a replica making one at the same moment conflicts on create.
        return this.addKey(stores, again !== null);
      });
    } catch (error) {
      // Another replica made (or rotated to) a key at the same moment: that one signs.
      if (!(error instanceof ConflictError) || error.code !== 'signing_key_conflict') throw error;
      const made = await this.deps.uow.read(systemScope, (stores) => stores.signingKeys.current());
      if (!made) throw error;
      return made;
    }
  }

  /** `trellis-server keys rotate`: a new signing key; the previous ones stay published until their tokens expired. */
  async rotate(): Promise<RotationResult> {
    return this.deps.uow.run(systemScope, async (stores) => {
      const before = await stores.signingKeys.listPublished(isoNow(this.deps));
      const key = await this.addKey(stores, true);
      const signing = before.filter((k) => k.retired_at === null).length;
      return { kid: key.id, algorithm: key.algorithm, retired: signing };
    });
  }

  /** A job's identity token (issue 16), signed with the current key. */
  async mintJobToken(job: Job, identity: OidcCloudIdentitySettings, subject: JobTokenSubject): Promise<string> {
    const key = await this.ensureKey();
    const privateKeyPem = await this.deps.secrets.open(key.private_key_sealed, signingKeyContext(key.id));
    const now = Math.floor(this.deps.clock.now().getTime() / 1000);
    const lifetime = Math.min(this.settings.tokenLifetimeSeconds, MAX_IDENTITY_TOKEN_LIFETIME_SECONDS);
    const claims: JsonObject = {
      iss: this.settings.issuer,
      aud: identityAudience(identity),
      sub: jobTokenSubject(
        { vineyard_id: job.vineyard_id ?? '', vine_id: job.vine_id ?? '' },
        job.job_type,
        isSpeculativeTrigger(job.trigger) ? 'speculative' : 'standard',
      ),
      jti: this.deps.random.uuid(),
      iat: now,
      nbf: now,
      exp: now + lifetime,
      trellis_job_id: job.id,
      trellis_job_type: job.job_type,
      trellis_vine_id: job.vine_id,
      trellis_vineyard_id: job.vineyard_id,
      trellis_owner_id: job.owner_id,
      trellis_vine_name: subject.vineName,
      trellis_vineyard_name: subject.vineyardName,
      trellis_owner_name: subject.ownerName,
      // A drift check or a pull request's plan is speculative: never deployed.
      trellis_speculative: isSpeculativeTrigger(job.trigger),
      ...gitClaims(job.trigger),
    };
    return this.deps.jws.sign(claims, { kid: key.id, algorithm: key.algorithm, privateKeyPem });
  }

  private tooOld(key: SigningKey): boolean {
    const interval = this.settings.keyRotationSeconds;
    if (interval <= 0) return false;
    return this.deps.clock.now().getTime() - Date.parse(key.created_at) >= interval * 1000;
  }

  private async addKey(stores: Stores, retire: boolean): Promise<SigningKey> {
    const id = this.deps.random.uuid();
    const algorithm = this.settings.algorithm;
    const pair = await this.deps.jws.generate(algorithm);
    const now = this.deps.clock.now();
    const at = now.toISOString();
    // Conservative: whatever the lifetime setting was when they were signed, no token outlives 12 hours.
    const until = new Date(
      now.getTime() + (MAX_IDENTITY_TOKEN_LIFETIME_SECONDS + CLOCK_SKEW_SECONDS) * 1000,
    ).toISOString();
    // Retired first: one key signs at a time (a replica racing this one fails its create).
    if (retire) await stores.signingKeys.retireOthers(id, at, until);
    await stores.signingKeys.deleteExpired(at);
    return stores.signingKeys.create({
      id,
      algorithm,
      public_jwk: pair.publicJwk,
      private_key_sealed: await this.deps.secrets.seal(pair.privateKeyPem, signingKeyContext(id)),
      created_at: at,
      retired_at: null,
      published_until: null,
    });
  }
}

/**
 * What a git-triggered job adds (issue 13): the repository, the ref and the exact commit. A pull
 * request's ref is `refs/pull/<number>/head`, never its head branch's name: a fork's branch called
 * `main` must not pass for the repository's main branch in a trust policy.
 */
function gitClaims(trigger: JobTrigger): JsonObject {
  if (trigger.type === 'push') {
    return { repository: trigger.repository, ref: `refs/heads/${trigger.branch}`, commit_sha: trigger.commit_sha };
  }
  if (trigger.type === 'pull_request') {
    return { repository: trigger.repository, ref: `refs/pull/${trigger.number}/head`, commit_sha: trigger.head_sha };
  }
  return {};
}
