/** The engine's http state backend: each operation as data (served by `http/src/routes/stateRoutes.ts`). */
import { operation } from '../operation.js';
import { LockAnswer, LockInfo, VineParams, WriteQuery } from '../schemas.js';

export const readState = operation({
  method: 'get',
  path: '/api/state/{vine_id}',
  operationId: 'readState',
  summary: 'The newest state of a vine (http backend)',
  tags: ['state'],
  auth: 'state',
  params: VineParams,
  responses: {
    200: { description: 'The state', contentType: 'application/json' },
    204: { description: 'No state yet' },
  },
});

export const writeState = operation({
  method: 'post',
  path: '/api/state/{vine_id}',
  operationId: 'writeState',
  summary: 'Store a new version of a vine state (http backend)',
  description:
    'When the state is locked the writer must hold the lock (`?ID=`); `409 state_locked` otherwise. ' +
    'The writer is checked before the body is read; a declared `Content-Length` over the limit is `413 state_too_large` at once.',
  tags: ['state'],
  auth: 'state',
  params: VineParams,
  query: WriteQuery,
  body: 'binary',
  responses: {
    200: { description: 'Stored' },
    413: { description: 'Larger than the state limit (`state_too_large`), refused before or while it streams' },
  },
});

export const lockState = operation({
  method: 'lock',
  path: '/api/state/{vine_id}',
  operationId: 'lockState',
  summary: 'Lock a vine state (http backend LOCK)',
  description: 'Answers `423` with the current lock info when someone else holds it.',
  tags: ['state'],
  auth: 'state',
  params: VineParams,
  body: LockInfo,
  responses: {
    200: { description: 'Locked: the lock info', schema: LockAnswer },
    423: { description: 'Held by the lock in the body', schema: LockAnswer },
  },
});

export const unlockState = operation({
  method: 'unlock',
  path: '/api/state/{vine_id}',
  operationId: 'unlockState',
  summary: 'Unlock a vine state (http backend UNLOCK)',
  description: 'Answers `409` with the current lock info when the id does not hold the lock.',
  tags: ['state'],
  auth: 'state',
  params: VineParams,
  body: LockInfo,
  responses: {
    200: { description: 'Unlocked' },
    409: { description: 'Another lock holds it (its lock info), or none does (`error`)', schema: LockAnswer },
  },
});

/** In the order the API reference lists them. */
export const stateOperations = { readState, writeState, lockState, unlockState };
