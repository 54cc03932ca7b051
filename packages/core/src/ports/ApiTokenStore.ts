import type { Page, PageRequest } from '../domain/pagination.js';
import type { ApiToken, User } from '../domain/records.js';

/**
 * API tokens (issue 12). A token's rows belong to its owner: its creator for a personal token, the
 * organization for an organization token.
 */
export interface ApiTokenStore {
  create(token: ApiToken): Promise<ApiToken>;
  /** System work (authentication): the token with this SHA-256, revoked or expired ones included. */
  findByHash(tokenHash: string): Promise<ApiToken | null>;
  /**
   * System work (authentication): `findByHash` and the person who made the token (`created_by`),
   * read together (one statement on SQL); `creator` is null when that person is gone.
   */
  findByHashWithCreator(tokenHash: string): Promise<{ token: ApiToken; creator: User | null } | null>;
  /** The token with this id among the rows the unit of work's scope sees, revoked ones included. */
  find(id: string): Promise<ApiToken | null>;
  /** The owner's tokens that are not revoked, newest first. */
  page(ownerId: string, request: PageRequest): Promise<Page<ApiToken>>;
  /** Sets `revoked_at` unless the token already is revoked; false when nothing changed. */
  revoke(ownerId: string, id: string, at: string): Promise<boolean>;
  /**
   * Records a use at `at` unless one at or after `notBefore` is recorded already, so a busy token
   * writes at most once per interval. Returns whether it wrote.
   */
  recordUse(id: string, at: string, notBefore: string): Promise<boolean>;
}
