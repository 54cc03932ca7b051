/**
 * What makes a migration a contract step (TrellisMigration.contract): a statement that takes away
 * what a replica of the previous release still uses while both run on one database.
 */
export interface DestructiveStatement {
  rule: string;
  sql: string;
}

const RULES: ReadonlyArray<{ rule: string; test: (sql: string, created: ReadonlySet<string>) => boolean }> = [
  { rule: 'drops a table', test: (sql) => /^drop table\b/.test(sql) },
  { rule: 'drops a column', test: (sql) => /^alter table\b.*\bdrop column\b/.test(sql) },
  { rule: 'drops a view, function or type', test: (sql) => /^drop (materialized view|view|function|type)\b/.test(sql) },
  { rule: 'renames', test: (sql) => /^alter (table|view|type|function)\b.*\brename\b/.test(sql) },
  {
    rule: 'changes a type',
    test: (sql) => /^alter type\b/.test(sql) || /\balter column\s+\S+\s+(set data )?type\b/.test(sql),
  },
  {
    rule: 'makes an existing column NOT NULL without a default',
    test: (sql, created) => {
      const table = /^alter table (?:only )?(?:if exists )?("[^"]+"|\S+)/.exec(sql)?.[1]?.replaceAll('"', '');
      if (table === undefined || created.has(table)) return false;
      if (/\balter column\s+\S+\s+set not null\b/.test(sql)) return true;
      return /\badd column\b[^,]*\bnot null\b/.test(sql) && !/\bdefault\b/.test(sql);
    },
  },
];

/**
 * The destructive statements among `statements`, the SQL one migration sent, in order. Tables the
 * migration creates itself are new, so what it does to them takes nothing from an older release.
 */
export function destructiveStatements(statements: readonly string[]): DestructiveStatement[] {
  const created = new Set<string>();
  const found: DestructiveStatement[] = [];
  for (const statement of statements.flatMap(splitStatements)) {
    const sql = normalise(statement);
    const newTable = /^create table (?:if not exists )?("[^"]+"|\S+)/.exec(sql)?.[1];
    if (newTable !== undefined) created.add(newTable.replaceAll('"', ''));
    for (const { rule, test } of RULES) if (test(sql, created)) found.push({ rule, sql: statement.trim() });
  }
  return found;
}

/** Raw SQL may hold several statements; dollar-quoted bodies (functions) stay whole. */
function splitStatements(sql: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let dollar: string | null = null;
  for (let i = 0; i < sql.length; i++) {
    const tag = /^\$[a-z_]*\$/i.exec(sql.slice(i))?.[0];
    if (tag !== undefined) {
      if (dollar === null) dollar = tag;
      else if (dollar === tag) dollar = null;
      i += tag.length - 1;
    } else if (sql[i] === ';' && dollar === null) {
      parts.push(sql.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(sql.slice(start));
  return parts.filter((part) => normalise(part) !== '');
}

function normalise(sql: string): string {
  return sql
    .replace(/--[^\n]*/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}
