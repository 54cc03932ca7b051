import type { Job, VcsFeedbackItem, VcsFeedbackPayload } from '@trellis/core';
import { vcsFeedbackSubject } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, newJob, newUser, newVine, newVineyard, uuid } from './fixtures.js';
import { type OpenStoreHarness, useStoreSuite } from './harness.js';

export function newVcsFeedbackItem(job: Job, overrides: Partial<VcsFeedbackItem> = {}): VcsFeedbackItem {
  const payload: VcsFeedbackPayload = overrides.payload ?? {
    kind: 'status',
    repository: 'acme/infra',
    sha: 'a'.repeat(40),
    status: {
      state: 'pending',
      context: 'trellis/prod/net',
      description: 'Plan queued',
      target_url: 'https://t/jobs/1',
    },
  };
  return {
    id: uuid(),
    owner_id: job.owner_id,
    job_id: job.id,
    vine_id: job.vine_id as string,
    provider: 'github',
    kind: payload.kind,
    subject: vcsFeedbackSubject(payload),
    payload,
    status: 'pending',
    attempts: [],
    created_at: at(10),
    next_attempt_at: at(10),
    finished_at: null,
    ...overrides,
  };
}

export function describeVcsFeedbackStoreConformance(open: OpenStoreHarness): void {
  describe('git provider feedback (OutboxStore, VcsFeedbackStore)', () => {
    const suite = useStoreSuite(open);
    const newOwnerWithJob = () =>
      suite.asSystem(async (stores) => {
        const user = await stores.users.create(newUser());
        const vineyard = await stores.vineyards.create(newVineyard(user.id));
        const vine = await stores.vines.create(newVine(user.id, vineyard.id));
        const job = await stores.jobs.create(newJob(user.id, vine));
        return { user, vine, job };
      });

    it('adds, finds and lists a job’s items, each owner seeing only its own', async () => {
      const a = await newOwnerWithJob();
      const b = await newOwnerWithJob();
      const status = newVcsFeedbackItem(a.job);
      const comment = newVcsFeedbackItem(a.job, {
        payload: {
          kind: 'comment',
          repository: 'acme/infra',
          number: 7,
          body: '### plan\n`+1`',
          job_url: 'https://t/jobs/1',
        },
        kind: 'comment',
        subject: 'comment:acme/infra#7',
        created_at: at(11),
        next_attempt_at: at(11),
      });
      await suite.asOwner(a.user.id, async (stores) => {
        expect(await stores.outbox.add('vcs_feedback', status)).toEqual(status);
        await stores.outbox.add('vcs_feedback', comment);
      });
      expect(await suite.asOwner(a.user.id, (stores) => stores.outbox.find('vcs_feedback', status.id))).toEqual(status);
      expect(await suite.asOwner(b.user.id, (stores) => stores.outbox.find('vcs_feedback', status.id))).toBeNull();
      expect(await suite.asOwner(a.user.id, (stores) => stores.outbox.listVcsFeedback(a.user.id, a.job.id))).toEqual([
        status,
        comment,
      ]);
      expect(await suite.asOwner(b.user.id, (stores) => stores.outbox.listVcsFeedback(a.user.id, a.job.id))).toEqual(
        [],
      );
    });

    it('claims due pending items once, in written order, and records attempts', async () => {
      const a = await newOwnerWithJob();
      const b = await newOwnerWithJob();
      const first = newVcsFeedbackItem(a.job, { next_attempt_at: at(20) });
      const second = newVcsFeedbackItem(b.job, { next_attempt_at: at(15) });
      const later = newVcsFeedbackItem(a.job, { next_attempt_at: at(500) });
      const done = newVcsFeedbackItem(a.job, { status: 'delivered', finished_at: at(12) });
      await suite.asOwner(a.user.id, async (stores) => {
        for (const item of [first, later, done]) await stores.outbox.add('vcs_feedback', item);
      });
      await suite.asOwner(b.user.id, (stores) => stores.outbox.add('vcs_feedback', second));
      const claimed = await suite.asSystem((stores) => stores.outbox.claimDue(at(100), at(220), 10));
      expect(claimed.map((entry) => entry.kind)).toEqual(['vcs_feedback', 'vcs_feedback']);
      expect(claimed.map((entry) => entry.item.id)).toEqual([first.id, second.id]);
      expect(claimed.map((entry) => entry.item.next_attempt_at)).toEqual([at(220), at(220)]);
      // Leased: not due again until the lease ends.
      expect(await suite.asSystem((stores) => stores.outbox.claimDue(at(100), at(220), 10))).toEqual([]);
      expect((await suite.asSystem((stores) => stores.outbox.claimDue(at(100), at(220), 1))).length).toBe(0);

      const retried = await suite.asOwner(a.user.id, (stores) =>
        stores.outbox.recordAttempt(
          'vcs_feedback',
          a.user.id,
          first.id,
          { at: at(100), error: 'provider_unavailable: 502' },
          { status: 'pending', next_attempt_at: at(130), finished_at: null },
        ),
      );
      expect(retried).toMatchObject({
        status: 'pending',
        next_attempt_at: at(130),
        attempts: [{ error: 'provider_unavailable: 502' }],
      });
      const delivered = await suite.asOwner(a.user.id, (stores) =>
        stores.outbox.recordAttempt(
          'vcs_feedback',
          a.user.id,
          first.id,
          { at: at(130), error: null },
          { status: 'delivered', next_attempt_at: at(130), finished_at: at(130) },
        ),
      );
      expect(delivered?.attempts).toHaveLength(2);
      expect(delivered).toMatchObject({ status: 'delivered', finished_at: at(130) });
      const superseded = await suite.asOwner(b.user.id, (stores) =>
        stores.outbox.recordAttempt('vcs_feedback', b.user.id, second.id, null, {
          status: 'superseded',
          next_attempt_at: at(101),
          finished_at: at(101),
        }),
      );
      expect(superseded).toMatchObject({ status: 'superseded', attempts: [] });
      expect(
        await suite.asOwner(b.user.id, (stores) =>
          stores.outbox.recordAttempt('vcs_feedback', a.user.id, later.id, null, {
            status: 'failed',
            next_attempt_at: at(1),
            finished_at: at(1),
          }),
        ),
      ).toBeNull();
    });

    it('tells whether a newer item of the same vine and subject was written', async () => {
      const a = await newOwnerWithJob();
      const older = newVcsFeedbackItem(a.job);
      const other = newVcsFeedbackItem(a.job, {
        payload: {
          kind: 'status',
          repository: 'acme/infra',
          sha: 'b'.repeat(40),
          status: older.payload.kind === 'status' ? older.payload.status : (undefined as never),
        },
        subject: `status:acme/infra:${'b'.repeat(40)}`,
      });
      await suite.asOwner(a.user.id, async (stores) => {
        await stores.outbox.add('vcs_feedback', older);
        await stores.outbox.add('vcs_feedback', other);
      });
      expect(await suite.asOwner(a.user.id, (stores) => stores.outbox.hasNewerVcsFeedback(older))).toBe(false);
      const newer = newVcsFeedbackItem(a.job, { created_at: at(10) });
      await suite.asOwner(a.user.id, (stores) => stores.outbox.add('vcs_feedback', newer));
      expect(await suite.asOwner(a.user.id, (stores) => stores.outbox.hasNewerVcsFeedback(older))).toBe(true);
      expect(await suite.asOwner(a.user.id, (stores) => stores.outbox.hasNewerVcsFeedback(newer))).toBe(false);
    });

    it('keeps one comment id per vine and pull request, replaced in place', async () => {
      const a = await newOwnerWithJob();
      const b = await newOwnerWithJob();
      const ref = {
        owner_id: a.user.id,
        vine_id: a.vine.id,
        provider: 'github' as const,
        repository: 'Acme/Infra',
        number: 7,
        comment_id: '100',
        updated_at: at(1),
      };
      const get = (owner: string, repository: string, number = 7) =>
        suite.asOwner(owner, (stores) =>
          stores.vcsFeedback.getComment(a.user.id, a.vine.id, 'github', repository, number),
        );
      expect(await get(a.user.id, 'Acme/Infra')).toBeNull();
      expect(await suite.asOwner(a.user.id, (stores) => stores.vcsFeedback.putComment(ref))).toEqual(ref);
      expect(await get(a.user.id, 'acme/infra')).toEqual(ref);
      expect(await get(a.user.id, 'Acme/Infra', 8)).toBeNull();
      expect(await get(b.user.id, 'Acme/Infra')).toBeNull();
      const replaced = { ...ref, comment_id: '205', updated_at: at(5) };
      await suite.asOwner(a.user.id, (stores) => stores.vcsFeedback.putComment(replaced));
      expect(await get(a.user.id, 'Acme/Infra')).toEqual(replaced);
    });
  });
}
