import type { Page, PageRequest } from '../domain/pagination.js';
import type { WorkerRelease } from '../domain/records.js';

export interface ReleaseStore {
  /** `ConflictError('release_exists')` when the version is already published. */
  create(release: WorkerRelease): Promise<WorkerRelease>;
  get(version: string): Promise<WorkerRelease | null>;
  /** Newest first. */
  list(): Promise<WorkerRelease[]>;
  /** One page, newest first (by `published_at`, then insertion). */
  page(request: PageRequest): Promise<Page<WorkerRelease>>;
}
