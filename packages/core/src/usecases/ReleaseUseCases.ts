import { ValidationError } from '../domain/errors.js';
import { type PageQuery, type PageResult, pageRequest, pageResult } from '../domain/pagination.js';
import type { WorkerRelease } from '../domain/records.js';
import { isSemver } from '../domain/validation.js';
import { systemScope } from '../ports/UnitOfWork.js';
import { type CoreDeps, isoNow } from './CoreDeps.js';

const MAX_NOTES = 64 * 1024;

export class ReleaseUseCases {
  constructor(private readonly deps: CoreDeps) {}

  /** `POST /api/releases/worker` (CI only). A version is published once (`409 release_exists`). */
  async publish(input: { version: unknown; release_notes: unknown }): Promise<WorkerRelease> {
    if (!isSemver(input.version)) {
      throw new ValidationError('version must be a semantic version such as 1.4.0', [
        { path: 'version', message: 'must be a semantic version' },
      ]);
    }
    const notes = input.release_notes ?? '';
    if (typeof notes !== 'string' || notes.length > MAX_NOTES) {
      throw new ValidationError('release_notes must be a string of at most 64 KiB', [
        { path: 'release_notes', message: 'must be a string of at most 64 KiB' },
      ]);
    }
    const release = { version: input.version, release_notes: notes, published_at: isoNow(this.deps) };
    return this.deps.uow.run(systemScope, (stores) => stores.releases.create(release));
  }

  /** A page of releases, newest first. */
  async list(query: PageQuery = {}): Promise<PageResult<WorkerRelease>> {
    const request = pageRequest(query, this.deps.settings.pageLimits);
    const page = await this.deps.uow.read(systemScope, (stores) => stores.releases.page(request));
    return pageResult(page, request, (release) => release);
  }
}
