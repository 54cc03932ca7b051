/** A configuration's state versions, lock and rollback: each operation as data (served by `http/src/tfe/stateHistoryRoutes.ts`). */
import { operation } from '../operation.js';
import {
  NameParams,
  StateAfterLostAcknowledgeAnswer,
  StateHistoryAnswer,
  StateUnlockAnswer,
  StateVersionParams,
  StateVersionRecord,
} from '../schemas.js';

export const listStateVersions = operation({
  method: 'get',
  path: '/api/cli/configurations/{name}/state-versions',
  operationId: 'listStateVersions',
  summary: "The versions of a vine's state, newest first, and who holds its lock",
  description:
    'One history whoever wrote each version: a Trellis job, the stock CLI through the cloud block, an upload or a rollback. The last versions are kept (`TRELLIS_STATE_VERSIONS_KEPT`).',
  tags: ['state'],
  auth: 'user',
  params: NameParams,
  responses: { 200: { description: 'The history', schema: StateHistoryAnswer } },
});

export const downloadStateVersion = operation({
  method: 'get',
  path: '/api/cli/configurations/{name}/state-versions/{version_id}/state',
  operationId: 'downloadStateVersion',
  summary: 'The state file of one version (operator: it may hold secrets)',
  tags: ['state'],
  auth: 'user',
  params: StateVersionParams,
  responses: { 200: { description: 'The state file', contentType: 'application/json' } },
});

export const rollbackStateVersion = operation({
  method: 'post',
  path: '/api/cli/configurations/{name}/state-versions/{version_id}/rollback',
  operationId: 'rollbackStateVersion',
  summary: 'Make an old version the current state again (admin)',
  description:
    "Writes the old version's state as the newest version, with the next serial, so engines carry on from it. Refused while the state is locked (`409 state_locked`). Audited as `state.rollback`.",
  tags: ['state'],
  auth: 'user',
  params: StateVersionParams,
  responses: { 201: { description: 'The new version', schema: StateVersionRecord } },
});

export const forceUnlockState = operation({
  method: 'delete',
  path: '/api/cli/configurations/{name}/state-lock',
  operationId: 'forceUnlockState',
  summary: "Force-unlock a configuration's state (admin)",
  description:
    "Releases whatever lock holds the state: the lock of an engine that died without releasing it, or a person's lock taken through the cloud block. A job's own end releases its engine's lock; this is for the rest. `409 state_not_locked` when the state is free. Audited as `state.force_unlock`, with whose lock it was.",
  tags: ['state'],
  auth: 'user',
  params: NameParams,
  responses: { 200: { description: 'The lock that was released', schema: StateUnlockAnswer } },
});

export const acknowledgeStateAfterLost = operation({
  method: 'delete',
  path: '/api/cli/configurations/{name}/state-after-lost',
  operationId: 'acknowledgeStateAfterLost',
  summary: "Acknowledge a configuration's state written after a lost job (admin)",
  description:
    'The engine of a job failed as lost (its agent cut off longer than the lost-job timeout) still stores its last state: as the current state when no later job had the configuration, otherwise as a `rejected` version kept for recovery. Either way the configuration shows `state_after_lost` until an admin reviewed it and acknowledges it here. `409 state_after_lost_not_set` when nothing awaits review. Audited as `state.after_lost_acknowledge`.',
  tags: ['state'],
  auth: 'user',
  params: NameParams,
  responses: { 200: { description: 'The late versions marked reviewed', schema: StateAfterLostAcknowledgeAnswer } },
});

/** In the order the API reference lists them. */
export const stateHistoryOperations = {
  listStateVersions,
  downloadStateVersion,
  rollbackStateVersion,
  forceUnlockState,
  acknowledgeStateAfterLost,
};
