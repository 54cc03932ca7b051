import { readFileSync } from 'node:fs';
import { UsageError } from 'clipanion';

export type VariableInput = Record<string, string | { value: string; sensitive: boolean }>;

/** `k=v` from the command line; the value may itself contain `=`. */
export function parseAssignment(text: string, flag: string): [string, string] {
  const at = text.indexOf('=');
  if (at <= 0) throw new UsageError(`${flag} ${text}: give a name, '=' and the value, as in ${flag} region=eu-west-1`);
  return [text.slice(0, at).trim(), text.slice(at + 1)];
}

/**
 * Variables from a file: a JSON object (`.json`, or content starting with `{`), or lines of
 * `name = "value"` / `NAME=value` (a simple `.tfvars` or `.env`), with `#` and `//` comments.
 * Non-string JSON values are passed as their JSON text, as OpenTofu reads `TF_VAR_` values.
 */
export function readVariablesFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new UsageError(`--var-file ${path}: cannot read the file`);
  }
  const variables: Record<string, string> = {};
  if (path.endsWith('.json') || text.trimStart().startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`--var-file ${path}: not valid JSON (${(error as Error).message})`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new UsageError(`--var-file ${path}: expected a JSON object of variables`);
    }
    for (const [name, value] of Object.entries(parsed)) {
      variables[name] = typeof value === 'string' ? value : JSON.stringify(value);
    }
    return variables;
  }
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('//')) return;
    const match = /^([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(.*)$/.exec(line);
    if (!match) throw new UsageError(`--var-file ${path}:${index + 1}: expected name = "value"`);
    variables[match[1] as string] = unquote(match[2] as string, `${path}:${index + 1}`);
  });
  return variables;
}

function unquote(value: string, where: string): string {
  if (value.startsWith('"')) {
    try {
      const parsed = JSON.parse(value);
      if (typeof parsed === 'string') return parsed;
    } catch {
      // reported below
    }
    throw new UsageError(`--var-file ${where}: unterminated or invalid quoted value`);
  }
  if (value.startsWith("'") && value.endsWith("'") && value.length >= 2) return value.slice(1, -1);
  return value;
}

/** Merges file variables, `-v` and `--sensitive-var` (later ones win) into the API's shape. */
export function collectVariables(options: {
  files: string[];
  plain: string[];
  sensitive: string[];
}): VariableInput | undefined {
  const variables: VariableInput = {};
  for (const file of options.files) Object.assign(variables, readVariablesFile(file));
  for (const text of options.plain) {
    const [name, value] = parseAssignment(text, '--var');
    variables[name] = value;
  }
  for (const text of options.sensitive) {
    const [name, value] = parseAssignment(text, '--sensitive-var');
    variables[name] = { value, sensitive: true };
  }
  return Object.keys(variables).length > 0 ? variables : undefined;
}
