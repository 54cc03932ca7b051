/**
 * The state history of a vine (issue 26): one history whoever wrote it (a Trellis job's engine,
 * the stock CLI's cloud block, an upload), listed, downloaded and rolled back through the API.
 */
import { z } from 'zod';
import { isoTime, jsonObject, uuid } from './common.js';

export const StateVersionParams = z.object({
  name: z.string().min(1).describe('the configuration, by id or name'),
  version_id: z.coerce.number().int().min(1).describe('the state version'),
});

export const StateVersionRecord = z.object({
  id: z.number().int(),
  vine_id: uuid,
  serial: z.number().int(),
  lineage: z.string(),
  size: z.number().int(),
  sha256: z.string(),
  job_id: uuid.nullable().describe("the job whose engine wrote it (null: a person's CLI or a rollback)"),
  created_by: uuid.nullable().describe('the person whose token wrote it (null: a job)'),
  after_lost: z
    .boolean()
    .describe('written by the engine of a job the control plane had already failed as lost (issue 30)'),
  rejected: z
    .boolean()
    .describe('refused as the current state (a later job had the configuration): kept for recovery only'),
  reviewed_at: isoTime.nullable().describe('when a person acknowledged this late version (null: not yet, or not late)'),
  created_at: isoTime,
});

const StateLockRecord = z.object({ lock_id: z.string(), info: jsonObject, created_at: isoTime });

/** `DELETE …/state-lock`: the lock a force-unlock released. */
export const StateUnlockAnswer = z.object({
  vine_id: uuid,
  released: StateLockRecord.describe('the lock that held the state (its `info.Who` says whose it was)'),
});

/** A version written after its job was lost, awaiting a person's review (issue 30). */
export const StateAfterLostRecord = z.object({
  version_id: z.number().int(),
  job_id: uuid.nullable(),
  rejected: z.boolean().describe('a later job had the configuration: the version is kept, not current'),
  created_at: isoTime,
});

/** `DELETE …/state-after-lost`: how many late versions the acknowledgment marked reviewed. */
export const StateAfterLostAcknowledgeAnswer = z.object({ vine_id: uuid, acknowledged: z.number().int() });

export const StateHistoryAnswer = z.object({
  vine_id: uuid,
  versions: z
    .array(StateVersionRecord)
    .describe('newest first; the newest that is not `rejected` is the current state'),
  lock: StateLockRecord.nullable().describe(
    "who holds the state lock (a job's engine, or a person through the cloud block); null: free",
  ),
  state_after_lost: StateAfterLostRecord.nullable().describe(
    'the newest version written after its job was failed as lost, until an admin acknowledges it; null: none awaits review',
  ),
});
