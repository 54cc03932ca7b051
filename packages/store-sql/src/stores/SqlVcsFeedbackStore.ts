import { GIT_PROVIDERS, type GitProvider, isOneOf, type VcsCommentRef, type VcsFeedbackStore } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { type Row, textOut, timeIn, timeOut, uuidOut } from '../rows.js';

/** The comment id of each vine's pull requests (m019); the feedback itself is in the outbox (`SqlOutboxStore`). */
export class SqlVcsFeedbackStore implements VcsFeedbackStore {
  constructor(private readonly db: SqlSession) {}

  async getComment(
    ownerId: string,
    vineId: string,
    provider: GitProvider,
    repository: string,
    number: number,
  ): Promise<VcsCommentRef | null> {
    const row = await this.db
      .table('vcs_comments')
      .where({ owner_id: ownerId, vine_id: vineId, provider, repository_key: repository.toLowerCase(), number })
      .first();
    return row ? toComment(row) : null;
  }

  async putComment(ref: VcsCommentRef): Promise<VcsCommentRef> {
    const row = {
      vine_id: ref.vine_id,
      owner_id: ref.owner_id,
      provider: ref.provider,
      repository_key: ref.repository.toLowerCase(),
      repository: ref.repository,
      number: ref.number,
      comment_id: ref.comment_id,
      updated_at: timeIn(ref.updated_at),
    };
    const [stored] = await this.db
      .insert('vcs_comments', row)
      .onConflict(['vine_id', 'provider', 'repository_key', 'number'])
      .merge(['repository', 'comment_id', 'updated_at'])
      .returning('*');
    return toComment(stored);
  }
}

function provider(value: unknown, table: string): GitProvider {
  const text = textOut(value);
  if (!isOneOf(GIT_PROVIDERS, text)) throw new TypeError(`${table}.provider holds an unknown provider: ${text}`);
  return text;
}

function toComment(row: Row): VcsCommentRef {
  return {
    owner_id: uuidOut(row.owner_id),
    vine_id: uuidOut(row.vine_id),
    provider: provider(row.provider, 'vcs_comments'),
    repository: textOut(row.repository),
    number: Number(row.number),
    comment_id: textOut(row.comment_id),
    updated_at: timeOut(row.updated_at),
  };
}
