import {
  ConflictError,
  type MirrorArchive,
  type MirrorArchiveAddress,
  type MirrorStore,
  type Page,
  type PageRequest,
  type ProviderAddress,
  providerSource,
} from '@trellis/core';
import { copy, pageNewestFirst } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryMirrorStore implements MirrorStore {
  constructor(private readonly tx: MemoryTransaction) {}

  private of(ownerId: string): MirrorArchive[] {
    if (!this.tx.sees(ownerId)) return [];
    return [...this.tx.state.mirrorArchives.values()].filter((archive) => archive.owner_id === ownerId);
  }

  async insert(archive: MirrorArchive): Promise<MirrorArchive> {
    if (!this.tx.sees(archive.owner_id)) throw new Error('permission denied: not this unit of work’s owner');
    if (await this.find(archive.owner_id, archive)) {
      throw new ConflictError(
        'mirror_archive_exists',
        'the provider mirror already holds an archive of that provider, version and platform',
      );
    }
    this.tx.state.mirrorArchives.set(archive.id, copy(archive));
    return copy(archive);
  }

  async find(ownerId: string, address: MirrorArchiveAddress): Promise<MirrorArchive | null> {
    const found = this.of(ownerId).find(
      (archive) =>
        providerSource(archive) === providerSource(address) &&
        archive.version === address.version &&
        archive.os === address.os &&
        archive.arch === address.arch,
    );
    return found ? copy(found) : null;
  }

  async get(ownerId: string, id: string): Promise<MirrorArchive | null> {
    const found = this.of(ownerId).find((archive) => archive.id === id);
    return found ? copy(found) : null;
  }

  async archives(ownerId: string, provider: ProviderAddress, version?: string): Promise<MirrorArchive[]> {
    return this.of(ownerId)
      .filter((archive) => providerSource(archive) === providerSource(provider))
      .filter((archive) => version === undefined || archive.version === version)
      .map(copy);
  }

  async providers(ownerId: string): Promise<ProviderAddress[]> {
    const sources = new Map<string, ProviderAddress>();
    for (const { hostname, namespace, type } of this.of(ownerId)) {
      sources.set(providerSource({ hostname, namespace, type }), { hostname, namespace, type });
    }
    const key = (address: ProviderAddress) => [address.hostname, address.namespace, address.type];
    return [...sources.values()].sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      const at = x.findIndex((part, index) => part !== y[index]);
      return at < 0 ? 0 : (x[at] as string) < (y[at] as string) ? -1 : 1;
    });
  }

  async page(ownerId: string, request: PageRequest): Promise<Page<MirrorArchive>> {
    if (!this.tx.sees(ownerId)) return { items: [], next: null };
    return pageNewestFirst(
      this.tx.state.mirrorArchives,
      (archive) => archive.owner_id === ownerId,
      (archive) => archive.created_at,
      request,
    );
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    if (!(await this.get(ownerId, id))) return false;
    return this.tx.state.mirrorArchives.delete(id);
  }

  async storageKeys(ownerId: string): Promise<string[]> {
    return this.of(ownerId).map((archive) => archive.storage_key);
  }
}
