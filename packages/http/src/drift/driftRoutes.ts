import type { UseCases } from '@trellis/core';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** Drift checks on demand (issue 16); a vine's drift and trigger settings are its settings. */
export function driftRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.checkConfigurationDrift, async ({ user, params }) => ({
      status: 202,
      body: await useCases.drift.checkNow(user, params.name),
    })),
  ];
}
