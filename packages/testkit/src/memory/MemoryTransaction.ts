import { type Scope, visibleOwners } from '@trellis/core';
import type { MemoryState } from './MemoryState.js';

/** Counters that, like SQL sequences, never roll back: an id handed out stays used. */
export interface MemorySequences {
  nextLogId: number;
  nextStateVersionId: number;
}

/**
 * One unit of work's view of the database: the draft state it writes to, and its scope. Owner
 * scope behaves like Postgres row-level security: rows of other owners are invisible, and
 * writing one is an error (a bug in the caller, never a user mistake).
 */
export class MemoryTransaction {
  private open = true;

  constructor(
    private readonly draft: MemoryState,
    readonly scope: Scope,
    readonly sequences: MemorySequences,
  ) {}

  /** The draft state; throws once the unit of work has ended (a store leaked out of it). */
  get state(): MemoryState {
    if (!this.open) throw new Error('a store was used after its unit of work ended');
    return this.draft;
  }

  close(): void {
    this.open = false;
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** Whether a row owned by `ownerId` is visible in this scope. */
  sees(ownerId: string | null): boolean {
    const owners = visibleOwners(this.scope);
    return owners === null || (ownerId !== null && owners.includes(ownerId));
  }

  /**
   * The person whose own work this is (Postgres's `trellis_self()` of m010): the person of a
   * member scope, or the owner of an owner scope that acts itself; null otherwise.
   */
  get self(): string | null {
    if (this.scope.kind === 'member') return this.scope.userId;
    if (this.scope.kind !== 'owner') return null;
    const { ownerId, actorId } = this.scope;
    return actorId === undefined || actorId === ownerId ? ownerId : null;
  }

  /** Refuses a write of a row this scope may not see, as an RLS `WITH CHECK` policy would. */
  checkWrite(table: string, ownerId: string | null): void {
    if (!this.sees(ownerId)) {
      throw new Error(
        `row-level security: a unit of work of owner ${this.ownerLabel()} wrote a ${table} row of another owner`,
      );
    }
  }

  private ownerLabel(): string {
    return visibleOwners(this.scope)?.join('+') ?? 'system';
  }
}
