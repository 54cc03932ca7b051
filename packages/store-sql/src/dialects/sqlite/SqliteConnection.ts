import type { Row } from '../../rows.js';

/** The part of a better-sqlite3 `Database` used here directly (the rest goes through knex). */
export interface SqliteConnection {
  exec(sql: string): unknown;
  prepare(sql: string): SqliteStatement;
  pragma(sql: string): unknown;
  close(): unknown;
  readonly inTransaction: boolean;
}

/** A better-sqlite3 prepared statement. */
export interface SqliteStatement {
  readonly reader: boolean;
  all(bindings: readonly unknown[]): Row[];
  run(bindings: readonly unknown[]): unknown;
}

/**
 * The process's one connection to a database file, as knex's public `connectionPool` option takes
 * a pool (tarn's interface): knex's own queries (migrations, `ping`) borrow the connection the
 * dialect opened, instead of knex opening one of its own. Every use, the dialect's and knex's, runs
 * under the dialect's mutex, so lending the one connection to each borrower is safe.
 */
export class SingleConnectionPool {
  private lent = 0;
  private current: SqliteConnection | undefined;
  private closed = false;

  /** `open` makes the connection, on first use (as knex's own pool did). */
  constructor(private readonly open: () => SqliteConnection) {}

  /** The connection, opened on first use; an error once `close()` was called. */
  connection(): SqliteConnection {
    if (this.closed) throw new Error('the SQLite database was closed');
    this.current ??= this.open();
    return this.current;
  }

  close(): void {
    this.closed = true;
    this.current?.close();
    this.current = undefined;
  }

  acquire(): { promise: Promise<SqliteConnection> } {
    try {
      const connection = this.connection();
      this.lent += 1;
      return { promise: Promise.resolve(connection) };
    } catch (error) {
      return { promise: Promise.reject(error) };
    }
  }

  release(_connection: SqliteConnection): boolean {
    this.lent = Math.max(0, this.lent - 1);
    return true;
  }

  numUsed(): number {
    return Math.min(1, this.lent);
  }

  numFree(): number {
    return 1 - this.numUsed();
  }

  numPendingAcquires(): number {
    return 0;
  }

  /** The dialect closes the connection itself. */
  async destroy(): Promise<void> {}
}
