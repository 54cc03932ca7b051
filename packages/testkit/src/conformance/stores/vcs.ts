import type { VcsConnection } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, newUser, newVine, newVineyard, uuid } from './fixtures.js';
import { type OpenStoreHarness, useStoreSuite } from './harness.js';

export function newVcsConnection(
  ownerId: string,
  vineId: string,
  overrides: Partial<VcsConnection> = {},
): VcsConnection {
  return {
    vine_id: vineId,
    owner_id: ownerId,
    provider: 'github',
    repository: 'Acme/Infra',
    branch: 'main',
    paths: ['infra/**'],
    auto_deploy: false,
    pull_requests: true,
    fork_pull_requests: 'off',
    webhook_mode: 'auto',
    hook_id: '12345',
    webhook_secret_sealed: 'sealed:secret',
    connected_by: ownerId,
    created_at: at(1),
    updated_at: at(1),
    ...overrides,
  };
}

export function describeVcsConnectionStoreConformance(open: OpenStoreHarness): void {
  describe('VcsConnectionStore', () => {
    const suite = useStoreSuite(open);
    const newOwnerWithVine = () =>
      suite.asSystem(async (stores) => {
        const user = await stores.users.create(newUser());
        const vineyard = await stores.vineyards.create(newVineyard(user.id));
        const vine = await stores.vines.create(newVine(user.id, vineyard.id));
        return { user, vine };
      });

    it('puts, replaces, reads and deletes a vine connection, each owner seeing only its own', async () => {
      const a = await newOwnerWithVine();
      const b = await newOwnerWithVine();
      const connection = newVcsConnection(a.user.id, a.vine.id);
      expect(await suite.asOwner(a.user.id, (stores) => stores.vcs.put(connection))).toEqual(connection);
      expect(await suite.asOwner(a.user.id, (stores) => stores.vcs.get(a.user.id, a.vine.id))).toEqual(connection);
      expect(await suite.asOwner(b.user.id, (stores) => stores.vcs.get(a.user.id, a.vine.id))).toBeNull();

      const replaced = {
        ...connection,
        branch: 'release',
        paths: [],
        auto_deploy: true,
        webhook_mode: 'manual' as const,
        hook_id: null,
        created_at: at(9),
        updated_at: at(5),
      };
      const stored = await suite.asOwner(a.user.id, (stores) => stores.vcs.put(replaced));
      // The connection keeps the time it was first made.
      expect(stored).toEqual({ ...replaced, created_at: connection.created_at });

      expect(await suite.asOwner(b.user.id, (stores) => stores.vcs.delete(a.user.id, a.vine.id))).toBe(false);
      expect(await suite.asOwner(a.user.id, (stores) => stores.vcs.delete(a.user.id, a.vine.id))).toBe(true);
      expect(await suite.asOwner(a.user.id, (stores) => stores.vcs.get(a.user.id, a.vine.id))).toBeNull();
      expect(await suite.asOwner(a.user.id, (stores) => stores.vcs.delete(a.user.id, a.vine.id))).toBe(false);
    });

    it('finds a vine connection for a delivery, whoever owns it, to system work', async () => {
      const a = await newOwnerWithVine();
      const b = await newOwnerWithVine();
      const connection = newVcsConnection(a.user.id, a.vine.id, { fork_pull_requests: 'without_secrets' });
      await suite.asOwner(a.user.id, (stores) => stores.vcs.put(connection));
      expect(await suite.asSystem((stores) => stores.vcs.findForDelivery(a.vine.id))).toEqual(connection);
      expect(await suite.asSystem((stores) => stores.vcs.findForDelivery(b.vine.id))).toBeNull();
      expect(await suite.asSystem((stores) => stores.vcs.findForDelivery(uuid()))).toBeNull();
    });

    it("counts an owner's manual-webhook connections only", async () => {
      const a = await newOwnerWithVine();
      const b = await newOwnerWithVine();
      const second = await suite.asSystem((stores) => stores.vines.create(newVine(a.user.id, a.vine.vineyard_id)));
      const third = await suite.asSystem((stores) => stores.vines.create(newVine(a.user.id, a.vine.vineyard_id)));
      await suite.asOwner(a.user.id, async (stores) => {
        await stores.vcs.put(newVcsConnection(a.user.id, a.vine.id, { webhook_mode: 'manual', hook_id: null }));
        await stores.vcs.put(newVcsConnection(a.user.id, second.id, { webhook_mode: 'manual', hook_id: null }));
        await stores.vcs.put(newVcsConnection(a.user.id, third.id));
      });
      await suite.asOwner(b.user.id, (stores) =>
        stores.vcs.put(newVcsConnection(b.user.id, b.vine.id, { webhook_mode: 'manual', hook_id: null })),
      );
      expect(await suite.asOwner(a.user.id, (stores) => stores.vcs.countManual(a.user.id))).toBe(2);
      expect(await suite.asOwner(b.user.id, (stores) => stores.vcs.countManual(b.user.id))).toBe(1);
    });

    it('records a delivery id once per provider', async () => {
      const id = uuid();
      expect(await suite.asSystem((stores) => stores.vcs.recordDelivery('github', id, at(1)))).toBe(true);
      expect(await suite.asSystem((stores) => stores.vcs.recordDelivery('github', id, at(2)))).toBe(false);
      expect(await suite.asSystem((stores) => stores.vcs.recordDelivery('gitlab', id, at(2)))).toBe(true);
    });
  });
}
