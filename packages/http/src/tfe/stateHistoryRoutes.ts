import { pipeline } from 'node:stream/promises';
import type { StateLock, StateVersion, UseCases } from '@trellis/core';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

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

type LockView = Pick<StateLock, 'lock_id' | 'info' | 'created_at'>;

function lockView(lock: StateLock): LockView;
function lockView(lock: StateLock | null): LockView | null;
function lockView(lock: StateLock | null): LockView | null {
  return lock && { lock_id: lock.lock_id, info: lock.info, created_at: lock.created_at };
}

/** The state history of a vine for people (issue 26): list (viewer), download (operator), rollback (admin). */
export function stateHistoryRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.listStateVersions, async ({ user, params }) => {
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
    }),
    implement(operations.downloadStateVersion, async ({ user, params, res }) => {
      const { body, version } = await useCases.tfe.history.download(user, params.name, params.version_id);
      res.status(200);
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('Content-Length', String(version.size));
      res.setHeader('ETag', `"${version.sha256}"`);
      await pipeline(body, res);
      return undefined;
    }),
    implement(operations.rollbackStateVersion, async ({ user, params }) => ({
      status: 201,
      body: versionView(await useCases.tfe.history.rollback(user, params.name, params.version_id)),
    })),
    implement(operations.forceUnlockState, async ({ user, params }) => {
      const unlocked = await useCases.tfe.history.forceUnlock(user, params.name);
      return { status: 200, body: { vine_id: unlocked.vine_id, released: lockView(unlocked.released) } };
    }),
    implement(operations.acknowledgeStateAfterLost, async ({ user, params }) => ({
      status: 200,
      body: await useCases.tfe.history.acknowledgeAfterLost(user, params.name),
    })),
  ];
}
