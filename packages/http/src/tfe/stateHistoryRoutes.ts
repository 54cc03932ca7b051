import { pipeline } from 'node:stream/promises';
import type { StateLock, StateVersion, UseCases } from '@trellis/core';
import {
  NameParams,
  StateAfterLostAcknowledgeAnswer,
  StateHistoryAnswer,
  StateUnlockAnswer,
  StateVersionParams,
  StateVersionRecord,
} from '@trellis/contract';
import { defineRoute, type RouteSpec } from '../routing/route.js';

function versionView(version: StateVersion) {
  return {
    id: version.id,
    vine_id: version.vine_id,
    serial: version.serial,
    lineage: version.lineage,
    size: version.size,
    sha256: version.sha256,
    job_id: version.job_id,
    created_by: version.created_by,
    after_lost: version.after_lost,
    rejected: version.rejected,
    reviewed_at: version.reviewed_at,
    created_at: version.created_at,
  };
}

function lockView(lock: StateLock | null) {
  return lock && { lock_id: lock.lock_id, info: lock.info, created_at: lock.created_at };
}

/** The state history of a vine for people (issue 26): list (viewer), download (operator), rollback (admin). */
export function stateHistoryRoutes(useCases: UseCases): RouteSpec[] {
  return [
    defineRoute({
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
      handler: async ({ user, params }) => {
        const history = await useCases.tfe.history.list(user, params.name);
        return {
          status: 200,
          body: {
            vine_id: history.vine_id,
            versions: history.versions.map(versionView),
            lock: lockView(history.lock),
            state_after_lost: history.state_after_lost,
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/cli/configurations/{name}/state-versions/{version_id}/state',
      operationId: 'downloadStateVersion',
      summary: 'The state file of one version (operator: it may hold secrets)',
      tags: ['state'],
      auth: 'user',
      params: StateVersionParams,
      responses: { 200: { description: 'The state file', contentType: 'application/json' } },
      handler: async ({ user, params, res }) => {
        const { body, version } = await useCases.tfe.history.download(user, params.name, params.version_id);
        res.status(200);
        res.setHeader('Content-Type', 'application/json');
        res.setHeader('Content-Length', String(version.size));
        res.setHeader('ETag', `"${version.sha256}"`);
        await pipeline(body, res);
        return undefined;
      },
    }),
    defineRoute({
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
      handler: async ({ user, params }) => ({
        status: 201,
        body: versionView(await useCases.tfe.history.rollback(user, params.name, params.version_id)),
      }),
    }),
    defineRoute({
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
      handler: async ({ user, params }) => {
        const unlocked = await useCases.tfe.history.forceUnlock(user, params.name);
        return { status: 200, body: { vine_id: unlocked.vine_id, released: lockView(unlocked.released) } };
      },
    }),
    defineRoute({
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
      handler: async ({ user, params }) => ({
        status: 200,
        body: await useCases.tfe.history.acknowledgeAfterLost(user, params.name),
      }),
    }),
  ];
}
