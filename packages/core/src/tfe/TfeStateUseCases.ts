import type { Readable } from 'node:stream';
import { verifiedArtifactBody } from '../artifacts/VerifiedBody.js';
import type { UserActor } from '../domain/actors.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../domain/errors.js';
import type { StateVersion, Vine } from '../domain/records.js';
import { ownerScope, type Scope, type Stores } from '../ports/UnitOfWork.js';
import { recordAudit } from '../usecases/audit.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import { writeStateVersion } from '../usecases/stateVersionWriter.js';
import { outputRefOf, stateVersionRefOf } from './names.js';
import { readAll, type StateSummary, summarizeState } from './stateOutputs.js';
import type { TfeWorkspaceUseCases, WorkspaceRef } from './TfeWorkspaceUseCases.js';
import { isProtocolLockOf } from './workspaces.js';

/** `POST /workspaces/:id/state-versions`, as the attributes come. */
export interface StateVersionInput {
  serial?: unknown;
  md5?: unknown;
  lineage?: unknown;
  state?: unknown;
  force?: unknown;
}

/** What the signed `hosted-state-upload-url` of a version created ahead of its bytes carries. */
export interface PendingUpload {
  uploadId: string;
  ownerId: string;
  vineId: string;
  userId: string;
  email: string;
  serial: number;
  md5: string;
  lineage: string | null;
  force: boolean;
}

/** A version as the protocol shows it, with what the caller may do with it. */
export interface TfeStateVersion {
  version: StateVersion;
  vine: Vine;
  /** Whether the caller may download the whole state (`operator`): only then is it given a URL. */
  downloadable: boolean;
}

const MD5 = /^[0-9a-f]{32}$/i;

function requireLockedBy(lock: Awaited<ReturnType<Stores['states']['getLock']>>, userId: string): void {
  if (!lock) {
    throw new ConflictError('state_lock_required', 'lock the workspace before writing its state (the CLI does)');
  }
  if (!isProtocolLockOf(lock, userId)) {
    throw new ConflictError('state_locked', `the state is locked by ${String(lock.info.Who ?? 'another run')}`);
  }
}

/**
 * State versions of the Terraform Cloud protocol (issue 26): one history per vine, whoever writes
 * it (the cloud block, a Trellis job's engine, an upload). Writing needs `operator` and the
 * caller's own lock; a new version must continue the current one unless `force`d; the bytes come
 * inline (base64) or through a signed upload URL; reading a version's metadata and outputs needs
 * `viewer`, its whole state (and sensitive output values) `operator`.
 */
export class TfeStateUseCases {
  constructor(
    private readonly deps: CoreDeps,
    private readonly workspaces: TfeWorkspaceUseCases,
  ) {}

  /**
   * Creates a version: at once when the state comes inline, else a pending upload the caller
   * signs a URL for.
   */
  async create(
    actor: UserActor,
    ref: WorkspaceRef,
    input: StateVersionInput,
  ): Promise<{ version: TfeStateVersion } | { pending: PendingUpload; vine: Vine }> {
    const { vine, scope } = await this.workspaces.locate(actor, ref, 'state.use');
    const serial = input.serial;
    if (typeof serial !== 'number' || !Number.isInteger(serial) || serial < 0) {
      throw new ValidationError('serial must be a whole number', [{ path: 'serial', message: 'required' }]);
    }
    if (typeof input.md5 !== 'string' || !MD5.test(input.md5)) {
      throw new ValidationError('md5 must be the hex MD5 of the state', [{ path: 'md5', message: 'required' }]);
    }
    const md5 = input.md5.toLowerCase();
    const lineage = typeof input.lineage === 'string' && input.lineage !== '' ? input.lineage : null;
    const force = input.force === true;
    await this.deps.uow.read(scope, async (stores) => {
      requireLockedBy(await stores.states.getLock(vine.owner_id, vine.id), actor.userId);
      const current = await stores.states.latest(vine.owner_id, vine.id);
      if (!force && current && serial < current.serial) {
        throw new ConflictError(
          'state_serial_behind',
          `serial ${serial} is behind the current state's (${current.serial})`,
        );
      }
      if (!force && current && lineage !== null && lineage !== current.lineage) {
        throw new ConflictError('state_lineage_mismatch', `lineage ${lineage} is not the current state's`);
      }
    });
    if (typeof input.state === 'string' && input.state !== '') {
      const bytes = Buffer.from(input.state, 'base64');
      const version = await this.write(scope, vine, actor, bytes, { md5, force, uploadId: null });
      return { version: { version, vine, downloadable: true } };
    }
    return {
      vine,
      pending: {
        uploadId: this.deps.random.uuid(),
        ownerId: vine.owner_id,
        vineId: vine.id,
        userId: actor.userId,
        email: actor.email,
        serial,
        md5,
        lineage,
        force,
      },
    };
  }

  /** The bytes of a pending upload, through its signed URL: recorded if the signer still holds the lock. */
  async upload(
    pending: PendingUpload,
    body: AsyncIterable<Uint8Array>,
    declaredBytes: number | null,
  ): Promise<StateVersion> {
    const actor: UserActor = { userId: pending.userId, email: pending.email };
    const scope = ownerScope(pending.ownerId);
    const vine = await this.deps.uow.read(scope, (stores) => stores.vines.get(pending.ownerId, pending.vineId));
    if (!vine) throw new NotFoundError('workspace');
    return this.write(scope, vine, actor, body, {
      md5: pending.md5,
      force: pending.force,
      uploadId: pending.uploadId,
      declaredBytes,
    });
  }

  async current(actor: UserActor, ref: WorkspaceRef): Promise<TfeStateVersion> {
    const { vine, scope } = await this.workspaces.locate(actor, ref, 'read');
    const version = await this.deps.uow.read(scope, (stores) => stores.states.latest(vine.owner_id, vine.id));
    if (!version) throw new NotFoundError('state_version');
    return { version, vine, downloadable: await this.mayUse(actor, vine.owner_id) };
  }

  async read(actor: UserActor, id: unknown): Promise<TfeStateVersion> {
    const ref = stateVersionRefOf(id);
    if (!ref) throw new NotFoundError('state_version');
    const { record } = await this.workspaces.orgs.locate(actor, 'read', 'configuration_not_found', (stores, ownerId) =>
      ref.kind === 'version'
        ? stores.states.getVersion(ownerId, ref.id)
        : stores.states.findUpload(ownerId, ref.uploadId),
    );
    const vine = await this.deps.uow.read(ownerScope(record.owner_id, actor.userId), (stores) =>
      stores.vines.get(record.owner_id, record.vine_id),
    );
    if (!vine) throw new NotFoundError('state_version');
    return { version: record, vine, downloadable: await this.mayUse(actor, record.owner_id) };
  }

  /** Newest first. */
  async list(actor: UserActor, ref: WorkspaceRef): Promise<TfeStateVersion[]> {
    const { vine, scope } = await this.workspaces.locate(actor, ref, 'read');
    const versions = await this.deps.uow.read(scope, (stores) => stores.states.listVersions(vine.owner_id, vine.id));
    const downloadable = await this.mayUse(actor, vine.owner_id);
    return versions.map((version) => ({ version, vine, downloadable }));
  }

  /** The bytes of a version, for its signed download URL (the signature is the authorization). */
  async open(ownerId: string, versionId: number): Promise<{ body: Readable; size: number; version: StateVersion }> {
    const version = await this.deps.uow.read(ownerScope(ownerId), (stores) =>
      stores.states.getVersion(ownerId, versionId),
    );
    if (!version) throw new NotFoundError('state_version');
    const artifact = await this.deps.artifacts.get(version.storage_key);
    return {
      body: verifiedArtifactBody(version.storage_key, artifact.body, artifact.size, version),
      size: version.size,
      version,
    };
  }

  /** What a version's state holds: outputs (sensitive values only for `operator`) and resources. */
  async summary(actor: UserActor, version: StateVersion): Promise<StateSummary> {
    const { body } = await this.open(version.owner_id, version.id);
    const summary = summarizeState(await readAll(body));
    if (await this.mayUse(actor, version.owner_id)) return summary;
    return {
      ...summary,
      outputs: summary.outputs.map((output) => (output.sensitive ? { ...output, value: null } : output)),
    };
  }

  /** `GET /state-version-outputs/:id`: one output; a sensitive value needs `operator`. */
  async output(actor: UserActor, id: unknown) {
    const ref = outputRefOf(id);
    if (!ref) throw new NotFoundError('output');
    const { version } = await this.read(actor, `sv-${ref.versionId}`);
    const summary = await this.summary(actor, version);
    const output = summary.outputs.find((candidate) => candidate.name === ref.name);
    if (!output) throw new NotFoundError('output');
    if (output.sensitive && !(await this.mayUse(actor, version.owner_id))) {
      throw new ForbiddenError('insufficient_role', 'reading a sensitive output needs the role operator');
    }
    return { version, output };
  }

  /** How many resources the current state manages (safe-delete refuses a workspace that has some). */
  async resourceCount(actor: UserActor, ref: WorkspaceRef): Promise<number> {
    try {
      const { version } = await this.current(actor, ref);
      const { body } = await this.open(version.owner_id, version.id);
      return summarizeState(await readAll(body)).resources;
    } catch (error) {
      if (error instanceof NotFoundError) return 0;
      throw error;
    }
  }

  async mayUse(actor: UserActor, ownerId: string): Promise<boolean> {
    return (await this.workspaces.orgs.abilities(actor, ownerId)).useState;
  }

  private async write(
    scope: Scope,
    vine: Vine,
    actor: UserActor,
    body: AsyncIterable<Uint8Array> | Buffer,
    options: { md5: string; force: boolean; uploadId: string | null; declaredBytes?: number | null },
  ): Promise<StateVersion> {
    const bytes = Buffer.isBuffer(body)
      ? (async function* () {
          yield body;
        })()
      : body;
    const version = await writeStateVersion(this.deps, {
      scope,
      ownerId: vine.owner_id,
      vineId: vine.id,
      createdBy: actor.userId,
      uploadId: options.uploadId,
      body: bytes,
      declaredBytes: Buffer.isBuffer(body) ? body.length : (options.declaredBytes ?? null),
      expectedMd5: options.md5,
      continuity: { force: options.force },
      authorize: async (stores) => {
        requireLockedBy(await stores.states.getLock(vine.owner_id, vine.id), actor.userId);
        return { jobId: null };
      },
    });
    await this.deps.uow.run(scope, (stores) =>
      recordAudit(stores, this.deps, actor, {
        action: 'state.write',
        target: { type: 'vine', id: vine.id },
        owner_id: vine.owner_id,
        details: { version_id: version.id, serial: version.serial, force: options.force, via: 'terraform-cloud' },
      }),
    );
    return version;
  }
}
