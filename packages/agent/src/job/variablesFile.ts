import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Variables } from '@trellis/core';

/** The types whose values the engine takes as literal text; every other type is an expression. */
const PRIMITIVE_TYPES = new Set(['string', 'number', 'bool']);

/**
 * The job's variables as files the engine reads with `-var-file` (mode 0600, in the job's
 * workspace, outside the source): never the command line or the environment, whose entries the
 * kernel caps (`spawn E2BIG`) and every child process inherits. Returns the files written.
 *
 * A value means what it meant as `TF_VAR_<name>`: text for a variable declared with a primitive
 * type (or none), an expression for one of a complex type (`list(...)`, `object({...})`, `any`).
 * Text and JSON expressions go to `trellis.tfvars.json`; other expressions (HCL such as
 * `{ a = "b" }`) go verbatim to `trellis.tfvars`.
 */
export function writeVariablesFiles(workspaceDir: string, moduleDir: string, variables: Variables): string[] {
  const entries = Object.entries(variables);
  if (entries.length === 0) return [];
  const complex = complexVariables(moduleDir);
  const json: Record<string, unknown> = {};
  const hcl: string[] = [];
  for (const [name, { value }] of entries) {
    if (!complex.has(name)) {
      json[name] = value;
      continue;
    }
    const parsed = parseJson(value);
    if (parsed.ok) json[name] = parsed.value;
    else hcl.push(`${name} = ${value}\n`);
  }
  const files: string[] = [];
  const write = (name: string, content: string) => {
    const path = join(workspaceDir, name);
    writeFileSync(path, content, { mode: 0o600 });
    files.push(path);
  };
  if (Object.keys(json).length > 0) write('trellis.tfvars.json', `${JSON.stringify(json, null, 2)}\n`);
  if (hcl.length > 0) write('trellis.tfvars', hcl.join(''));
  return files;
}

/** The root module's variables declared with a complex type, from its `.tf` and `.tf.json` files. */
export function complexVariables(moduleDir: string): Set<string> {
  const complex = new Set<string>();
  for (const file of readdirSync(moduleDir)) {
    const path = join(moduleDir, file);
    if (file.endsWith('.tf')) {
      for (const [name, type] of hclVariableTypes(readFileSync(path, 'utf8'))) {
        if (type !== null && !PRIMITIVE_TYPES.has(type)) complex.add(name);
      }
    } else if (file.endsWith('.tf.json')) {
      for (const [name, type] of jsonVariableTypes(readFileSync(path, 'utf8'))) {
        if (type !== null && !PRIMITIVE_TYPES.has(type)) complex.add(name);
      }
    }
  }
  return complex;
}

/** `variable "name" { type = list(string) ... }` → `[name, "list"]`; `null` without a type. */
function* hclVariableTypes(text: string): Generator<[string, string | null]> {
  const code = blankCommentsAndStrings(text);
  const opener = /\bvariable\s*"([^"]*)"\s*\{/g;
  for (let match = opener.exec(code); match !== null; match = opener.exec(code)) {
    const body = blockBody(code, match.index + match[0].length);
    // The attribute at the block's own level: nested braces (validation blocks) are blanked.
    const type = /(?:^|[\n;{])\s*type\s*=\s*([A-Za-z_][\w-]*)/.exec(topLevel(body));
    // The name from the text itself: its string was blanked in `code`.
    const name = /"([^"]*)"/.exec(text.slice(match.index, match.index + match[0].length))?.[1] ?? '';
    yield [name, type?.[1] ?? null];
  }
}

function* jsonVariableTypes(text: string): Generator<[string, string | null]> {
  const parsed = parseJson(text);
  if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null) return;
  const declared = (parsed.value as { variable?: unknown }).variable;
  const blocks = Array.isArray(declared) ? declared : [declared];
  for (const block of blocks) {
    if (typeof block !== 'object' || block === null) continue;
    for (const [name, body] of Object.entries(block)) {
      const type = (body as { type?: unknown } | null)?.type;
      yield [name, typeof type === 'string' ? (/^\s*([A-Za-z_][\w-]*)/.exec(type)?.[1] ?? null) : null];
    }
  }
}

/** Comments and the insides of quoted strings as spaces (same length), so braces in them are not counted. */
function blankCommentsAndStrings(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\/|(?:#|\/\/)[^\n]*|"(?:[^"\\\n]|\\.)*"/g, (token) =>
    token.startsWith('"') ? `"${' '.repeat(token.length - 2)}"` : ' '.repeat(token.length),
  );
}

/** The text from `start` to the brace that closes the block opened just before it. */
function blockBody(code: string, start: number): string {
  let depth = 1;
  for (let at = start; at < code.length; at++) {
    if (code[at] === '{') depth++;
    else if (code[at] === '}' && --depth === 0) return code.slice(start, at);
  }
  return code.slice(start);
}

/** The block's text with nested blocks and brackets blanked out. */
function topLevel(body: string): string {
  let depth = 0;
  let out = '';
  for (const char of body) {
    if (char === '{' || char === '(' || char === '[') depth++;
    out += depth === 0 ? char : ' ';
    if ((char === '}' || char === ')' || char === ']') && depth > 0) depth--;
  }
  return out;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}
