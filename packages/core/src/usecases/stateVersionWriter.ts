import { createHash } from 'node:crypto';
import { ConflictError, TooLargeError, UnprocessableError } from '../domain/errors.js';
import type { StateVersion } from '../domain/records.js';
import type { Scope, Stores } from '../ports/UnitOfWork.js';
import { type CoreDeps, isoNow } from './CoreDeps.js';
import { StateHeaderScanner } from './stateHeader.js';

/** Who writes: the job whose engine writes, if any; `judge` when that job had already ended (issue 30). */
export interface WriteAuthority {
  jobId: string | null;
  judge?: (
    stores: Stores,
    header: { serial: number; lineage: string },
  ) => Promise<{ after_lost: boolean; rejected: boolean }>;
}

/** One new version of a vine's state, from whichever writer: a job's engine, the cloud block, an upload. */
export interface StateVersionWrite {
  scope: Scope;
  ownerId: string;
  vineId: string;
  createdBy: string | null;
  uploadId?: string | null;
  body: AsyncIterable<Uint8Array>;
  /** The body's `Content-Length`, when it declared one: over the limit, refused before a byte is read. */
  declaredBytes: number | null;
  /**
   * The writer's right to write now (the lock it must hold, the job it must run): asked before
   * the bytes are read and again, in the unit of work that records the version, after. Answers
   * the job whose engine writes, if any, and for the write of a job already ended (issue 30) how
   * to judge it once its header is read.
   */
  authorize(stores: Stores): Promise<WriteAuthority>;
  /** The lowercase hex MD5 the writer says the bytes have (the Terraform Cloud protocol sends one). */
  expectedMd5?: string | null;
  /**
   * Unless forced, a version must continue the current one: same lineage, a serial no lower
   * (the Terraform Cloud protocol's rule; the `http` backend leaves it to the engine).
   */
  continuity?: { force: boolean };
}

function stateTooLarge(limit: number): TooLargeError {
  return new TooLargeError('state_too_large', `a state file must be at most ${limit} bytes`, limit);
}

/** Hands the body on chunk by chunk, showing each to the scanner and the digest first. */
async function* observed(
  body: AsyncIterable<Uint8Array>,
  scanner: StateHeaderScanner,
  md5: ReturnType<typeof createHash>,
): AsyncIterable<Uint8Array> {
  for await (const chunk of body) {
    scanner.push(chunk);
    md5.update(chunk);
    yield chunk;
  }
}

/**
 * Stores a state version (DESIGN §7, issue 26): the writer is authorized and a declared size over
 * the limit refused before a byte of the body is read; the body streams into the artifact store,
 * which stops at the limit, while its serial, lineage and MD5 are read; the version is recorded
 * (after the writer is authorized again: the lock may have changed hands meanwhile) and the
 * versions past the kept number are pruned, their bytes deleted.
 */
export async function writeStateVersion(deps: CoreDeps, write: StateVersionWrite): Promise<StateVersion> {
  await deps.uow.run(write.scope, (stores) => write.authorize(stores));
  const limit = deps.settings.maxStateBytes;
  if (write.declaredBytes !== null && write.declaredBytes > limit) throw stateTooLarge(limit);
  const scanner = new StateHeaderScanner();
  const md5 = createHash('md5');
  const key = `state/${write.ownerId}/${write.vineId}/${deps.random.uuid()}.tfstate`;
  let stored: { size: number; sha256: string };
  try {
    stored = await deps.artifacts.put(key, observed(write.body, scanner, md5), { maxBytes: limit });
  } catch (error) {
    throw error instanceof TooLargeError ? stateTooLarge(limit) : error;
  }
  let version: StateVersion;
  let pruned: string[];
  try {
    const { serial, lineage } = scanner.header();
    const digest = md5.digest('hex');
    if (write.expectedMd5 && write.expectedMd5.toLowerCase() !== digest) {
      throw new UnprocessableError(
        'state_md5_mismatch',
        `the state's MD5 is ${digest}, not the ${write.expectedMd5} given`,
      );
    }
    ({ version, pruned } = await deps.uow.run(write.scope, async (stores) => {
      const { jobId, judge } = await write.authorize(stores);
      const verdict = judge ? await judge(stores, { serial, lineage }) : { after_lost: false, rejected: false };
      if (write.continuity && !write.continuity.force) {
        const current = await stores.states.latest(write.ownerId, write.vineId);
        if (current && current.lineage !== lineage) {
          throw new ConflictError(
            'state_lineage_mismatch',
            `the state's lineage ${lineage} is not the current state's (${current.lineage}); push with force to replace it`,
          );
        }
        if (current && serial < current.serial) {
          throw new ConflictError(
            'state_serial_behind',
            `the state's serial ${serial} is behind the current state's (${current.serial}); push with force to replace it`,
          );
        }
      }
      if (verdict.rejected && jobId !== null) {
        // The same refused write again (the agent pushing the errored.tfstate its engine wrote when
        // this one was refused): the job is the write's key, its bytes the same; one copy is kept.
        const same = await sameRejectedVersion(stores, write, { jobId, serial, lineage, sha256: stored.sha256 });
        if (same) return { version: same, pruned: [key] };
      }
      const added = await stores.states.addVersion({
        owner_id: write.ownerId,
        vine_id: write.vineId,
        serial,
        lineage,
        size: stored.size,
        sha256: stored.sha256,
        storage_key: key,
        job_id: jobId,
        created_by: write.createdBy,
        upload_id: write.uploadId ?? null,
        after_lost: verdict.after_lost,
        rejected: verdict.rejected,
        created_at: isoNow(deps),
      });
      const keys = await stores.states.pruneVersions(write.ownerId, write.vineId, deps.settings.stateVersionsKept);
      return { version: added, pruned: keys };
    }));
  } catch (error) {
    await deleteStateArtifacts(deps, [key]);
    throw error;
  }
  await deleteStateArtifacts(deps, pruned);
  return version;
}

/** A `rejected` version the job already wrote with these bytes, serial and lineage, if any. */
async function sameRejectedVersion(
  stores: Stores,
  write: Pick<StateVersionWrite, 'ownerId' | 'vineId'>,
  written: { jobId: string; serial: number; lineage: string; sha256: string },
): Promise<StateVersion | null> {
  const versions = await stores.states.listVersions(write.ownerId, write.vineId);
  return (
    versions.find(
      (version) =>
        version.rejected &&
        version.job_id === written.jobId &&
        version.sha256 === written.sha256 &&
        version.serial === written.serial &&
        version.lineage === written.lineage,
    ) ?? null
  );
}

/** Versions pruned or never recorded: their bytes go too (best effort; a leftover costs only space). */
export async function deleteStateArtifacts(deps: Pick<CoreDeps, 'artifacts'>, keys: readonly string[]): Promise<void> {
  for (const key of keys) {
    try {
      await deps.artifacts.delete(key);
    } catch {
      // Deliberately ignored: the version records are already consistent without these bytes.
    }
  }
}
