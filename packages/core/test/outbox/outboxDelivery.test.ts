/**
 * One outbox (issue 24): one round takes due rows of every kind, oldest due first and at most
 * `batchSize`, and hands each to its kind's deliverer (a kind's rows in written order, the kinds
 * side by side); a claimed row is leased; the scheduled task logs what became of git provider
 * feedback.
 */
import {
  DEFAULT_OUTBOX_SETTINGS,
  type NotificationDelivery,
  type OutboxDeliverer,
  OutboxUseCases,
  outboxDeliveryTask,
  ownerScope,
  type VcsFeedbackItem,
} from '@trellis/core';
import { createTestCore } from '@trellis/testkit/memory';
import { describe, expect, it } from 'vitest';

const NOW = '2026-05-01T00:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(NOW) + seconds * 1000).toISOString();

async function setup() {
  const core = createTestCore({ now: NOW, settings: { outbox: { ...DEFAULT_OUTBOX_SETTINGS, batchSize: 2 } } });
  const owner = await core.useCases.auth.ensureUser({ email: 'ada@example.test' });
  const notificationId = crypto.randomUUID();
  await core.uow.run(ownerScope(owner.id), (stores) =>
    stores.notifications.create({
      id: notificationId,
      owner_id: owner.id,
      created_by: owner.id,
      org_id: null,
      name: 'ops',
      kind: 'webhook',
      url: 'https://hooks.example.com/trellis',
      events: ['job.failed'],
      vineyard_id: null,
      secret_sealed: null,
      created_at: NOW,
    }),
  );
  const delivery = (due: number): NotificationDelivery => ({
    id: crypto.randomUUID(),
    owner_id: owner.id,
    notification_id: notificationId,
    event: 'job.failed',
    payload: { event: 'job.failed' },
    status: 'pending',
    attempts: [],
    created_at: NOW,
    next_attempt_at: at(due),
    finished_at: null,
  });
  const feedback = (due: number): VcsFeedbackItem => ({
    id: crypto.randomUUID(),
    owner_id: owner.id,
    job_id: crypto.randomUUID(),
    vine_id: crypto.randomUUID(),
    provider: 'github',
    kind: 'comment',
    subject: 'comment:acme/infra#7',
    payload: { kind: 'comment', repository: 'acme/infra', number: 7, body: 'plan', job_url: 'https://t/jobs/1' },
    status: 'pending',
    attempts: [],
    created_at: NOW,
    next_attempt_at: at(due),
    finished_at: null,
  });
  /** Deliverers that record who they were handed, and mark each row delivered (or leave it, `skip`). */
  const handed: string[] = [];
  const skip = new Set<string>();
  const deliverer = <K extends 'notification' | 'vcs_feedback'>(kind: K): OutboxDeliverer<K> => ({
    async deliver(item) {
      handed.push(`${kind}:${item.id}`);
      if (skip.has(item.id)) return null;
      const done = { status: 'delivered' as const, next_attempt_at: NOW, finished_at: NOW };
      return core.uow.run(ownerScope(item.owner_id), (stores) =>
        stores.outbox.recordAttempt(kind, item.owner_id, item.id, null, done),
      );
    },
  });
  const outbox = new OutboxUseCases(core.deps, {
    notification: deliverer('notification'),
    vcs_feedback: deliverer('vcs_feedback'),
  });
  return { core, owner, delivery, feedback, outbox, handed, skip };
}

describe('the outbox', () => {
  it('hands each due row to its kind, oldest due first, at most a batch a round, in written order', async () => {
    const { core, owner, delivery, feedback, outbox, handed } = await setup();
    const rows = { a: delivery(0), b: feedback(-10), c: delivery(-5), d: feedback(60) };
    await core.uow.run(ownerScope(owner.id), async (stores) => {
      await stores.outbox.add('notification', rows.a);
      await stores.outbox.add('vcs_feedback', rows.b);
      await stores.outbox.add('notification', rows.c);
      await stores.outbox.add('vcs_feedback', rows.d);
    });

    const first = await outbox.deliverDue();
    expect(first.map((row) => [row.kind, row.claimed.id, row.recorded?.status])).toEqual([
      ['vcs_feedback', rows.b.id, 'delivered'],
      ['notification', rows.c.id, 'delivered'],
    ]);
    expect(await outbox.deliverDue(['vcs_feedback'])).toEqual([]);
    const second = await outbox.deliverDue();
    expect(second.map((row) => [row.kind, row.claimed.id])).toEqual([['notification', rows.a.id]]);
    expect(await outbox.deliverDue()).toEqual([]);
    core.clock.advance({ seconds: 60 });
    expect((await outbox.deliverDue(['vcs_feedback'])).map((row) => row.claimed.id)).toEqual([rows.d.id]);
    expect(handed.sort()).toEqual(
      [
        `vcs_feedback:${rows.b.id}`,
        `notification:${rows.c.id}`,
        `notification:${rows.a.id}`,
        `vcs_feedback:${rows.d.id}`,
      ].sort(),
    );
  });

  it("sends one kind's rows in written order, and the kinds side by side", async () => {
    const { core, owner, delivery, feedback, handed } = await setup();
    const first = feedback(-10);
    const second = { ...feedback(-20), subject: 'status:acme/infra:1' };
    const notified = delivery(-30);
    await core.uow.run(ownerScope(owner.id), async (stores) => {
      await stores.outbox.add('vcs_feedback', first);
      await stores.outbox.add('vcs_feedback', second);
      await stores.outbox.add('notification', notified);
    });
    // A notification receiver that has not answered yet holds up no feedback.
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const settings = { ...core.deps.settings, outbox: { ...core.deps.settings.outbox, batchSize: 10 } };
    const slow = new OutboxUseCases(
      { ...core.deps, settings },
      {
        notification: {
          async deliver(item) {
            handed.push(`notification:${item.id}`);
            await answered;
            return item;
          },
        },
        vcs_feedback: {
          async deliver(item) {
            handed.push(`vcs_feedback:${item.id}`);
            if (handed.length === 3) answer();
            return item;
          },
        },
      },
    );
    expect((await slow.deliverDue()).map((row) => row.claimed.id)).toEqual([first.id, second.id, notified.id]);
    expect(handed).toEqual([`notification:${notified.id}`, `vcs_feedback:${first.id}`, `vcs_feedback:${second.id}`]);
  });

  it('leases what it claims: a row left as it was is taken again only when the lease ends', async () => {
    const { core, owner, delivery, outbox, skip } = await setup();
    const row = delivery(0);
    skip.add(row.id);
    await core.uow.run(ownerScope(owner.id), (stores) => stores.outbox.add('notification', row));
    expect((await outbox.deliverDue()).map((each) => each.recorded)).toEqual([null]);
    core.clock.advance({ seconds: DEFAULT_OUTBOX_SETTINGS.leaseSeconds - 1 });
    expect(await outbox.deliverDue()).toEqual([]);
    core.clock.advance({ seconds: 1 });
    expect((await outbox.deliverDue()).map((each) => each.claimed.id)).toEqual([row.id]);
  });

  it('runs as one local task that logs what became of git provider feedback, never of notifications', async () => {
    const { delivery, feedback } = await setup();
    const lines: string[] = [];
    const log = {
      info: (fields: object, message: string) => lines.push(`info ${message} ${JSON.stringify(fields)}`),
      warn: (fields: object, message: string) => lines.push(`warn ${message} ${JSON.stringify(fields)}`),
      error: (fields: object, message: string) => lines.push(`error ${message} ${JSON.stringify(fields)}`),
    };
    const sent = feedback(0);
    const failed = {
      ...feedback(0),
      status: 'failed' as const,
      attempts: [{ at: NOW, error: 'provider_unavailable' }],
    };
    const notified = delivery(0);
    const task = outboxDeliveryTask(
      {
        deliverDue: async () => [
          { kind: 'vcs_feedback', claimed: sent, recorded: { ...sent, status: 'delivered' } },
          { kind: 'notification', claimed: notified, recorded: { ...notified, status: 'delivered' } },
          { kind: 'vcs_feedback', claimed: failed, recorded: failed },
          { kind: 'vcs_feedback', claimed: sent, recorded: null },
        ],
      },
      5,
      log,
    );
    expect([task.id, task.every, task.scope]).toEqual(['outbox-deliveries', 5, 'local']);
    await task.run(new AbortController().signal);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^info git provider feedback delivered .*"vcs_feedback":"[0-9a-f-]{36}"/);
    expect(lines[1]).toMatch(/^warn git provider feedback not delivered .*"error":"provider_unavailable"/);
  });
});
