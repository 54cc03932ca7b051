import { pipeline } from 'node:stream/promises';
import type { UseCases } from '@trellis/core';
import { LockInfo, VineParams, WriteQuery } from '@trellis/contract';
import { defineRoute, type RouteSpec } from '../routing/route.js';

/**
 * The Terraform/OpenTofu `http` state backend (DESIGN §7), one state per vine, for the agent
 * running a job of that vine. Agents authenticate with their headers or, as the engine must,
 * with Basic auth: the worker id as user, the job's state token (or the worker token) as password.
 */
export function stateRoutes(useCases: UseCases): RouteSpec[] {
  return [
    defineRoute({
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
      handler: async ({ worker, params, res }) => {
        const state = await useCases.states.read(worker, params.vine_id);
        if (!state) return { status: 204 };
        res.status(200);
        res.setHeader('Content-Type', 'application/json');
        res.setHeader('Content-Length', String(state.size));
        res.setHeader('ETag', `"${state.sha256}"`);
        await pipeline(state.body, res);
        return undefined;
      },
    }),
    defineRoute({
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
      handler: async ({ worker, params, query, req }) => {
        const declared = Number(req.headers['content-length']);
        await useCases.states.write(
          worker,
          params.vine_id,
          query.ID ?? null,
          req,
          Number.isFinite(declared) ? declared : null,
        );
        return { status: 200 };
      },
    }),
    defineRoute({
      method: 'lock',
      path: '/api/state/{vine_id}',
      operationId: 'lockState',
      summary: 'Lock a vine state (http backend LOCK)',
      description: 'Answers `423` with the current lock info when someone else holds it.',
      tags: ['state'],
      auth: 'state',
      params: VineParams,
      body: LockInfo,
      responses: { 200: { description: 'Locked' }, 423: { description: 'Held by the lock in the body' } },
      handler: async ({ worker, params, body }) => {
        const outcome = await useCases.states.lock(worker, params.vine_id, body);
        return outcome.acquired
          ? { status: 200, body: outcome.lock.info }
          : { status: 423, body: outcome.current.info };
      },
    }),
    defineRoute({
      method: 'unlock',
      path: '/api/state/{vine_id}',
      operationId: 'unlockState',
      summary: 'Unlock a vine state (http backend UNLOCK)',
      description: 'Answers `409` with the current lock info when the id does not hold the lock.',
      tags: ['state'],
      auth: 'state',
      params: VineParams,
      body: LockInfo,
      responses: { 200: { description: 'Unlocked' }, 409: { description: 'Another lock holds it' } },
      handler: async ({ worker, params, body }) => {
        const outcome = await useCases.states.unlock(worker, params.vine_id, body);
        if (outcome.released) return { status: 200 };
        return { status: 409, body: outcome.current?.info ?? { error: 'the state is not locked' } };
      },
    }),
  ];
}
