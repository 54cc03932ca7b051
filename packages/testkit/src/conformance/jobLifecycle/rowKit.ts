import type { Job } from '@trellis/core';
import { seedVine } from '../../memory/builders.js';
import type { LifecycleWorld, Observed } from './world.js';

/** What the rows of the lifecycle table share. */
export const changes = (add: number, change = 0, destroy = 0) => ({ plan_summary: { add, change, destroy } });
export const planBytes = async function* () {
  yield new TextEncoder().encode('plan');
};

/** A DEPLOYED vine with a drift check queued by a person (named `job`). */
export async function queuedDriftCheck(world: LifecycleWorld): Promise<Job> {
  await world.succeed('DEPLOY');
  const check = await world.core.useCases.drift.checkNow(world.ada, world.vine.id);
  world.name(check, 'job');
  return check;
}

export const none: Observed = { deliveries: [], vcs: [], announcements: [], audit: [] };

/** A vine whose jobs get an identity token at their claim (workload identity, AWS). */
export function federatedVine(world: LifecycleWorld) {
  return seedVine(world.core, world.ada, {
    name: 'federated',
    cloud_identity: { kind: 'oidc', role_arn: 'arn:aws:iam::123456789012:role/deployer' },
  });
}

/** The control plane cannot sign identity tokens from now on. */
export function breakSigner(world: LifecycleWorld): void {
  world.core.deps.jws.sign = async () => {
    throw new Error('signer down');
  };
}
