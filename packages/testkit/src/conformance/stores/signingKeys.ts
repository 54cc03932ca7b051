import type { CloudIdentity, SigningKey } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, uuid } from './fixtures.js';
import { expectConflict, type OpenStoreHarness, rejectionOf, useStoreSuite } from './harness.js';

function newSigningKey(overrides: Partial<SigningKey> = {}): SigningKey {
  return {
    id: uuid(),
    algorithm: 'RS256',
    public_jwk: { kty: 'RSA', n: 'AQAB-modulus', e: 'AQAB' },
    private_key_sealed: 'v1.sealed.private.key',
    created_at: at(0),
    retired_at: null,
    published_until: null,
    ...overrides,
  };
}

/** The OIDC issuer's signing keys and the cloud identity kinds of issue 16. */
export function describeSigningKeyStoreConformance(open: OpenStoreHarness): void {
  describe('SigningKeyStore', () => {
    const suite = useStoreSuite(open);

    it('keeps a key and answers it as the current one', async () => {
      expect(await suite.asSystem((stores) => stores.signingKeys.current())).toBeNull();
      const key = newSigningKey({ algorithm: 'ES256', public_jwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' } });
      expect(await suite.asSystem((stores) => stores.signingKeys.create(key))).toEqual(key);
      expect(await suite.asSystem((stores) => stores.signingKeys.current())).toEqual(key);
    });

    it('retires the others, publishes them until their tokens expired, then deletes them', async () => {
      const old = newSigningKey({ created_at: at(0) });
      const next = newSigningKey({ created_at: at(10) });
      await suite.asSystem(async (stores) => {
        await stores.signingKeys.create(old);
        expect(await stores.signingKeys.retireOthers(next.id, at(10), at(100))).toBe(1);
        await stores.signingKeys.create(next);
      });
      const current = await suite.asSystem((stores) => stores.signingKeys.current());
      expect(current?.id).toBe(next.id);
      const published = await suite.asSystem((stores) => stores.signingKeys.listPublished(at(50)));
      expect(published.map((key) => key.id)).toEqual([next.id, old.id]);
      expect(published[1]).toMatchObject({ retired_at: at(10), published_until: at(100) });
      expect(await suite.asSystem((stores) => stores.signingKeys.deleteExpired(at(50)))).toBe(0);
      const later = await suite.asSystem((stores) => stores.signingKeys.listPublished(at(100)));
      expect(later.map((key) => key.id)).toEqual([next.id]);
      expect(await suite.asSystem((stores) => stores.signingKeys.deleteExpired(at(100)))).toBe(1);
      expect(await suite.asSystem((stores) => stores.signingKeys.deleteExpired(at(200)))).toBe(0);
    });

    it('lets one key sign at a time: a second current key is refused (signing_key_conflict)', async () => {
      const first = newSigningKey();
      await suite.asSystem((stores) => stores.signingKeys.create(first));
      await expectConflict(
        suite.asSystem((stores) => stores.signingKeys.create(newSigningKey({ created_at: at(5) }))),
        'signing_key_conflict',
      );
      expect(await suite.asSystem((stores) => stores.signingKeys.current())).toEqual(first);
    });

    it('is not for owner work', async () => {
      const owner = await suite.seedOwner();
      await suite.asSystem((stores) => stores.signingKeys.create(newSigningKey()));
      expect(await rejectionOf(suite.asOwner(owner.id, (stores) => stores.signingKeys.current()))).toBeInstanceOf(
        Error,
      );
    });
  });

  describe('CloudIdentityStore kinds', () => {
    const suite = useStoreSuite(open);

    it('keeps assume_role and every OIDC provider as they were given', async () => {
      const owner = await suite.seedOwner();
      const identities: CloudIdentity[] = [
        {
          id: uuid(),
          owner_id: owner.id,
          kind: 'assume_role',
          provider: 'aws',
          role_arn: 'arn:aws:iam::123456789012:role/a',
          external_id: uuid(),
        },
        {
          id: uuid(),
          owner_id: owner.id,
          kind: 'oidc',
          provider: 'aws',
          role_arn: 'arn:aws:iam::123456789012:role/b',
          audience: null,
          session_duration: 1800,
        },
        {
          id: uuid(),
          owner_id: owner.id,
          kind: 'oidc',
          provider: 'gcp',
          workload_identity_provider: 'projects/1/locations/global/workloadIdentityPools/p/providers/q',
          service_account_email: 'deployer@project.iam.gserviceaccount.com',
          audience: 'custom',
        },
        {
          id: uuid(),
          owner_id: owner.id,
          kind: 'oidc',
          provider: 'azure',
          tenant_id: '11111111-2222-4333-8444-555555555555',
          client_id: '66666666-7777-4888-8999-aaaaaaaaaaaa',
          audience: null,
        },
      ];
      for (const identity of identities) {
        expect(await suite.asOwner(owner.id, (stores) => stores.cloudIdentities.create(identity))).toEqual(identity);
        expect(await suite.asOwner(owner.id, (stores) => stores.cloudIdentities.get(owner.id, identity.id))).toEqual(
          identity,
        );
      }
    });
  });
}
