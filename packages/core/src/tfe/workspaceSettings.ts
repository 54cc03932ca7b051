import { ValidationError } from '../domain/errors.js';
import { DEFAULT_WORKSPACE_SETTINGS, type WorkspaceSettings } from '../domain/records.js';

/*
 * The settings a Terraform Cloud workspace carries beside its name, tags, version and execution
 * mode (issue 26): the stock CLI and go-tfe set them and read them back. Trellis keeps each as
 * sent (defaults: `DEFAULT_WORKSPACE_SETTINGS`); remote runs (part 2) act on `auto_apply`,
 * `working_directory`, `allow_destroy_plan` and `speculative_enabled`.
 */

/** The protocol's attribute names (kebab-case) of each setting. */
const ATTRIBUTES: Readonly<Record<keyof WorkspaceSettings, string>> = {
  description: 'description',
  auto_apply: 'auto-apply',
  auto_apply_run_trigger: 'auto-apply-run-trigger',
  allow_destroy_plan: 'allow-destroy-plan',
  assessments_enabled: 'assessments-enabled',
  file_triggers_enabled: 'file-triggers-enabled',
  queue_all_runs: 'queue-all-runs',
  speculative_enabled: 'speculative-enabled',
  structured_run_output_enabled: 'structured-run-output-enabled',
  global_remote_state: 'global-remote-state',
  working_directory: 'working-directory',
  trigger_prefixes: 'trigger-prefixes',
  trigger_patterns: 'trigger-patterns',
  auto_destroy_at: 'auto-destroy-at',
  source_name: 'source-name',
  source_url: 'source-url',
};

const BOOLEANS = [
  'auto_apply',
  'auto_apply_run_trigger',
  'allow_destroy_plan',
  'assessments_enabled',
  'file_triggers_enabled',
  'queue_all_runs',
  'speculative_enabled',
  'structured_run_output_enabled',
  'global_remote_state',
] as const satisfies readonly (keyof WorkspaceSettings)[];

const MAX_DESCRIPTION = 2000;
const MAX_PATHS = 100;
const MAX_PATH_LENGTH = 500;

/** A workspace's settings as stored (any subset, any release) read over the defaults. */
export function workspaceSettingsOf(stored: Partial<WorkspaceSettings> | null | undefined): WorkspaceSettings {
  return { ...DEFAULT_WORKSPACE_SETTINGS, ...(stored ?? {}) };
}

/** The settings as protocol attributes (`auto-apply`, `working-directory`, …). */
export function workspaceSettingAttributes(settings: WorkspaceSettings): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  for (const [key, attribute] of Object.entries(ATTRIBUTES)) {
    attributes[attribute] = settings[key as keyof WorkspaceSettings];
  }
  return attributes;
}

/**
 * Reads the settings a create or update sends, by their attribute names; absent ones are left
 * out (an update changes only what it names). A workspace runs from one directory, relative to
 * its configuration's root; trigger prefixes and patterns are two ways of saying the same thing,
 * and HCP Terraform refuses both at once.
 */
export function parseWorkspaceSettings(attributes: Record<string, unknown>): Partial<WorkspaceSettings> {
  const parsed: Partial<WorkspaceSettings> = {};
  for (const key of BOOLEANS) {
    const value = attributes[ATTRIBUTES[key]];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'boolean') throw invalid(ATTRIBUTES[key], 'must be true or false');
    parsed[key] = value;
  }
  const description = attributes.description;
  if (description !== undefined && description !== null) {
    if (typeof description !== 'string' || description.length > MAX_DESCRIPTION) {
      throw invalid('description', `must be text of at most ${MAX_DESCRIPTION} characters`);
    }
    parsed.description = description;
  }
  for (const key of ['source_name', 'source_url'] as const) {
    const value = attributes[ATTRIBUTES[key]];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || value.length > MAX_PATH_LENGTH) {
      throw invalid(ATTRIBUTES[key], `must be text of at most ${MAX_PATH_LENGTH} characters`);
    }
    parsed[key] = value;
  }
  const directory = attributes['working-directory'];
  if (directory !== undefined && directory !== null) parsed.working_directory = workingDirectory(directory);
  for (const key of ['trigger_prefixes', 'trigger_patterns'] as const) {
    const value = attributes[ATTRIBUTES[key]];
    if (value !== undefined && value !== null) parsed[key] = pathList(value, ATTRIBUTES[key]);
  }
  if ((parsed.trigger_prefixes?.length ?? 0) > 0 && (parsed.trigger_patterns?.length ?? 0) > 0) {
    throw invalid('trigger-patterns', 'cannot be set together with trigger-prefixes; use one of them');
  }
  const destroyAt = attributes['auto-destroy-at'];
  if (destroyAt !== undefined) {
    if (destroyAt !== null && (typeof destroyAt !== 'string' || Number.isNaN(Date.parse(destroyAt)))) {
      throw invalid('auto-destroy-at', 'must be an RFC 3339 time or null');
    }
    parsed.auto_destroy_at = destroyAt === null ? null : new Date(destroyAt as string).toISOString();
  }
  return parsed;
}

/** `operations` is the older way of saying the execution mode: true is remote, false is local. */
export function executionModeOfOperations(operations: unknown): 'remote' | 'local' | undefined {
  if (operations === undefined || operations === null) return undefined;
  if (typeof operations !== 'boolean') throw invalid('operations', 'must be true or false');
  return operations ? 'remote' : 'local';
}

function workingDirectory(value: unknown): string {
  if (typeof value !== 'string' || value.length > MAX_PATH_LENGTH) {
    throw invalid('working-directory', `must be a path of at most ${MAX_PATH_LENGTH} characters`);
  }
  const segments = value.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (value.startsWith('/') || segments.includes('..') || value.includes('\\') || value.includes('\0')) {
    throw invalid('working-directory', 'must be a relative path inside the configuration (no "..", no leading "/")');
  }
  return value;
}

function pathList(value: unknown, attribute: string): string[] {
  if (!Array.isArray(value) || value.length > MAX_PATHS) {
    throw invalid(attribute, `must be a list of at most ${MAX_PATHS} paths`);
  }
  return value.map((item) => {
    if (typeof item !== 'string' || item.length === 0 || item.length > MAX_PATH_LENGTH || item.includes('\0')) {
      throw invalid(attribute, `each entry must be a path of 1-${MAX_PATH_LENGTH} characters`);
    }
    return item;
  });
}

function invalid(attribute: string, message: string): ValidationError {
  return new ValidationError(`${attribute} ${message}`, [{ path: attribute, message }]);
}
