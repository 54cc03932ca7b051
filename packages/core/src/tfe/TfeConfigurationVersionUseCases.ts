import type { Readable } from 'node:stream';
import { verifiedArtifactBody } from '../artifacts/VerifiedBody.js';
import type { ConfigurationVersionUseCases } from '../configurationVersions/ConfigurationVersionUseCases.js';
import type { ConfigurationVersion } from '../configurationVersions/records.js';
import type { UserActor } from '../domain/actors.js';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors.js';
import { isUuid } from '../domain/validation.js';
import { ownerScope } from '../ports/UnitOfWork.js';
import { type CoreDeps, isoNow } from '../usecases/CoreDeps.js';
import type { TfeWorkspaceUseCases, WorkspaceRef } from './TfeWorkspaceUseCases.js';

/** The most versions `GET /workspaces/:id/configuration-versions` lists (newest first). */
export const LISTED_CONFIGURATION_VERSIONS = 100;

/** `POST /workspaces/:id/configuration-versions`, as the attributes come. */
export interface ConfigurationVersionInput {
  'auto-queue-runs'?: unknown;
  speculative?: unknown;
  provisional?: unknown;
}

/** A version, and whether the answer gives its upload URL (only the answer that made it: HCP's way). */
export interface TfeConfigurationVersion {
  version: ConfigurationVersion;
  uploadable: boolean;
}

/**
 * Runs queued by an upload whose version said `auto-queue-runs` (issue 27): the run creation of
 * the Terraform Cloud protocol registers it (`onAutoQueue`); until one is registered an upload
 * queues nothing (and says so in no answer: the CLI never asks for it, it creates its run itself).
 */
export type AutoQueueRun = (version: ConfigurationVersion, actor: { userId: string }) => Promise<void>;

export function configurationVersionId(id: string): string {
  return `cv-${id}`;
}

/** The record id of a `cv-<uuid>`, or null when it is not one. */
export function configurationVersionIdOf(id: unknown): string | null {
  if (typeof id !== 'string' || !id.startsWith('cv-')) return null;
  const rest = id.slice(3);
  return isUuid(rest) ? rest.toLowerCase() : null;
}

function optionalBoolean(value: unknown, field: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') {
    throw new ValidationError(`${field} must be a boolean`, [{ path: field, message: 'must be a boolean' }]);
  }
  return value;
}

function notFound(): NotFoundError {
  return new NotFoundError('configuration_version');
}

/**
 * Configuration versions of the Terraform Cloud protocol (issue 27): the stock CLI makes one on a
 * workspace, `PUT`s a `.tar.gz` of its directory to the signed URL of its answer, and reads it
 * until it is `uploaded` (or `errored`, with the reason); its runs then run exactly those bytes.
 * The bytes go through `ConfigurationVersionUseCases.ingest` (gzip, paths, links, limits), like a
 * connected vine's commit. Everything here needs what planning the vine needs (`jobs.run`).
 */
export class TfeConfigurationVersionUseCases {
  private autoQueue: AutoQueueRun | null = null;

  constructor(
    private readonly deps: CoreDeps,
    private readonly workspaces: TfeWorkspaceUseCases,
    private readonly versions: ConfigurationVersionUseCases,
  ) {}

  /** The run creation of the protocol registers how an upload with `auto-queue-runs` queues its run. */
  onAutoQueue(queue: AutoQueueRun): void {
    this.autoQueue = queue;
  }

  async create(
    actor: UserActor,
    ref: WorkspaceRef,
    input: ConfigurationVersionInput,
  ): Promise<TfeConfigurationVersion> {
    // HCP's default is to queue a run once uploaded; the CLI always says false.
    const autoQueue = optionalBoolean(input['auto-queue-runs'], 'auto-queue-runs', true);
    const speculative = optionalBoolean(input.speculative, 'speculative', false);
    const provisional = optionalBoolean(input.provisional, 'provisional', false);
    const { vine } = await this.workspaces.locate(actor, ref, 'jobs.run');
    const version = await this.versions.create({
      owner_id: vine.owner_id,
      vine_id: vine.id,
      source: 'upload',
      strip_components: 0,
      created_by: actor.userId,
      speculative,
      auto_queue_runs: autoQueue,
      provisional,
    });
    return { version, uploadable: true };
  }

  async read(actor: UserActor, id: unknown): Promise<TfeConfigurationVersion> {
    return { version: await this.locate(actor, id), uploadable: false };
  }

  /** The workspace's versions, newest first (at most `LISTED_CONFIGURATION_VERSIONS`). */
  async list(actor: UserActor, ref: WorkspaceRef): Promise<TfeConfigurationVersion[]> {
    const { vine, scope } = await this.workspaces.locate(actor, ref, 'jobs.run');
    const versions = await this.deps.uow.read(scope, (stores) =>
      stores.configurationVersions.listForVine(vine.owner_id, vine.id, LISTED_CONFIGURATION_VERSIONS),
    );
    return versions.map((version) => ({ version, uploadable: false }));
  }

  /**
   * The one upload of a version, through its signed URL (`ownerId`, `id` come from the verified
   * URL): taken once (`409 configuration_version_upload_used` for a second PUT, even one racing
   * the first), streamed into the store and checked; `uploaded`, or `errored` with the reason
   * (and the error thrown). A version that asked for it then queues its run.
   */
  async upload(ownerId: string, id: string, body: AsyncIterable<Uint8Array>): Promise<ConfigurationVersion> {
    const scope = ownerScope(ownerId);
    const started = await this.deps.uow.run(scope, async (stores) => {
      const version = await stores.configurationVersions.get(ownerId, id);
      if (version?.source !== 'upload') throw notFound();
      const at = isoNow(this.deps);
      if (!(await stores.configurationVersions.startUpload(ownerId, id, at))) {
        throw new ConflictError(
          'configuration_version_upload_used',
          `configuration version ${configurationVersionId(id)} is ${version.status}${version.status === 'pending' ? ' and its upload has begun' : ''}: make a new configuration version`,
        );
      }
      return { ...version, upload_started_at: at };
    });
    const uploaded = await this.versions.ingest(started, body);
    if (uploaded.auto_queue_runs && this.autoQueue && uploaded.created_by !== null) {
      await this.autoQueue(uploaded, { userId: uploaded.created_by });
    }
    return uploaded;
  }

  /** `GET /configuration-versions/:id/download`: the bytes of an uploaded version, checked as they are read. */
  async download(actor: UserActor, id: unknown): Promise<{ body: Readable; size: number; sha256: string }> {
    const version = await this.locate(actor, id);
    // Nothing to download until it is uploaded: a 404, as HCP answers (go-tfe reads it so).
    if (version.status !== 'uploaded' || !version.storage_key || version.sha256 === null || version.size === null) {
      throw new NotFoundError(
        'configuration_version',
        'configuration_version_not_found',
        `configuration version ${configurationVersionId(version.id)} is ${version.status}: nothing to download`,
      );
    }
    const object = await this.deps.artifacts.get(version.storage_key);
    const digest = { size: version.size, sha256: version.sha256 };
    return { body: verifiedArtifactBody(version.storage_key, object.body, object.size, digest), ...digest };
  }

  private async locate(actor: UserActor, id: unknown): Promise<ConfigurationVersion> {
    const versionId = configurationVersionIdOf(id);
    if (versionId === null) throw notFound();
    try {
      const { record } = await this.workspaces.orgs.access.locate(
        actor,
        'jobs.run',
        'configuration_not_found',
        (stores, ownerId) => stores.configurationVersions.get(ownerId, versionId),
      );
      return record;
    } catch (error) {
      // Another owner's version, or none: the same 404 (its role's 403 stays a 403).
      if (error instanceof NotFoundError) throw notFound();
      throw error;
    }
  }
}
