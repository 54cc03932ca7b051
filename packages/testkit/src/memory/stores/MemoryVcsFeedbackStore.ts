import type { GitProvider, VcsCommentRef, VcsFeedbackStore } from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

function commentKey(vineId: string, provider: GitProvider, repository: string, number: number): string {
  return `${vineId}:${provider}:${repository.toLowerCase()}#${number}`;
}

export class MemoryVcsFeedbackStore implements VcsFeedbackStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async getComment(
    ownerId: string,
    vineId: string,
    provider: GitProvider,
    repository: string,
    number: number,
  ): Promise<VcsCommentRef | null> {
    const ref = this.tx.state.vcsComments.get(commentKey(vineId, provider, repository, number));
    return ref && ref.owner_id === ownerId && this.tx.sees(ownerId) ? copy(ref) : null;
  }

  async putComment(ref: VcsCommentRef): Promise<VcsCommentRef> {
    this.tx.checkWrite('vcs_comments', ref.owner_id);
    this.tx.state.vcsComments.set(commentKey(ref.vine_id, ref.provider, ref.repository, ref.number), copy(ref));
    return copy(ref);
  }
}
