import { EXECUTION_MODES, type ExecutionMode } from '../domain/enums.js';
import { type FieldIssue, fieldReader, ValidationError } from '../domain/errors.js';
import type { Engine, Variables, VineSource } from '../domain/records.js';
import { parseTags } from '../domain/tags.js';
import { requireName } from '../domain/validation.js';
import {
  type CreateVineInput,
  type ParsedVine,
  parseCloudIdentity,
  parseEngine,
  parseSource,
  parseVariables,
} from '../usecases/vineInput.js';

/**
 * The body of `PATCH /api/cli/configurations/{name}` beyond the settings (issue 25): each field
 * present replaces the vine's, through the same rules as at creation (`vineInput.ts`); variables
 * are changed one by one.
 */
export interface EditVineInput {
  name?: unknown;
  project_name?: unknown;
  source?: unknown;
  /** `{k: "v"}` or `{k: {value, sensitive?}}` sets `k`; `{k: null}` unsets it. */
  variables?: unknown;
  engine?: unknown;
  /** An existing identity's id, or null for none. */
  cloud_identity_id?: unknown;
  /** The settings of a new identity, or null for none. */
  cloud_identity?: unknown;
  /** `remote` (the agents run the stock CLI's plans and applies) or `local` (the CLI's machine does). */
  execution_mode?: unknown;
  /** All of the vine's tags (`domain/tags.ts`); [] removes them. */
  tags?: unknown;
}

/** One variable set by an edit; `sensitive` null keeps what the variable was (plain if new). */
export interface VariableChange {
  value: string;
  sensitive: boolean | null;
}

export interface ParsedVineEdit {
  name?: string;
  project_name?: string;
  source?: VineSource;
  /** Each name set to a change, or null to unset it. */
  variables?: Record<string, VariableChange | null>;
  engine?: Engine;
  /** Absent: unchanged; null: none. */
  cloud_identity?: ParsedVine['cloud_identity'];
  execution_mode?: ExecutionMode;
  tags?: string[];
}

export const EDIT_FIELDS = [
  'name',
  'project_name',
  'source',
  'variables',
  'engine',
  'cloud_identity_id',
  'cloud_identity',
  'execution_mode',
  'tags',
] as const;

/** Checks every field given and reports all failures at once, like `parseVineInput`. */
export function parseVineEdit(input: EditVineInput): ParsedVineEdit {
  const issues: FieldIssue[] = [];
  const field = fieldReader(issues);
  const edit: ParsedVineEdit = {};
  if (input.name !== undefined) edit.name = field('name', () => requireName(input.name, 'name'));
  if (input.project_name !== undefined) {
    edit.project_name = field('project_name', () => requireName(input.project_name, 'project_name'));
  }
  if (input.source !== undefined) edit.source = field('source', () => parseSource(input.source));
  if (input.variables !== undefined) edit.variables = field('variables', () => parseVariableChanges(input.variables));
  if (input.engine !== undefined) edit.engine = field('engine', () => parseEngine(input.engine));
  if (input.cloud_identity_id !== undefined || input.cloud_identity !== undefined) {
    const identity: Pick<CreateVineInput, 'cloud_identity_id' | 'cloud_identity'> = {
      cloud_identity_id: input.cloud_identity_id,
      cloud_identity: input.cloud_identity,
    };
    edit.cloud_identity = field('cloud_identity', () => parseCloudIdentity(identity));
  }
  if (input.execution_mode !== undefined) {
    edit.execution_mode = field('execution_mode', () => parseExecutionMode(input.execution_mode));
  }
  if (input.tags !== undefined) edit.tags = field('tags', () => parseTags(input.tags));
  if (issues.length > 0) throw new ValidationError('the change is invalid', issues);
  return edit;
}

/** `remote` or `local`; anything else is refused naming what was given. */
export function parseExecutionMode(value: unknown): ExecutionMode {
  if ((EXECUTION_MODES as readonly unknown[]).includes(value)) return value as ExecutionMode;
  const message = `must be ${EXECUTION_MODES.join(' or ')}, not ${JSON.stringify(value) ?? String(value)}`;
  throw new ValidationError(`execution_mode ${message}`, [{ path: 'execution_mode', message }]);
}

function parseVariableChanges(value: unknown): Record<string, VariableChange | null> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError('variables must be an object', [{ path: 'variables', message: 'must be an object' }]);
  }
  const changes: Record<string, VariableChange | null> = {};
  for (const [key, raw] of Object.entries(value)) {
    if (raw === null) {
      changes[key] = null;
      continue;
    }
    // The name, the shape and one value's size, as at creation.
    const parsed = parseVariables({ [key]: raw })[key] as Variables[string];
    const explicit = typeof raw === 'object' && typeof (raw as { sensitive?: unknown }).sensitive === 'boolean';
    changes[key] = { value: parsed.value, sensitive: explicit ? parsed.sensitive : null };
  }
  return changes;
}

/**
 * The vine's variables after `changes`: a value given without `sensitive` keeps the variable's
 * sensitivity (a sensitive value replaced stays sensitive). Unsetting a name the vine does not
 * have is a mistake worth saying. The whole is checked again (the size of all values together).
 */
export function applyVariableChanges(current: Variables, changes: Record<string, VariableChange | null>): Variables {
  const next: Variables = { ...current };
  const issues: FieldIssue[] = [];
  for (const [key, change] of Object.entries(changes)) {
    if (change === null) {
      if (!(key in next)) issues.push({ path: `variables.${key}`, message: 'is not set, so it cannot be unset' });
      delete next[key];
    } else {
      // A description (set through the Terraform Cloud protocol) stays with its variable.
      next[key] = {
        ...current[key],
        value: change.value,
        sensitive: change.sensitive ?? current[key]?.sensitive ?? false,
      };
    }
  }
  if (issues.length > 0) throw new ValidationError('the change is invalid', issues);
  const checked = parseVariables(next);
  for (const [key, variable] of Object.entries(next)) {
    if (variable.description !== undefined)
      checked[key] = { ...(checked[key] as Variables[string]), description: variable.description };
  }
  return checked;
}
