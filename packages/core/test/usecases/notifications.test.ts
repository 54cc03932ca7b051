import {
  enqueueNotification,
  InsufficientRoleError,
  NotFoundError,
  ownerScope,
  signBody,
  type UserActor,
  ValidationError,
} from '@trellis/core';
import {
  addAcceptedMember,
  createTestCore,
  FakeWebhookSender,
  seedRunningJob,
  seedVine,
  seedWorker,
  type TestCoreOptions,
  outboxRows,
} from '@trellis/testkit/memory';
import { describe, expect, it } from 'vitest';
import { expectFailure } from './helpers.js';

const HOOK = 'https://hooks.example.com/trellis';

async function setup(options: TestCoreOptions = {}) {
  const webhooks =
    (options.webhooks as FakeWebhookSender | undefined) ??
    new FakeWebhookSender({ 'internal.example.com': ['93.184.216.34', '10.1.2.3'] });
  const core = createTestCore({ now: '2026-05-01T00:00:00.000Z', ...options, webhooks });
  const user = async (email: string): Promise<UserActor> => {
    const created = await core.useCases.auth.ensureUser({ email });
    return { userId: created.id, email: created.email };
  };
  return { core, webhooks, alice: await user('alice@example.com'), bob: await user('bob@example.com') };
}

const deliveredState = (core: ReturnType<typeof createTestCore>) => outboxRows(core.uow.snapshot(), 'notification');

describe('notifications', () => {
  it('show a webhook secret once, keep it sealed, and list without it', async () => {
    const { core, alice } = await setup();
    const created = await core.useCases.notifications.create(alice, {
      name: 'ops',
      kind: 'webhook',
      url: HOOK,
      events: ['job.failed', 'job.failed', 'job.succeeded'],
    });
    expect(created.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(created.events).toEqual(['job.failed', 'job.succeeded']);
    const stored = core.uow.snapshot().notifications.get(created.id);
    expect(stored?.secret_sealed).not.toContain(created.secret);
    expect(JSON.stringify(core.uow.snapshot())).not.toContain(created.secret);
    const listed = await core.useCases.notifications.list(alice, {});
    expect(listed.items).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain('secret');
    const slack = await core.useCases.notifications.create(alice, {
      name: 'chat',
      kind: 'slack',
      url: HOOK,
      events: ['job.failed'],
    });
    expect(slack.secret).toBeNull();
  });

  it('refuse non-https URLs and hosts with any private address, unless private URLs are allowed', async () => {
    const { core, alice } = await setup();
    const create = (url: string) =>
      core.useCases.notifications.create(alice, { name: 'x', kind: 'webhook', url, events: ['job.failed'] });
    await expectFailure(create('http://hooks.example.com/'), ValidationError, 'notification_url_refused');
    await expectFailure(create('https://internal.example.com/'), ValidationError, 'notification_url_refused');
    await expectFailure(create('https://127.0.0.1/'), ValidationError, 'notification_url_refused');
    await expectFailure(create('https://[::1]/'), ValidationError, 'notification_url_refused');
    await expectFailure(create('https://169.254.169.254/'), ValidationError, 'notification_url_refused');
    await expectFailure(create('https://user:pw@hooks.example.com/'), ValidationError, 'notification_url_refused');
    await expectFailure(create('not a url'), ValidationError, 'validation_failed');

    const open = await setup({
      settings: { notifications: { ...core.settings.notifications, allowPrivateUrls: true } },
    });
    const allowed = await open.core.useCases.notifications.create(open.alice, {
      name: 'x',
      kind: 'webhook',
      url: 'http://127.0.0.1:9/hook',
      events: ['job.failed'],
    });
    expect(allowed.url).toBe('http://127.0.0.1:9/hook');
  });

  it("write a delivery in the job's unit of work, signed, retried with backoff under the same id", async () => {
    const { core, webhooks, alice } = await setup();
    const notification = await core.useCases.notifications.create(alice, {
      name: 'ops',
      kind: 'webhook',
      url: HOOK,
      events: ['job.succeeded'],
    });
    const vine = await seedVine(core, alice);
    const worker = await seedWorker(core, alice, { heartbeat: true });
    const job = await seedRunningJob(core, alice, worker, vine);
    expect(deliveredState(core)).toHaveLength(0);
    await core.useCases.jobs.reportStatus(worker, job.id, { status: 'SUCCESS' });
    const [pending] = deliveredState(core);
    expect(pending?.status).toBe('pending');
    expect(pending?.payload).toMatchObject({
      event: 'job.succeeded',
      job: { id: job.id, status: 'SUCCESS' },
      vine: { id: vine.id, name: vine.name },
      vineyard: { id: vine.vineyard_id },
      url: `http://localhost:3000/jobs/${job.id}`,
    });

    webhooks.answer(
      { kind: 'answered', status: 503, excerpt: 'busy' },
      { kind: 'failed', error: 'no answer within 10000 ms' },
    );
    expect(await core.useCases.notifications.deliverDue()).toBe(1);
    expect(await core.useCases.notifications.deliverDue()).toBe(0); // backoff: not due yet
    core.clock.advance({ seconds: 10 });
    expect(await core.useCases.notifications.deliverDue()).toBe(1);
    core.clock.advance({ seconds: 20 });
    expect(await core.useCases.notifications.deliverDue()).toBe(1);
    expect(webhooks.requests).toHaveLength(3);
    const ids = new Set(webhooks.requests.map((request) => request.headers['x-trellis-delivery']));
    expect(ids).toEqual(new Set([pending?.id]));
    const [first] = webhooks.requests;
    expect(first?.headers['x-trellis-event']).toBe('job.succeeded');
    expect(first?.headers['x-trellis-signature']).toBe(
      `sha256=${signBody(notification.secret as string, first?.body ?? '')}`,
    );
    const page = await core.useCases.notifications.deliveries(alice, notification.id, {});
    expect(page.items[0]?.status).toBe('delivered');
    expect(page.items[0]?.attempts.map((attempt) => attempt.status_code)).toEqual([503, null, 200]);
  });

  it('give up on a 4xx at once, and on retryable failures after 24 hours', async () => {
    const { core, webhooks, alice } = await setup();
    const notification = await core.useCases.notifications.create(alice, {
      name: 'ops',
      kind: 'webhook',
      url: HOOK,
      events: ['job.failed'],
    });
    webhooks.answer({ kind: 'answered', status: 404, excerpt: 'no' });
    const test = await core.useCases.notifications.test(alice, notification.id);
    expect(test.status).toBe('failed');
    expect(test.attempts).toHaveLength(1);

    for (let i = 0; i < 100; i++) webhooks.answer({ kind: 'answered', status: 500, excerpt: 'down' });
    const retried = await core.useCases.notifications.test(alice, notification.id);
    expect(retried.status).toBe('pending');
    let rounds = 0;
    for (;;) {
      const [current] = deliveredState(core).filter((delivery) => delivery.id === retried.id);
      if (current?.status !== 'pending') break;
      core.clock.set(current.next_attempt_at);
      await core.useCases.notifications.deliverDue();
      rounds += 1;
    }
    const [final] = deliveredState(core).filter((delivery) => delivery.id === retried.id);
    expect(final?.status).toBe('failed');
    expect(rounds).toBeGreaterThan(5);
    expect(Date.parse(final?.finished_at as string) - Date.parse(retried.created_at)).toBeLessThanOrEqual(24 * 3600e3);
  });

  it('fail a delivery whose secret cannot be opened, without sending it', async () => {
    const { core, webhooks, alice } = await setup();
    const notification = await core.useCases.notifications.create(alice, {
      name: 'ops',
      kind: 'webhook',
      url: HOOK,
      events: ['job.failed'],
    });
    const other = await core.useCases.notifications.create(alice, {
      name: 'other',
      kind: 'webhook',
      url: HOOK,
      events: ['job.failed'],
    });
    // A secret sealed for another notification does not open for this one.
    await core.uow.modify((state) => {
      const target = state.notifications.get(notification.id);
      const source = state.notifications.get(other.id);
      if (target && source) target.secret_sealed = source.secret_sealed;
    });
    const delivery = await core.useCases.notifications.test(alice, notification.id);
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts[0]?.error).toContain('signing secret');
    expect(webhooks.requests).toHaveLength(0);
  });

  it('send nothing for a change that rolls back', async () => {
    const { core, webhooks, alice } = await setup();
    await core.useCases.notifications.create(alice, {
      name: 'ops',
      kind: 'webhook',
      url: HOOK,
      events: ['job.failed'],
    });
    await expect(
      core.uow.run(ownerScope(alice.userId), async (stores) => {
        const written = await enqueueNotification(stores, core.deps, {
          event: 'job.failed',
          owner_id: alice.userId,
          job_id: null,
          vine_id: null,
          vineyard_id: null,
        });
        expect(written).toHaveLength(1);
        throw new Error('the change fails after the event was recorded');
      }),
    ).rejects.toThrow('the change fails');
    expect(deliveredState(core)).toHaveLength(0);
    expect(await core.useCases.notifications.deliverDue()).toBe(0);
    expect(webhooks.requests).toHaveLength(0);
  });

  it('match the vineyard filter and the events, and record cancellations', async () => {
    const { core, alice } = await setup();
    const vine = await seedVine(core, alice);
    const other = await seedVine(core, alice);
    await core.useCases.notifications.create(alice, {
      name: 'one-vineyard',
      kind: 'slack',
      url: HOOK,
      events: ['job.cancelled'],
      vineyard_id: vine.vineyard_id,
    });
    const job = await core.useCases.jobs.create(alice, { job_type: 'PLAN', configuration_id: vine.id });
    const elsewhere = await core.useCases.jobs.create(alice, { job_type: 'PLAN', configuration_id: other.id });
    await core.useCases.jobs.cancel(alice, job.id);
    await core.useCases.jobs.cancel(alice, elsewhere.id);
    const deliveries = deliveredState(core);
    expect(deliveries.map((delivery) => (delivery.payload.job as { id: string }).id)).toEqual([job.id]);
  });

  it('record job.failed from the lost-agent sweep, and post Slack messages unsigned', async () => {
    const { core, webhooks, alice } = await setup();
    await core.useCases.notifications.create(alice, {
      name: 'chat',
      kind: 'slack',
      url: HOOK,
      events: ['job.failed'],
    });
    const vine = await seedVine(core, alice);
    const worker = await seedWorker(core, alice, { heartbeat: true });
    const job = await seedRunningJob(core, alice, worker, vine);
    core.clock.advance({ seconds: 121 });
    expect((await core.useCases.jobs.sweepLostJobs()).map((failed) => failed.id)).toEqual([job.id]);
    const [delivery] = deliveredState(core);
    expect(delivery?.event).toBe('job.failed');
    expect(await core.useCases.notifications.deliverDue()).toBe(1);
    const [request] = webhooks.requests;
    expect(request?.headers['x-trellis-signature']).toBeUndefined();
    const message = JSON.parse(request?.body ?? '{}') as { text: string; blocks: unknown[] };
    expect(message.text).toContain('job.failed');
    expect(message.text).toContain(vine.name);
    expect(message.text).toContain(`/jobs/${job.id}`);
    expect(message.blocks).toHaveLength(1);
  });

  it("let only an organization's admins manage its notifications, and hide them from others", async () => {
    const { core, alice, bob } = await setup();
    const org = await core.useCases.orgs.create(alice, { name: 'acme' });
    await addAcceptedMember(core.useCases, alice, org.id, bob, 'operator');
    await expectFailure(
      core.useCases.notifications.create(bob, {
        name: 'x',
        kind: 'webhook',
        url: HOOK,
        events: ['job.failed'],
        org_id: org.id,
      }),
      InsufficientRoleError,
    );
    const created = await core.useCases.notifications.create(alice, {
      name: 'org-hook',
      kind: 'webhook',
      url: HOOK,
      events: ['job.failed'],
      org_id: org.id,
    });
    expect(created.org_id).toBe(org.id);
    const carol = await core.useCases.auth.ensureUser({ email: 'carol@example.com' });
    await expectFailure(
      core.useCases.notifications.get({ userId: carol.id, email: carol.email }, created.id),
      NotFoundError,
      'notification_not_found',
    );
    const orgList = await core.useCases.notifications.list(alice, { org_id: org.id });
    expect(orgList.items.map((item) => item.id)).toEqual([created.id]);
    const personal = await core.useCases.notifications.list(alice, { org_id: 'personal' });
    expect(personal.items).toHaveLength(0);
    expect((await core.useCases.notifications.get(bob, created.id)).id).toBe(created.id);
    await expectFailure(core.useCases.notifications.delete(bob, created.id), InsufficientRoleError);
    await core.useCases.notifications.delete(alice, created.id);
    await expectFailure(core.useCases.notifications.get(alice, created.id), NotFoundError, 'notification_not_found');
  });
});

describe('the audit log', () => {
  it('records creating and deleting a notification, never its URL or secret', async () => {
    const { core, alice } = await setup();
    const created = await core.useCases.notifications.create(alice, {
      name: 'ops',
      kind: 'webhook',
      url: HOOK,
      events: ['job.failed'],
    });
    await core.useCases.notifications.delete(alice, created.id);
    const entries = [...core.uow.snapshot().audit.values()].filter((entry) => entry.target.type === 'notification');
    expect(entries.map((entry) => [entry.action, entry.target.id, entry.actor.id])).toEqual([
      ['notification.create', created.id, alice.userId],
      ['notification.delete', created.id, alice.userId],
    ]);
    expect(entries[0]?.details).toEqual({ name: 'ops', kind: 'webhook', events: 'job.failed' });
    expect(JSON.stringify(entries)).not.toContain(created.secret as string);
    expect(JSON.stringify(entries)).not.toContain(HOOK);
  });
});
