import type { Setting, SettingsTable } from './Setting.js';
import { settingRows } from './Setting.js';
import { SERVER_SETTINGS } from './table.js';

/** The generated table sits between these lines of docs/configuration.md (`npm run docs:config`). */
export const REFERENCE_BEGIN =
  '<!-- settings:begin: written by `npm run docs:config` from packages/server/src/settings; edit the rows there -->';
export const REFERENCE_END = '<!-- settings:end -->';

function cell(markdown: string): string {
  return markdown.replace(/\|/g, '\\|').replace(/\n+/g, ' ');
}

function shownDefault(row: Setting<unknown>): string {
  if (row.shownDefault !== null) return row.shownDefault;
  const value = row.default;
  if (value === null || (Array.isArray(value) && value.length === 0)) return 'unset';
  return `\`${String(value)}\``;
}

function accepts(row: Setting<unknown>): string {
  return row.secret && !row.accepts.includes('secret') ? `${row.accepts} (a secret)` : row.accepts;
}

/** The description, and the former names still read (deprecated). */
function meaning(row: Setting<unknown>): string {
  if (row.deprecatedEnv.length === 0) return row.description;
  const names = row.deprecatedEnv.map((name) => `\`${name}\``).join(', ');
  return `${row.description}. Deprecated, still read when this is unset: ${names}`;
}

/** The reference of every variable, one line each, in the table's order. */
export function renderSettingsReference(table: SettingsTable = SERVER_SETTINGS): string {
  const lines = ['| variable | default | accepts | meaning |', '|---|---|---|---|'];
  for (const row of settingRows(table)) {
    lines.push(`| \`${row.env}\` | ${cell(shownDefault(row))} | ${cell(accepts(row))} | ${cell(meaning(row))} |`);
  }
  return lines.join('\n');
}

/** `doc` with the text between the markers replaced by the reference as the table says it now. */
export function withSettingsReference(doc: string, table: SettingsTable = SERVER_SETTINGS): string {
  const begin = doc.indexOf(REFERENCE_BEGIN);
  const end = doc.indexOf(REFERENCE_END);
  if (begin < 0 || end < begin) throw new Error(`the document has no ${REFERENCE_BEGIN} … ${REFERENCE_END} section`);
  return `${doc.slice(0, begin + REFERENCE_BEGIN.length)}\n${renderSettingsReference(table)}\n${doc.slice(end)}`;
}
