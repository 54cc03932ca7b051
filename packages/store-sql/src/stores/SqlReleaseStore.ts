import type { Page, PageRequest, ReleaseStore, WorkerRelease } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { type Row, textOut, timeIn, timeOut } from '../rows.js';
import { keysetPage } from './keysetPage.js';

/** Releases belong to nobody; on Postgres only system work may publish one. */
export class SqlReleaseStore implements ReleaseStore {
  constructor(private readonly db: SqlSession) {}

  async create(release: WorkerRelease): Promise<WorkerRelease> {
    const [row] = await this.db.recoverable((db) =>
      db
        .insert('worker_releases', {
          version: release.version,
          release_notes: release.release_notes,
          published_at: timeIn(release.published_at),
        })
        .returning('*'),
    );
    return toRelease(row);
  }

  async get(version: string): Promise<WorkerRelease | null> {
    const row = await this.db.table('worker_releases').where({ version }).first();
    return row ? toRelease(row) : null;
  }

  async list(): Promise<WorkerRelease[]> {
    const rows: Row[] = await this.db.table('worker_releases').orderBy([
      { column: 'published_at', order: 'desc' },
      { column: 'seq', order: 'desc' },
    ]);
    return rows.map(toRelease);
  }

  async page(request: PageRequest): Promise<Page<WorkerRelease>> {
    return keysetPage(this.db.table('worker_releases'), 'published_at', request, toRelease);
  }
}

function toRelease(row: Row): WorkerRelease {
  return {
    version: textOut(row.version),
    release_notes: textOut(row.release_notes),
    published_at: timeOut(row.published_at),
  };
}
