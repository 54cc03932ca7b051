/**
 * A notification's URL is a credential (a Slack incoming webhook's path is its secret): over HTTP on
 * SQLite and Postgres, with people signed in through the GitHub sign-in against a stand-in on
 * loopback, only those who manage the owner's notifications read it whole (issue 23); viewers,
 * operators and organization tokens of those roles see scheme and host.
 */
import { joinOrg } from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { type PeopleServer, startPeopleServer } from './support/people.js';

// A literal address: this machine resolves no names; the rule is the same for hooks.slack.com.
const SLACK = 'https://127.0.0.1:9/services/T0000000/B0000000/XXXXsecretXXXXXXXXXXXX';
const MASKED = 'https://127.0.0.1:9/…';
const SECRET_PART = 'XXXXsecretXXXXXXXXXXXX';

describeEachDialect('notification URLs by role', (dialect) => {
  let people: PeopleServer;

  beforeAll(async () => {
    people = await startPeopleServer(dialect, { env: { TRELLIS_NOTIFICATIONS_ALLOW_PRIVATE_URLS: 'true' } });
  }, 60_000);
  afterAll(() => people?.close());

  it('shows the whole URL to admins and owners, scheme and host to viewers and operators', async () => {
    const ada = await people.signIn('ada');
    const org = await ada.client.createOrg(`notify-${dialect}`);
    const created = await ada.client.createNotification({
      name: 'ops',
      kind: 'slack',
      url: SLACK,
      events: ['job.failed'],
      org_id: org.id,
    });
    expect(created).toMatchObject({ url: SLACK, url_masked: false });
    const roles = ['viewer', 'operator', 'admin'] as const;
    const seen: Record<string, unknown> = {};
    for (const role of roles) {
      const person = await people.signIn(`${role}-${dialect}`);
      await joinOrg(ada.client, person.client, org.id, person.email, role);
      const one = await person.client.getNotification(created.id);
      const listed = (await person.client.listNotifications({ orgId: org.id })).find((n) => n.id === created.id);
      expect(listed).toEqual(one);
      seen[role] = { url: one.url, url_masked: one.url_masked };
      if (role !== 'admin') {
        const raw = await fetch(`${people.web}/api/notifications/${created.id}`, {
          headers: { authorization: `Bearer ${person.accessToken}` },
        });
        expect(await raw.text()).not.toContain(SECRET_PART);
      }
    }
    expect(seen).toEqual({
      viewer: { url: MASKED, url_masked: true },
      operator: { url: MASKED, url_masked: true },
      admin: { url: SLACK, url_masked: false },
    });
    expect((await ada.client.getNotification(created.id)).url).toBe(SLACK);
    // Organization tokens: capped by their role like everything else.
    const viewerToken = (await ada.client.createToken({ name: 'read', org_id: org.id, role: 'viewer' })).token;
    const adminToken = (await ada.client.createToken({ name: 'manage', org_id: org.id, role: 'admin' })).token;
    expect((await people.withToken(viewerToken).getNotification(created.id)).url).toBe(MASKED);
    expect((await people.withToken(adminToken).getNotification(created.id)).url).toBe(SLACK);
    // A person's own notification is theirs in full.
    const own = await ada.client.createNotification({
      name: 'mine',
      kind: 'slack',
      url: SLACK,
      events: ['job.failed'],
    });
    expect((await ada.client.getNotification(own.id)).url).toBe(SLACK);
  });
});
