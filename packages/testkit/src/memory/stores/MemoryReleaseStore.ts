import { ConflictError, type Page, type PageRequest, type ReleaseStore, type WorkerRelease } from '@trellis/core';
import { copy, newestFirst, pageNewestFirst } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

/** Releases belong to nobody: every scope sees them. */
export class MemoryReleaseStore implements ReleaseStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async create(release: WorkerRelease): Promise<WorkerRelease> {
    const { releases } = this.tx.state;
    if (releases.has(release.version)) {
      throw new ConflictError('release_exists', `version ${release.version} is already published`);
    }
    releases.set(release.version, copy(release));
    return copy(release);
  }

  async get(version: string): Promise<WorkerRelease | null> {
    const release = this.tx.state.releases.get(version);
    return release ? copy(release) : null;
  }

  async list(): Promise<WorkerRelease[]> {
    return newestFirst(this.tx.state.releases.values(), (release) => release.published_at).map(copy);
  }

  async page(request: PageRequest): Promise<Page<WorkerRelease>> {
    return pageNewestFirst(
      this.tx.state.releases,
      () => true,
      (release) => release.published_at,
      request,
    );
  }
}
