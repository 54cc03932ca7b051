import { EXECUTION_MODES, type ExecutionMode } from '../domain/enums.js';
import { ConflictError, ValidationError } from '../domain/errors.js';
import { NAME_PATTERN, NAME_RULE } from '../domain/validation.js';
import type { AuditDetails } from '../domain/audit.js';
import type { StateLock, StateVersion, Vine, Vineyard, WorkspaceSettings } from '../domain/records.js';
import { parseTags } from '../domain/tags.js';
import { executionModeOfOperations, parseWorkspaceSettings } from './workspaceSettings.js';

/** A workspace as the protocol's answers need it: the vine and what its attributes are read from. */
export interface TfeWorkspace {
  vine: Vine;
  organization: string;
  vineyard: Vineyard | null;
  lock: StateLock | null;
  current: StateVersion | null;
  /** Its newest configuration version that is not provisional (issue 27), by record id; null: none. */
  currentConfigurationVersionId?: string | null;
}

/** The attributes of a workspace the protocol may set (create, update). */
export interface TfeWorkspaceInput {
  name?: unknown;
  tags?: unknown;
  terraform_version?: unknown;
  execution_mode?: unknown;
  /** The older way of saying the execution mode (`true`: remote); not with `execution_mode`. */
  operations?: unknown;
  project_id?: unknown;
  /** The other settings by their attribute names (`auto-apply`, `working-directory`, …). */
  settings?: Record<string, unknown>;
}

export interface ParsedWorkspaceInput {
  name?: string;
  tags?: string[];
  terraform_version?: string;
  execution_mode?: ExecutionMode;
  settings?: Partial<WorkspaceSettings>;
}

/**
 * The CLI sends its own version (`1.12.6`), a constraint (`~> 1.12`, `>= 1.6, < 2`), or
 * `latest`: a version starts with a digit (after an optional `v` or an operator).
 */
const VERSION =
  /^(latest|(?:(?:[~><=!]{1,2}\s*)?v?\d[A-Za-z0-9.+-]*)(?:\s*,\s*(?:[~><=!]{1,2}\s*)?v?\d[A-Za-z0-9.+-]*)*)$/;

export { parseTags };

/**
 * Reads what the protocol sets on a workspace. `agent` execution is Trellis's `remote` (its
 * agents are the organization's own); a version string is kept as sent, whatever it is, since
 * the CLI refuses to work with a workspace whose version it does not recognize as its own.
 */
export function parseWorkspaceInput(input: TfeWorkspaceInput): ParsedWorkspaceInput {
  const parsed: ParsedWorkspaceInput = {};
  if (input.name !== undefined && input.name !== null) {
    if (typeof input.name !== 'string' || !NAME_PATTERN.test(input.name)) {
      throw new ValidationError(`name ${NAME_RULE}`, [{ path: 'name', message: NAME_RULE }]);
    }
    parsed.name = input.name;
  }
  if (input.tags !== undefined && input.tags !== null) parsed.tags = parseTags(input.tags);
  if (input.terraform_version !== undefined && input.terraform_version !== null && input.terraform_version !== '') {
    if (
      typeof input.terraform_version !== 'string' ||
      input.terraform_version.length > 64 ||
      !VERSION.test(input.terraform_version)
    ) {
      throw new ValidationError('terraform-version must be a version, a constraint or latest', [
        { path: 'terraform-version', message: 'must be a version, a constraint or latest' },
      ]);
    }
    parsed.terraform_version = input.terraform_version;
  }
  const operationsMode = executionModeOfOperations(input.operations);
  if (operationsMode !== undefined && input.execution_mode !== undefined && input.execution_mode !== null) {
    throw new ValidationError('operations is deprecated and cannot be sent with execution-mode', [
      { path: 'operations', message: 'send execution-mode only' },
    ]);
  }
  if (operationsMode !== undefined) parsed.execution_mode = operationsMode;
  if (input.execution_mode !== undefined && input.execution_mode !== null) {
    const mode = input.execution_mode === 'agent' ? 'remote' : input.execution_mode;
    if (!(EXECUTION_MODES as readonly unknown[]).includes(mode)) {
      throw new ValidationError('execution-mode must be remote, local or agent', [
        { path: 'execution-mode', message: 'must be remote, local or agent' },
      ]);
    }
    parsed.execution_mode = mode as ExecutionMode;
  }
  if (input.settings) {
    const settings = parseWorkspaceSettings(input.settings);
    if (Object.keys(settings).length > 0) parsed.settings = settings;
  }
  return parsed;
}

/** The lock info of a lock taken through the protocol: who, for the engine's and people's eyes. */
export function isProtocolLockOf(lock: StateLock, userId: string): boolean {
  return lock.info.Operation === 'TerraformCloudLock' && lock.info.TrellisUserId === userId;
}

/** Whether a vine's source is the CLI's own (a workspace made through the protocol): no files here. */
export function hasCliSource(vine: Pick<Vine, 'source'>): boolean {
  return vine.source.type === 'inline' && Object.keys(vine.source.files).length === 0;
}

/** An audit entry's details are flat: lists become comma-separated, absent fields are left out. */
export function auditDetails(details: object): AuditDetails {
  const flat: AuditDetails = {};
  for (const [key, value] of Object.entries(details)) {
    if (value === undefined) continue;
    flat[key] = Array.isArray(value) ? value.join(',') : (value as AuditDetails[string]);
  }
  return flat;
}

/**
 * A Trellis job needs a configuration to run: a workspace made by the stock CLI has none here
 * until it uploads one (remote runs, part 2). Planning its empty source against its state would
 * destroy what the state manages.
 */
export function requireRunnableSource(vine: Pick<Vine, 'source'>): void {
  if (hasCliSource(vine)) {
    throw new ConflictError(
      'configuration_missing',
      'this workspace has no configuration in Trellis (it runs from the CLI, which keeps its state here); run tofu there',
    );
  }
}
