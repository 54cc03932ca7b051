import { pipeline } from 'node:stream/promises';
import type { UseCases } from '@trellis/core';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/**
 * The Terraform/OpenTofu `http` state backend (DESIGN §7), one state per vine, for the agent
 * running a job of that vine. Agents authenticate with their headers or, as the engine must,
 * with Basic auth: the worker id as user, the job's state token (or the worker token) as password.
 */
export function stateRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.readState, async ({ worker, params, res }) => {
      const state = await useCases.states.read(worker, params.vine_id);
      if (!state) return { status: 204 };
      res.status(200);
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('Content-Length', String(state.size));
      res.setHeader('ETag', `"${state.sha256}"`);
      await pipeline(state.body, res);
      return undefined;
    }),
    implement(operations.writeState, async ({ worker, params, query, req }) => {
      const declared = Number(req.headers['content-length']);
      await useCases.states.write(
        worker,
        params.vine_id,
        query.ID ?? null,
        req,
        Number.isFinite(declared) ? declared : null,
      );
      return { status: 200 };
    }),
    implement(operations.lockState, async ({ worker, params, body }) => {
      const outcome = await useCases.states.lock(worker, params.vine_id, body);
      return outcome.acquired ? { status: 200, body: outcome.lock.info } : { status: 423, body: outcome.current.info };
    }),
    implement(operations.unlockState, async ({ worker, params, body }) => {
      const outcome = await useCases.states.unlock(worker, params.vine_id, body);
      if (outcome.released) return { status: 200 };
      return { status: 409, body: outcome.current?.info ?? { error: 'the state is not locked' } };
    }),
  ];
}
