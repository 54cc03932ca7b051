import { END_REASONS, ownerScope } from '@trellis/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LIFECYCLE_ROWS, type LifecycleRow } from './rows.js';
import { LifecycleWorld, type OpenLifecycleCore } from './world.js';

export { LIFECYCLE_ROWS, type LifecycleRow } from './rows.js';
export { LifecycleWorld, type OpenedCore, type OpenLifecycleCore, type Observed } from './world.js';

/**
 * The job lifecycle as a table (issue 24): for every end reason, the outbox rows (notification
 * deliveries, git provider feedback), audit entries and live announcements a job's end produces,
 * through the real use cases on the unit of work `open` gives. `only` picks rows by name.
 */
export function describeJobLifecycleConformance(
  name: string,
  open: OpenLifecycleCore,
  only: (row: LifecycleRow) => boolean = () => true,
): void {
  describe(`job lifecycle: ${name}`, () => {
    let world: LifecycleWorld;
    let close: () => Promise<void> = async () => {};

    beforeEach(async () => {
      ({ world, close } = await LifecycleWorld.open(open));
    });
    afterEach(async () => {
      await close();
    });

    it.each(LIFECYCLE_ROWS.filter(only).map((row) => [row.name, row] as const))('%s', async (_name, row) => {
      const change = await row.arrange(world);
      const observed = await world.observe(change);
      expect(observed).toEqual(row.expected);
      const statuses = await world.core.uow.read(ownerScope(world.ada.userId), async (stores) => {
        const found: Record<string, string | undefined> = {};
        for (const [id, label] of world.labels) found[label] = (await stores.jobs.get(world.ada.userId, id))?.status;
        return found;
      });
      expect(statuses).toEqual(row.statuses);
      await row.also?.(world);
    });

    it('has a row for every end reason', () => {
      const shown = new Set(LIFECYCLE_ROWS.flatMap((row) => row.reasons));
      expect(END_REASONS.filter((reason) => !shown.has(reason))).toEqual([]);
    });
  });
}
