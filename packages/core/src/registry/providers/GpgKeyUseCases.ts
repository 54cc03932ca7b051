import type { UserActor } from '../../domain/actors.js';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import { recordAudit } from '../../usecases/audit.js';
import { type CoreDeps, isoNow } from '../../usecases/CoreDeps.js';
import { RegistryNamespaces } from '../namespaces.js';
import type { RegistryGpgKey } from './records.js';

/** An armored public key is a few kilobytes; more is not one key. */
export const MAX_GPG_KEY_BYTES = 64 * 1024;

/** A key as the API shows it. */
export interface GpgKeyView {
  namespace: string;
  key_id: string;
  ascii_armor: string;
  created_at: string;
  /** The person who added it. */
  created_by: string;
}

/**
 * A namespace's GPG public keys (issue 28): the signatures of its providers' `SHA256SUMS` must be
 * made by one of them, and the registry hands them to the CLI, which checks the signature again.
 * Listing needs `registry.read`; adding and deleting `registry.manage`, audited.
 */
export class GpgKeyUseCases {
  private readonly namespaces: RegistryNamespaces;

  constructor(private readonly deps: CoreDeps) {
    this.namespaces = new RegistryNamespaces(deps);
  }

  /** `POST /api/registry/gpg-keys/{namespace}`: the key id is read from the key itself. */
  async add(actor: UserActor, namespace: string, asciiArmor: unknown): Promise<GpgKeyView> {
    if (
      typeof asciiArmor !== 'string' ||
      asciiArmor.trim() === '' ||
      Buffer.byteLength(asciiArmor) > MAX_GPG_KEY_BYTES
    ) {
      throw new ValidationError('ascii_armor must be an ASCII-armored GPG public key', [
        { path: 'ascii_armor', message: `must be an armored public key of at most ${MAX_GPG_KEY_BYTES} bytes` },
      ]);
    }
    const { ownerId, scope } = await this.namespaces.resolve(actor, namespace, 'registry.manage');
    const info = await this.deps.pgp.readPublicKey(asciiArmor);
    const key = await this.deps.uow.run(scope, async (stores) => {
      const existing = await stores.registryProviders.listKeys(ownerId);
      if (existing.some((candidate) => candidate.key_id === info.key_id)) {
        throw new ConflictError('gpg_key_exists', `namespace ${namespace} already has key ${info.key_id}`);
      }
      const saved = await stores.registryProviders.addKey({
        id: this.deps.random.uuid(),
        owner_id: ownerId,
        key_id: info.key_id,
        ascii_armor: asciiArmor.trim(),
        created_by: actor.userId,
        created_at: isoNow(this.deps),
      });
      await recordAudit(stores, this.deps, actor, {
        action: 'gpg_key.add',
        target: { type: 'gpg_key', id: saved.id },
        owner_id: ownerId,
        details: { namespace, key_id: info.key_id, fingerprint: info.fingerprint },
      });
      return saved;
    });
    return keyView(namespace, key);
  }

  /** `GET /api/registry/gpg-keys/{namespace}`. */
  async list(actor: UserActor, namespace: string): Promise<GpgKeyView[]> {
    const { ownerId, scope } = await this.namespaces.resolve(actor, namespace, 'registry.read');
    const keys = await this.deps.uow.read(scope, (stores) => stores.registryProviders.listKeys(ownerId));
    return keys.map((key) => keyView(namespace, key));
  }

  /**
   * `DELETE /api/registry/gpg-keys/{namespace}/{key_id}`. Versions it signed stay published (the
   * CLI then finds no key for them: publish them again signed by another key).
   */
  async delete(actor: UserActor, namespace: string, keyIdInput: unknown): Promise<void> {
    const keyId = typeof keyIdInput === 'string' ? keyIdInput.toUpperCase() : '';
    if (!/^[0-9A-F]{16}$/.test(keyId)) {
      throw new ValidationError('key_id must be 16 hex digits', [{ path: 'key_id', message: 'must be 16 hex digits' }]);
    }
    const { ownerId, scope } = await this.namespaces.resolve(actor, namespace, 'registry.manage');
    await this.deps.uow.run(scope, async (stores) => {
      if (!(await stores.registryProviders.deleteKey(ownerId, keyId))) {
        throw new NotFoundError('gpg_key', 'gpg_key_not_found', `namespace ${namespace} has no key ${keyId}`);
      }
      await recordAudit(stores, this.deps, actor, {
        action: 'gpg_key.delete',
        target: { type: 'gpg_key', id: keyId },
        owner_id: ownerId,
        details: { namespace, key_id: keyId },
      });
    });
  }
}

function keyView(namespace: string, key: RegistryGpgKey): GpgKeyView {
  return {
    namespace,
    key_id: key.key_id,
    ascii_armor: key.ascii_armor,
    created_at: key.created_at,
    created_by: key.created_by,
  };
}
