import { type HclBody, type HclExpression, type HclLiteral, parseHcl } from './hclBody.js';
import { HclSyntaxError } from './hclTokens.js';

/** One `variable` block of a module's root: what a caller passes. */
export interface ModuleInput {
  name: string;
  description: string | null;
  /** The type constraint as written (`list(string)`); null when the module declares none (any). */
  type: string | null;
  /** True when the variable has no `default`: a caller must set it. */
  required: boolean;
  /** The default as written (`"eu-west-1"`, `["a", "b"]`, `var.x`); null when required or sensitive. */
  default: string | null;
  /** The default's value when it is a literal (`null` is a literal too). */
  default_value?: HclLiteral;
  sensitive: boolean;
}

/** One `output` block of a module's root. */
export interface ModuleOutput {
  name: string;
  description: string | null;
  sensitive: boolean;
}

/** A module's documentation as the registry page shows it, read from its own files. */
export interface ModuleDescription {
  /** The root's README (`README.md`, else `README`), as Markdown text; null when there is none. */
  readme: string | null;
  inputs: ModuleInput[];
  outputs: ModuleOutput[];
  /** Files that are not HCL the reader can read, with why (the rest is still described). */
  problems: { path: string; message: string }[];
}

/** A file of the module's root directory (a path without a directory), as text. */
export interface ModuleFile {
  path: string;
  text: string;
}

/** The root files `describeModule` reads; everything else in a module is left unread. */
export function isDescribedFile(path: string): boolean {
  if (path.includes('/')) return false;
  return path.endsWith('.tf') || README_NAMES.includes(path.toLowerCase());
}

const README_NAMES = ['readme.md', 'readme'];

/** Largest file the reader reads (a generated `.tf` can be big; documentation need not be). */
export const MAX_DESCRIBED_FILE_BYTES = 1024 * 1024;

/**
 * What a module asks for and gives, from the `variable` and `output` blocks of its root `*.tf`
 * files (OpenTofu reads a module's root directory only; sub-modules under `modules/` are their
 * own), in name order, and its README. A file that is not HCL is named in `problems`, not fatal:
 * the page shows what the other files say.
 */
export function describeModule(files: readonly ModuleFile[]): ModuleDescription {
  const inputs: ModuleInput[] = [];
  const outputs: ModuleOutput[] = [];
  const problems: ModuleDescription['problems'] = [];
  const root = files.filter((file) => isDescribedFile(file.path));
  for (const file of [...root].sort((a, b) => a.path.localeCompare(b.path))) {
    if (!file.path.endsWith('.tf')) continue;
    let body: HclBody;
    try {
      body = parseHcl(file.text);
    } catch (error) {
      if (!(error instanceof HclSyntaxError)) throw error;
      problems.push({ path: file.path, message: error.message });
      continue;
    }
    for (const block of body.blocks) {
      const name = block.labels[0];
      if (block.labels.length !== 1 || name === undefined) continue;
      if (block.type === 'variable') inputs.push(inputOf(name, block.body));
      if (block.type === 'output') outputs.push(outputOf(name, block.body));
    }
  }
  const readme =
    README_NAMES.map((name) => root.find((file) => file.path.toLowerCase() === name)).find(Boolean)?.text ?? null;
  const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
  return { readme, inputs: inputs.sort(byName), outputs: outputs.sort(byName), problems };
}

function inputOf(name: string, body: HclBody): ModuleInput {
  const sensitive = body.attributes.sensitive?.literal === true;
  // A sensitive variable's default is not shown (it may be a real secret someone committed).
  const fallback = body.attributes.default;
  const shown = sensitive ? undefined : fallback;
  return {
    name,
    description: stringOf(body.attributes.description),
    type: body.attributes.type?.text ?? null,
    required: fallback === undefined,
    default: shown?.text ?? null,
    ...(shown !== undefined && 'literal' in shown ? { default_value: shown.literal as HclLiteral } : {}),
    sensitive,
  };
}

function outputOf(name: string, body: HclBody): ModuleOutput {
  return {
    name,
    description: stringOf(body.attributes.description),
    sensitive: body.attributes.sensitive?.literal === true,
  };
}

/** A description is a string literal; anything else is shown as written. */
function stringOf(expression: HclExpression | undefined): string | null {
  if (expression === undefined) return null;
  return typeof expression.literal === 'string' ? expression.literal : expression.text;
}
