import { describe, expect, it } from 'vitest';
import { at, newJob, newUser, newVine, newVineyard } from './fixtures.js';
import { type OpenStoreHarness, useStoreSuite } from './harness.js';
import { newDelivery, newNotification } from './notifications.js';
import { newVcsFeedbackItem } from './vcsFeedback.js';

/** One outbox of every kind (issue 24): a claim takes rows of both, each tagged with its kind. */
export function describeOutboxStoreConformance(open: OpenStoreHarness): void {
  describe('OutboxStore', () => {
    const suite = useStoreSuite(open);
    const newOwner = () =>
      suite.asSystem(async (stores) => {
        const user = await stores.users.create(newUser());
        const vineyard = await stores.vineyards.create(newVineyard(user.id));
        const vine = await stores.vines.create(newVine(user.id, vineyard.id));
        const job = await stores.jobs.create(newJob(user.id, vine));
        const notification = await stores.notifications.create(newNotification(user.id));
        return { user, job, notification };
      });

    it('claims due rows of every kind in written order, or of the kinds asked for', async () => {
      const a = await newOwner();
      const b = await newOwner();
      const delivery = newDelivery(a.notification, { next_attempt_at: at(30) });
      const status = newVcsFeedbackItem(a.job, { next_attempt_at: at(20) });
      const theirs = newDelivery(b.notification, { next_attempt_at: at(10) });
      const feedback = newVcsFeedbackItem(b.job, { next_attempt_at: at(15) });
      await suite.asOwner(a.user.id, async (stores) => {
        await stores.outbox.add('notification', delivery);
        await stores.outbox.add('vcs_feedback', status);
      });
      await suite.asOwner(b.user.id, async (stores) => {
        await stores.outbox.add('notification', theirs);
        await stores.outbox.add('vcs_feedback', feedback);
      });

      // The two due first (by next attempt) of the four, answered in the order they were written.
      const first = await suite.asSystem((stores) => stores.outbox.claimDue(at(100), at(200), 2));
      expect(first).toEqual([
        { kind: 'notification', item: { ...theirs, next_attempt_at: at(200) } },
        { kind: 'vcs_feedback', item: { ...feedback, next_attempt_at: at(200) } },
      ]);
      const feedbackOnly = await suite.asSystem((stores) =>
        stores.outbox.claimDue(at(100), at(200), 10, ['vcs_feedback']),
      );
      expect(feedbackOnly).toEqual([{ kind: 'vcs_feedback', item: { ...status, next_attempt_at: at(200) } }]);
      expect(await suite.asSystem((stores) => stores.outbox.claimDue(at(100), at(200), 10, []))).toEqual([]);
      const rest = await suite.asSystem((stores) => stores.outbox.claimDue(at(100), at(200), 10));
      expect(rest).toEqual([{ kind: 'notification', item: { ...delivery, next_attempt_at: at(200) } }]);
    });

    it('keeps each row to its kind and its owner', async () => {
      const a = await newOwner();
      const b = await newOwner();
      const delivery = newDelivery(a.notification);
      const status = newVcsFeedbackItem(a.job);
      await suite.asOwner(a.user.id, async (stores) => {
        expect(await stores.outbox.add('notification', delivery)).toEqual(delivery);
        expect(await stores.outbox.add('vcs_feedback', status)).toEqual(status);
      });
      await suite.asOwner(a.user.id, async (stores) => {
        expect(await stores.outbox.find('notification', delivery.id)).toEqual(delivery);
        expect(await stores.outbox.find('vcs_feedback', delivery.id)).toBeNull();
        expect(await stores.outbox.find('notification', status.id)).toBeNull();
        const outcome = { status: 'failed' as const, next_attempt_at: at(40), finished_at: at(40) };
        expect(await stores.outbox.recordAttempt('vcs_feedback', a.user.id, delivery.id, null, outcome)).toBeNull();
      });
      expect(await suite.asOwner(b.user.id, (stores) => stores.outbox.find('notification', delivery.id))).toBeNull();
      expect(
        await suite.asOwner(b.user.id, (stores) =>
          stores.outbox.pageDeliveries(a.user.id, a.notification.id, { limit: 10 }),
        ),
      ).toEqual({ items: [], next: null });
      expect(await suite.asOwner(a.user.id, (stores) => stores.outbox.find('notification', delivery.id))).toEqual(
        delivery,
      );
    });

    it('refuses a row of another owner in an owner’s unit of work', async () => {
      const a = await newOwner();
      const b = await newOwner();
      await expect(
        suite.asOwner(a.user.id, (stores) => stores.outbox.add('vcs_feedback', newVcsFeedbackItem(b.job))),
      ).rejects.toThrow();
      expect(await suite.asOwner(b.user.id, (stores) => stores.outbox.listVcsFeedback(b.user.id, b.job.id))).toEqual(
        [],
      );
    });
  });
}
