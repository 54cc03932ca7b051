import { pipeline } from 'node:stream/promises';
import type { UseCases } from '@trellis/core';
import { z } from 'zod';
import { defineRoute, type RouteSpec } from '../routing/route.js';

const VineParams = z.object({ vine_id: z.uuid() });
const WriteQuery = z.object({ ID: z.string().max(200).optional().describe('the lock id, when the state is locked') });
const LockInfo = z
  .object({ ID: z.string().min(1).max(200) })
  .passthrough()
  .describe('lock info as the engine sends it: ID, Operation, Info, Who, Version, Created, Path');

/**
 * The Terraform/OpenTofu `http` state backend (DESIGN §7), one state per vine, for the agent
 * running a job of that vine. Agents authenticate with their headers or, as the engine must,
 * with Basic auth (worker id as user, token as password).
 */
export function stateRoutes(useCases: UseCases): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/state/{vine_id}',
      operationId: 'readState',
      summary: 'The newest state of a vine (http backend)',
      tags: ['state'],
      auth: 'worker',
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
      description: 'When the state is locked the writer must hold the lock (`?ID=`); `409 state_locked` otherwise.',
      tags: ['state'],
      auth: 'worker',
      params: VineParams,
      query: WriteQuery,
      body: 'binary',
      responses: { 200: { description: 'Stored' } },
      handler: async ({ worker, params, query, req }) => {
        await useCases.states.write(worker, params.vine_id, query.ID ?? null, req);
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
      auth: 'worker',
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
      auth: 'worker',
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
