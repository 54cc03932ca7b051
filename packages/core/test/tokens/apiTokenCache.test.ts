/**
 * API token authentications reused for a few seconds (issue 31: the stock CLI's polls on Postgres
 * cost a database read each for the token alone), and dropped at once when what a token acts as
 * changes: a revocation, a membership joined, changed or ended, an organization made or deleted.
 */
import { ApiTokenCache, UnauthorizedError, type UserActor } from '@trellis/core';
import { addAcceptedMember, createTestCore, type TestCore } from '@trellis/testkit/memory';
import { describe, expect, it } from 'vitest';
import { expectFailure } from '../usecases/helpers.js';

async function setup(apiTokenCacheSeconds = 5) {
  const core = createTestCore({ now: '2026-05-01T00:00:00.000Z', settings: { apiTokenCacheSeconds } });
  const user = async (email: string): Promise<UserActor> => {
    const created = await core.useCases.auth.ensureUser({ email });
    return { userId: created.id, email: created.email };
  };
  return { core, alice: await user('alice@example.com'), bob: await user('bob@example.com') };
}

/** Read-only units of work so far: each is a database round trip (the token's lookup is one). */
const reads = (core: TestCore) => core.uow.readCount;

describe('API token authentication cache', () => {
  it('reuses a verified token for the TTL without a read, then reads again', async () => {
    const { core, alice } = await setup();
    const { token } = await core.useCases.apiTokens.create(alice, { name: 'ci' });
    const first = await core.useCases.apiTokens.authenticate(token);
    const before = reads(core);
    expect(await core.useCases.apiTokens.authenticate(token)).toEqual(first);
    core.clock.advance({ seconds: 4 });
    expect(await core.useCases.apiTokens.authenticate(token)).toEqual(first);
    expect(reads(core)).toBe(before);
    core.clock.advance({ seconds: 1 });
    expect(await core.useCases.apiTokens.authenticate(token)).toEqual(first);
    expect(reads(core)).toBe(before + 1);
  });

  it('never keeps a failure: each unknown token is a read', async () => {
    const { core, alice } = await setup();
    const { token } = await core.useCases.apiTokens.create(alice, { name: 'ci' });
    await core.useCases.apiTokens.authenticate(token);
    const before = reads(core);
    const guess = `${token.slice(0, -4)}0000`;
    for (let i = 0; i < 3; i++) {
      await expectFailure(core.useCases.apiTokens.authenticate(guess), UnauthorizedError, 'invalid_token');
    }
    expect(reads(core)).toBe(before + 3);
  });

  it('refuses a revoked token at once, and tells the other replicas', async () => {
    const { core, alice } = await setup(60);
    const created = await core.useCases.apiTokens.create(alice, { name: 'ci' });
    await core.useCases.apiTokens.authenticate(created.token);
    await core.useCases.apiTokens.revoke(alice, created.id);
    await expectFailure(core.useCases.apiTokens.authenticate(created.token), UnauthorizedError, 'invalid_token');
    expect(core.events.ofType('api_credentials_changed')).toEqual([
      { type: 'api_credentials_changed', owner_id: alice.userId },
    ]);
  });

  it('drops what it holds when another replica announces a change', async () => {
    const { core, alice } = await setup(60);
    const { token } = await core.useCases.apiTokens.create(alice, { name: 'ci' });
    await core.useCases.apiTokens.authenticate(token);
    const before = reads(core);
    await core.events.publish({ type: 'api_credentials_changed', owner_id: crypto.randomUUID() });
    await core.useCases.apiTokens.authenticate(token);
    expect(reads(core)).toBe(before + 1);
  });

  it('acts with the memberships as they are now: an organization made, a role changed, a membership ended', async () => {
    const { core, alice, bob } = await setup(60);
    const personal = await core.useCases.apiTokens.create(alice, { name: 'laptop' });
    expect((await core.useCases.apiTokens.authenticate(personal.token)).memberships).toEqual([]);
    // An organization made with the person's session: their token acts in it at once.
    const org = await core.useCases.orgs.create(alice, { name: 'platform' });
    expect((await core.useCases.apiTokens.authenticate(personal.token)).memberships).toEqual([
      { org_id: org.id, role: 'owner' },
    ]);

    const memberId = await addAcceptedMember(core.useCases, alice, org.id, bob, 'admin');
    const bobsToken = await core.useCases.apiTokens.create(bob, { name: 'ci', org_id: org.id, role: 'admin' });
    expect((await core.useCases.apiTokens.authenticate(bobsToken.token)).memberships).toEqual([
      { org_id: org.id, role: 'admin' },
    ]);
    await core.useCases.orgs.setMemberRole(alice, org.id, memberId, { role: 'viewer' });
    expect((await core.useCases.apiTokens.authenticate(bobsToken.token)).memberships).toEqual([
      { org_id: org.id, role: 'viewer' },
    ]);
    await core.useCases.orgs.removeMember(alice, org.id, memberId);
    await expectFailure(core.useCases.apiTokens.authenticate(bobsToken.token), UnauthorizedError, 'invalid_token');
    // Each change was announced for the organization, so other replicas drop their copies too.
    expect(core.events.ofType('api_credentials_changed').map((event) => event.owner_id)).toEqual([
      org.id, // made
      org.id, // bob joined
      org.id, // bob's role
      org.id, // bob removed
    ]);
  });

  it('checks the expiry of a token it holds on every use', async () => {
    const { core, alice } = await setup(60);
    const { token } = await core.useCases.apiTokens.create(alice, { name: 'short', expires_in_days: 1 });
    core.clock.advance({ seconds: 86_399 });
    await core.useCases.apiTokens.authenticate(token);
    const before = reads(core);
    core.clock.advance({ seconds: 1 });
    await expectFailure(core.useCases.apiTokens.authenticate(token), UnauthorizedError, 'invalid_token');
    expect(reads(core)).toBe(before);
  });

  it('records the last use at most once a minute, also while the token is held', async () => {
    const { core, alice } = await setup(60);
    const created = await core.useCases.apiTokens.create(alice, { name: 'ci' });
    const lastUsed = async () => (await core.useCases.apiTokens.list(alice, {})).items[0]?.last_used_at;
    const writes = () => core.uow.stats.committed;
    await core.useCases.apiTokens.authenticate(created.token);
    expect(await lastUsed()).toBe('2026-05-01T00:00:00.000Z');
    // Read again 30 s on (another replica's change dropped it): held from then on, used at 0 s.
    core.clock.advance({ seconds: 30 });
    await core.events.publish({ type: 'api_credentials_changed', owner_id: alice.userId });
    await core.useCases.apiTokens.authenticate(created.token);
    const before = writes();
    core.clock.advance({ seconds: 31 });
    await core.useCases.apiTokens.authenticate(created.token);
    expect(await lastUsed()).toBe('2026-05-01T00:01:01.000Z');
    expect(writes()).toBe(before + 1);
    // The entry knows the use it wrote: the next ones within the minute write nothing.
    for (let i = 0; i < 3; i++) {
      core.clock.advance({ seconds: 5 });
      await core.useCases.apiTokens.authenticate(created.token);
    }
    expect(writes()).toBe(before + 1);
    expect(await lastUsed()).toBe('2026-05-01T00:01:01.000Z');
  });

  it('does not keep a read that a change overtook', async () => {
    const { core, alice } = await setup(60);
    const { token } = await core.useCases.apiTokens.create(alice, { name: 'ci' });
    // The event arrives while the read is in flight: the memberships it read may be stale.
    core.uow.wrapStores = (stores) => ({
      ...stores,
      orgs: {
        ...stores.orgs,
        membershipsOf: async (userId: string) => {
          const found = await stores.orgs.membershipsOf(userId);
          await core.events.publish({ type: 'api_credentials_changed', owner_id: crypto.randomUUID() });
          return found;
        },
      },
    });
    await core.useCases.apiTokens.authenticate(token);
    core.uow.wrapStores = undefined;
    const before = reads(core);
    await core.useCases.apiTokens.authenticate(token);
    await core.useCases.apiTokens.authenticate(token);
    expect(reads(core)).toBe(before + 1);
  });

  it('keeps nothing with a TTL of 0', async () => {
    const { core, alice } = await setup(0);
    const { token } = await core.useCases.apiTokens.create(alice, { name: 'ci' });
    await core.useCases.apiTokens.authenticate(token);
    const before = reads(core);
    await core.useCases.apiTokens.authenticate(token);
    expect(reads(core)).toBe(before + 1);
  });

  it('holds at most its maximum of tokens, dropping the least recently used', async () => {
    const { core, alice } = await setup();
    const cache = new ApiTokenCache(core.clock, 60, core.events, 2);
    const verified = (n: number) => ({
      record: {
        id: `t${n}`,
        owner_id: alice.userId,
        created_by: alice.userId,
        org_id: null,
        name: `t${n}`,
        role: null,
        token_hash: `hash-${n}`,
        created_at: '2026-05-01T00:00:00.000Z',
        expires_at: null,
        last_used_at: null,
        revoked_at: null,
      },
      user: { id: alice.userId, email: alice.email, created_at: '2026-05-01T00:00:00.000Z' },
      memberships: [],
    });
    for (const n of [1, 2]) cache.remember(verified(n), cache.ticket());
    expect(cache.lookup('hash-1')).toEqual(verified(1));
    cache.remember(verified(3), cache.ticket());
    expect(cache.size).toBe(2);
    expect(cache.lookup('hash-2')).toBeNull();
    expect(cache.lookup('hash-1')).toEqual(verified(1));
    expect(cache.lookup('hash-3')).toEqual(verified(3));
  });
});
