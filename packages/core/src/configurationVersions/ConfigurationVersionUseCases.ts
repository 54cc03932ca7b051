import type { Readable } from 'node:stream';
import { verifiedArtifactBody } from '../artifacts/VerifiedBody.js';
import type { WorkerActor } from '../domain/actors.js';
import { ConflictError, ForbiddenError, isDomainError, NotFoundError, UnavailableError } from '../domain/errors.js';
import type { Job } from '../domain/records.js';
import type { VcsConnection } from '../domain/vcs.js';
import { requireUuid } from '../domain/validation.js';
import { ownerScope, systemScope } from '../ports/UnitOfWork.js';
import { type CoreDeps, isoNow } from '../usecases/CoreDeps.js';
import { vcsTokenFor } from '../usecases/vcsTokens.js';
import { type ConfigurationVersion, type ConfigurationVersionSource, configurationVersionKey } from './records.js';

/** A configuration tarball is at most this large, packed (HCP's limit is in the same range). */
export const MAX_CONFIGURATION_BYTES = 100 * 1024 * 1024;
/** …and unpacked, and in entries: a small bomb of zeros stays small. */
export const MAX_CONFIGURATION_UNPACKED_BYTES = 500 * 1024 * 1024;
export const MAX_CONFIGURATION_ENTRIES = 100_000;

/** What a new configuration version says of itself; the use case fills in the rest. */
export interface NewConfigurationVersion {
  owner_id: string;
  vine_id: string;
  source: ConfigurationVersionSource;
  provider?: ConfigurationVersion['provider'];
  repository?: string | null;
  commit_sha?: string | null;
  ref?: string | null;
  strip_components: number;
  created_by: string | null;
  /** An upload's options (issue 27); false when absent. */
  speculative?: boolean;
  auto_queue_runs?: boolean;
  provisional?: boolean;
}

/**
 * Configuration versions (issue 23; the uploads of issue 27 reuse `create` and `ingest`): a
 * tarball from either source is streamed into the artifact store, read back, checked (gzip, no
 * escaping path or link, limits) and recorded with its sha256; a refused one is deleted and its
 * record says why (`errored`). A connected vine's commit is fetched by the control plane with the
 * connecting person's token (only while they are an admin of the owner), never by an agent.
 */
export class ConfigurationVersionUseCases {
  /** Fetches under way in this replica, by vine and commit (or job, for a branch): one fetch each. */
  private readonly fetching = new Map<string, Promise<ConfigurationVersion>>();

  constructor(private readonly deps: CoreDeps) {}

  /** Records a `pending` version, before its bytes arrive. */
  async create(input: NewConfigurationVersion): Promise<ConfigurationVersion> {
    const now = isoNow(this.deps);
    const version: ConfigurationVersion = {
      id: this.deps.random.uuid(),
      owner_id: input.owner_id,
      vine_id: input.vine_id,
      source: input.source,
      provider: input.provider ?? null,
      repository: input.repository ?? null,
      commit_sha: input.commit_sha ?? null,
      ref: input.ref ?? null,
      status: 'pending',
      storage_key: null,
      sha256: null,
      size: null,
      strip_components: input.strip_components,
      speculative: input.speculative === true,
      auto_queue_runs: input.auto_queue_runs === true,
      provisional: input.provisional === true,
      upload_started_at: null,
      error_code: null,
      error_message: null,
      created_by: input.created_by,
      created_at: now,
      updated_at: now,
    };
    return this.save(version);
  }

  /**
   * Streams `body` (a `.tar.gz`) into the store as the bytes of the `pending` version, checks it and
   * marks it `uploaded` with its digest; on any failure the bytes are deleted, the version is
   * `errored` with the reason, and the error is thrown. A version's bytes are written once.
   */
  async ingest(version: ConfigurationVersion, body: AsyncIterable<Uint8Array>): Promise<ConfigurationVersion> {
    if (version.status !== 'pending') {
      throw new ConflictError(
        'configuration_version_not_ready',
        `configuration version ${version.id} is ${version.status}`,
      );
    }
    const key = configurationVersionKey(version.owner_id, version.id);
    try {
      const stored = await this.deps.artifacts.put(key, body, { maxBytes: MAX_CONFIGURATION_BYTES });
      const object = await this.deps.artifacts.get(key);
      await this.deps.tarballs.check(verifiedArtifactBody(key, object.body, object.size, stored), {
        maxUnpackedBytes: MAX_CONFIGURATION_UNPACKED_BYTES,
        maxEntries: MAX_CONFIGURATION_ENTRIES,
        stripComponents: version.strip_components,
      });
      return await this.save({
        ...version,
        status: 'uploaded',
        storage_key: key,
        sha256: stored.sha256,
        size: stored.size,
        updated_at: isoNow(this.deps),
      });
    } catch (error) {
      await this.deps.artifacts.delete(key).catch(() => undefined);
      await this.fail(version, error).catch(() => undefined);
      throw error;
    }
  }

  /**
   * The `uploaded` version of a connected vine's git job: the one of its commit when there is one
   * (a plan and its deploy share it), else fetched now from the provider's archive API with the
   * connecting person's token. `409 needs_reconnect` when that person is no longer an admin of the
   * owner; the provider's own errors otherwise. One look-up-or-fetch per commit at a time in this
   * process: a claim that comes while the queue-time prefetch runs waits for it rather than
   * fetching again (the look-up is inside, so one finishing between a read and the check is seen).
   */
  async forJob(job: Job, connection: VcsConnection): Promise<ConfigurationVersion> {
    const source = job.config_snapshot.source;
    if (job.vine_id === null || source?.type !== 'git') {
      throw new ConflictError('configuration_version_not_ready', 'the job runs no git source of a connected vine');
    }
    const commit = source.commit ?? null;
    const vineId = job.vine_id;
    const key = `${job.owner_id}/${vineId}/${commit ?? job.id}`;
    const running = this.fetching.get(key);
    if (running) return running;
    const made = (async () => {
      if (commit !== null) {
        const found = await this.deps.uow.read(ownerScope(job.owner_id), (stores) =>
          stores.configurationVersions.findUploaded(job.owner_id, vineId, commit),
        );
        if (found) return found;
      }
      return this.fetch(job, vineId, connection, commit, source.ref ?? connection.branch);
    })().finally(() => this.fetching.delete(key));
    this.fetching.set(key, made);
    return made;
  }

  /** Starts `forJob` without waiting (at queue time): its failure waits for the claim, which says it. */
  prefetch(job: Job, connection: VcsConnection): void {
    this.forJob(job, connection).catch(() => undefined);
  }

  /**
   * `GET /api/jobs/{id}/configuration-versions/{version}`: the bytes, checked against their digest
   * as they are read, for the agent that claimed the job, of a version of the job's vine.
   */
  async download(
    worker: WorkerActor,
    jobId: unknown,
    versionId: unknown,
  ): Promise<{ body: Readable; size: number; sha256: string }> {
    const id = requireUuid(jobId, 'id');
    const vid = requireUuid(versionId, 'version');
    const version = await this.deps.uow.read(ownerScope(worker.ownerId), async (stores) => {
      const job = await stores.jobs.get(worker.ownerId, id);
      if (!job) throw new NotFoundError('job');
      if (job.claimed_by_worker_id !== worker.workerId) {
        throw new ForbiddenError('job_not_claimed_by_worker', 'this job was not claimed by this worker');
      }
      const found = await stores.configurationVersions.get(worker.ownerId, vid);
      if (!found || found.vine_id !== job.vine_id) throw new NotFoundError('configuration_version');
      return found;
    });
    if (version.status !== 'uploaded' || !version.storage_key || version.sha256 === null || version.size === null) {
      throw new ConflictError(
        'configuration_version_not_ready',
        `configuration version ${version.id} is ${version.status}`,
      );
    }
    const object = await this.deps.artifacts.get(version.storage_key);
    const digest = { size: version.size, sha256: version.sha256 };
    return { body: verifiedArtifactBody(version.storage_key, object.body, object.size, digest), ...digest };
  }

  private async fetch(
    job: Job,
    vineId: string,
    connection: VcsConnection,
    commit: string | null,
    ref: string,
  ): Promise<ConfigurationVersion> {
    const port = this.deps.vcs[connection.provider];
    if (!port)
      throw new UnavailableError('provider_not_configured', `${connection.provider} is not configured on this server`);
    // The connecting person's token, only while they are an admin of the owner (needs_reconnect otherwise).
    const token = await this.deps.uow.run(systemScope, (stores) => vcsTokenFor(stores, this.deps, connection));
    const archive = await port.api.fetchArchive(token, connection.repository, commit ?? ref);
    const version = await this.create({
      owner_id: job.owner_id,
      vine_id: vineId,
      source: 'git',
      provider: connection.provider,
      repository: connection.repository,
      commit_sha: commit,
      ref: commit === null ? ref : null,
      strip_components: archive.strip_components,
      created_by: connection.connected_by,
    });
    return this.ingest(version, archive.body);
  }

  private save(version: ConfigurationVersion): Promise<ConfigurationVersion> {
    return this.deps.uow.run(ownerScope(version.owner_id), (stores) => stores.configurationVersions.save(version));
  }

  private fail(version: ConfigurationVersion, error: unknown): Promise<ConfigurationVersion> {
    return this.save({
      ...version,
      status: 'errored',
      error_code: isDomainError(error) ? error.code : 'configuration_invalid',
      error_message: error instanceof Error ? error.message : String(error),
      updated_at: isoNow(this.deps),
    });
  }
}
