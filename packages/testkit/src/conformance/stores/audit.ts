import type { AuditEntry, AuditFilter } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, newUser, uuid } from './fixtures.js';
import { type OpenStoreHarness, useStoreSuite } from './harness.js';

function newEntry(ownerId: string, overrides: Partial<AuditEntry> = {}): AuditEntry {
  return {
    id: uuid(),
    at: at(1),
    actor: { type: 'user', id: ownerId, email: 'ada@example.com' },
    action: 'vineyard.create',
    target: { type: 'vineyard', id: uuid() },
    owner_id: ownerId,
    request_id: 'req-1',
    ip: '127.0.0.1',
    details: { name: 'prod', count: 2, flag: true, none: null },
    ...overrides,
  };
}

export function describeAuditStoreConformance(open: OpenStoreHarness): void {
  describe('AuditStore', () => {
    const suite = useStoreSuite(open);
    const newOwner = () => suite.asSystem((stores) => stores.users.create(newUser()));

    it('appends entries and reads them back newest first, page by page, each owner its own', async () => {
      const user = await newOwner();
      const other = await newOwner();
      const entries = [
        newEntry(user.id, { at: at(1) }),
        newEntry(user.id, { at: at(3), actor: { type: 'system', id: null } }),
        newEntry(user.id, { at: at(2), request_id: null, ip: null, details: {} }),
        newEntry(user.id, { at: at(3), actor: { type: 'token', id: uuid(), email: 'ada@example.com' } }),
      ];
      await suite.asOwner(user.id, async (stores) => {
        for (const entry of entries) await stores.audit.append(entry);
      });
      await suite.asOwner(other.id, (stores) => stores.audit.append(newEntry(other.id)));
      const first = await suite.asOwner(user.id, (stores) => stores.audit.page(user.id, {}, { limit: 3 }));
      expect(first.items).toEqual([entries[3], entries[1], entries[2]]);
      const rest = await suite.asOwner(user.id, (stores) =>
        stores.audit.page(user.id, {}, { limit: 3, after: first.next ?? undefined }),
      );
      expect(rest).toEqual({ items: [entries[0]], next: null });
      // Another owner's log is not visible in this owner's scope.
      expect(await suite.asOwner(other.id, (stores) => stores.audit.page(user.id, {}, { limit: 10 }))).toEqual({
        items: [],
        next: null,
      });
    });

    it('filters by action, by actor id or email, and by target id', async () => {
      const user = await newOwner();
      const tokenId = uuid();
      const target = uuid();
      const a = newEntry(user.id, { at: at(1), action: 'job.create', target: { type: 'job', id: target } });
      const b = newEntry(user.id, {
        at: at(2),
        action: 'job.cancel',
        target: { type: 'job', id: target },
        actor: { type: 'token', id: tokenId, email: 'bot@example.com' },
      });
      const c = newEntry(user.id, { at: at(3) });
      await suite.asOwner(user.id, async (stores) => {
        for (const entry of [a, b, c]) await stores.audit.append(entry);
      });
      const page = (filter: AuditFilter) =>
        suite.asOwner(user.id, async (stores) => (await stores.audit.page(user.id, filter, { limit: 10 })).items);
      expect(await page({ action: 'job.cancel' })).toEqual([b]);
      expect(await page({ target_id: target })).toEqual([b, a]);
      expect(await page({ actor: tokenId })).toEqual([b]);
      expect(await page({ actor: 'ada@example.com' })).toEqual([c, a]);
      expect(await page({ actor: 'bot@example.com', action: 'job.create' })).toEqual([]);
    });

    it('an entry of a rolled-back unit of work is not kept', async () => {
      const user = await newOwner();
      await expect(
        suite.asOwner(user.id, async (stores) => {
          await stores.audit.append(newEntry(user.id));
          throw new Error('the change failed');
        }),
      ).rejects.toThrow('the change failed');
      expect(await suite.asOwner(user.id, (stores) => stores.audit.page(user.id, {}, { limit: 10 }))).toEqual({
        items: [],
        next: null,
      });
    });

    it('prunes entries older than a time, as system work', async () => {
      const user = await newOwner();
      const old = newEntry(user.id, { at: at(1) });
      const recent = newEntry(user.id, { at: at(10) });
      await suite.asOwner(user.id, async (stores) => {
        await stores.audit.append(old);
        await stores.audit.append(recent);
      });
      expect(await suite.asSystem((stores) => stores.audit.pruneOlderThan(at(5)))).toBe(1);
      expect(await suite.asOwner(user.id, (stores) => stores.audit.page(user.id, {}, { limit: 10 }))).toEqual({
        items: [recent],
        next: null,
      });
    });
  });
}
