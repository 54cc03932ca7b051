import { classifyCommonFailure, type StoreFailure, uniqueKeyByColumns, uniqueKeyByConstraint } from '../../errors.js';

/** Another connection holds the lock we need; waiting and trying again may succeed. */
export function isSqliteBusy(error: unknown): boolean {
  const code = sqliteCode(error);
  return code !== null && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** The file cannot be opened, read or written: nothing the caller did, nothing a retry soon fixes. */
const UNAVAILABLE_PREFIXES = [
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
  'SQLITE_FULL',
  'SQLITE_READONLY',
  'SQLITE_CORRUPT',
  'SQLITE_NOTADB',
  'SQLITE_PERM',
  'SQLITE_AUTH',
  'SQLITE_NOMEM',
];

/** better-sqlite3's errors carry the extended result code (`SQLITE_CONSTRAINT_UNIQUE`). */
export function classifySqliteFailure(error: unknown): StoreFailure | null {
  const common = classifyCommonFailure(error);
  if (common) return common;
  const code = sqliteCode(error);
  if (code === null) {
    if (error instanceof TypeError && /database connection is not open/i.test(error.message)) {
      return { kind: 'unavailable', reason: 'the SQLite database is closed' };
    }
    return null;
  }
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    return { kind: 'unique', key: uniqueKeyNamedIn((error as Error).message) };
  }
  if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return { kind: 'foreign_key' };
  if (code.startsWith('SQLITE_CONSTRAINT')) {
    return { kind: 'integrity', constraint: code.replace(/^SQLITE_CONSTRAINT_?/, '').toLowerCase() || 'constraint' };
  }
  if (isSqliteBusy(error)) {
    return { kind: 'unavailable', reason: 'the SQLite database stayed locked by another process' };
  }
  if (UNAVAILABLE_PREFIXES.some((prefix) => code.startsWith(prefix))) {
    return { kind: 'unavailable', reason: `the SQLite database cannot be used (${code})` };
  }
  return null;
}

function sqliteCode(error: unknown): string | null {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : null;
}

/** SQLite names the key by its columns: "UNIQUE constraint failed: vines.owner_id, vines.name". */
function uniqueKeyNamedIn(message: string) {
  // A unique index on an expression is named instead: "UNIQUE constraint failed: index 'orgs_name_unique'".
  const index = /UNIQUE constraint failed: index '([\w]+)'/.exec(message);
  if (index?.[1]) return uniqueKeyByConstraint(index[1]);
  const match = /UNIQUE constraint failed: ([\w.]+(?:, [\w.]+)*)/.exec(message);
  if (!match?.[1]) return undefined;
  const columns = match[1].split(', ').map((qualified) => qualified.split('.'));
  const table = columns[0]?.[0];
  if (table === undefined || columns.some((parts) => parts[0] !== table || parts.length !== 2)) return undefined;
  return uniqueKeyByColumns(
    table,
    columns.map((parts) => parts[1] as string),
  );
}
