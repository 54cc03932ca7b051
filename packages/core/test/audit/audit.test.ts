import { InsufficientRoleError, NotFoundError, ValidationError } from '@trellis/core';
import { addAcceptedMember, createTestCore, seedUser, seedVine, seedVineyard } from '@trellis/testkit/memory';
import { describe, expect, it } from 'vitest';
import { expectFailure } from '../usecases/helpers.js';

describe('audit log', () => {
  it('an entry is written in the unit of work of its change: a failed append leaves no change', async () => {
    const core = createTestCore();
    const ada = await seedUser(core, { email: 'ada@example.com' });
    core.uow.wrapStores = (stores) => ({
      ...stores,
      audit: {
        ...stores.audit,
        append: async (entry) => {
          await stores.audit.append(entry);
          throw new Error('the audit log is full');
        },
      },
    });
    await expect(core.useCases.vineyards.create(ada, { name: 'prod' })).rejects.toThrow('the audit log is full');
    core.uow.wrapStores = undefined;
    expect((await core.useCases.vineyards.list(ada)).items).toEqual([]);
    expect((await core.useCases.audit.list(ada, {})).items).toEqual([]);
  });

  it('records the actor, the target, the request and the details of a change', async () => {
    const core = createTestCore();
    const ada = await seedUser(core, { email: 'ada@example.com' });
    const request = { id: 'req-42', ip: '198.51.100.4' };
    const vineyard = await core.useCases.vineyards.create({ ...ada, request }, { name: 'prod' });
    const [entry] = (await core.useCases.audit.list(ada, {})).items;
    expect(entry).toEqual({
      id: expect.any(String),
      at: core.clock.now().toISOString(),
      actor: { type: 'user', id: ada.userId, email: 'ada@example.com' },
      action: 'vineyard.create',
      target: { type: 'vineyard', id: vineyard.id },
      owner_id: ada.userId,
      request_id: 'req-42',
      ip: '198.51.100.4',
      details: { name: 'prod' },
    });
  });

  it("an organization's log is for its admins and owners; a viewer gets insufficient_role, a stranger 404", async () => {
    const core = createTestCore();
    const olive = await seedUser(core, { email: 'olive@example.com' });
    const adam = await seedUser(core, { email: 'adam@example.com' });
    const vera = await seedUser(core, { email: 'vera@example.com' });
    const nina = await seedUser(core, { email: 'nina@example.com' });
    const org = await core.useCases.orgs.create(olive, { name: 'platform' });
    await addAcceptedMember(core.useCases, olive, org.id, adam, 'admin');
    await addAcceptedMember(core.useCases, olive, org.id, vera, 'viewer');
    const actions = async (who: typeof olive) =>
      (await core.useCases.audit.list(who, { org_id: org.id })).items.map((entry) => entry.action);
    const invitedAndAccepted = ['member.accept', 'member.add', 'member.accept', 'member.add', 'org.create'];
    expect(await actions(olive)).toEqual(invitedAndAccepted);
    expect(await actions(adam)).toEqual(invitedAndAccepted);
    const refused = await expectFailure(actions(vera), InsufficientRoleError, 'insufficient_role');
    expect(refused).toMatchObject({ requiredRole: 'admin', role: 'viewer' });
    await expectFailure(actions(nina), NotFoundError, 'org_not_found');
    // The organization's entries are not in anyone's personal log.
    expect((await core.useCases.audit.list(olive, {})).items).toEqual([]);
    await expectFailure(core.useCases.audit.list(olive, { action: 'nope' }), ValidationError);
  });

  it('prunes entries past the retention, and keeps them all with 0', async () => {
    const core = createTestCore({ settings: { auditRetentionDays: 30 } });
    const ada = await seedUser(core);
    const vineyard = await seedVineyard(core, ada, 'old');
    core.clock.advance({ hours: 24 * 20 });
    await seedVine(core, ada, { vineyard_id: vineyard.id });
    core.clock.advance({ hours: 24 * 11 });
    expect(await core.useCases.audit.prune()).toBe(1);
    expect((await core.useCases.audit.list(ada, {})).items.map((entry) => entry.action)).toEqual(['vine.create']);
    const forever = createTestCore({ settings: { auditRetentionDays: 0 } });
    const bob = await seedUser(forever);
    await seedVineyard(forever, bob, 'kept');
    forever.clock.advance({ hours: 24 * 10_000 });
    expect(await forever.useCases.audit.prune()).toBe(0);
    expect((await forever.useCases.audit.list(bob, {})).items).toHaveLength(1);
  });
});
