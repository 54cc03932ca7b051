import { ValidationError } from '../../domain/errors.js';
import type { RunOptions, Variables } from '../../domain/records.js';

/** `POST /runs` as go-tfe sends it: the attributes, and the two relationships' ids. */
export interface TfeRunInput {
  attributes: Record<string, unknown>;
  workspace_id: unknown;
  configuration_version_id: unknown;
}

export interface ParsedRunInput {
  message: string;
  is_destroy: boolean;
  /** Null: the workspace's `auto-apply` decides. */
  auto_apply: boolean | null;
  plan_only: boolean;
  save_plan: boolean;
  refresh: boolean;
  refresh_only: boolean;
  target_addrs: string[];
  replace_addrs: string[];
  /** The run's own variables, as the engine takes them (text, or an expression for a complex type). */
  variables: Variables;
}

const MAX_MESSAGE = 2000;
const MAX_ADDRS = 500;
const MAX_ADDR = 1024;
const MAX_VARIABLES = 500;
const MAX_VALUE = 256 * 1024;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

function flag(attributes: Record<string, unknown>, name: string, fallback: boolean): boolean {
  const value = attributes[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') throw invalid(name, 'must be a boolean');
  return value;
}

function addresses(attributes: Record<string, unknown>, name: string): string[] {
  const value = attributes[name];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.length > MAX_ADDRS) {
    throw invalid(name, `must be a list of at most ${MAX_ADDRS} resource addresses`);
  }
  for (const addr of value) {
    if (typeof addr !== 'string' || addr.trim() === '' || addr.length > MAX_ADDR || /[\r\n\0]/.test(addr)) {
      throw invalid(name, 'each must be a resource address on one line');
    }
  }
  return [...new Set(value as string[])];
}

/**
 * A run variable's value is an HCL expression (`"text"`, `10`, `true`, `["a"]`, `{ a = 1 }`):
 * a quoted string becomes its text and a number or bool its literal, which is how a vine keeps
 * values of primitive types; anything else stays an expression, which the engine takes for a
 * variable of a complex type.
 */
export function runVariableValue(expression: string): string {
  const trimmed = expression.trim();
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (typeof parsed === 'string') return parsed;
    if (typeof parsed === 'number' || typeof parsed === 'boolean') return trimmed;
  } catch {
    // Not JSON: an HCL expression, kept as written.
  }
  return expression;
}

function variables(value: unknown): Variables {
  if (value === undefined || value === null) return {};
  if (!Array.isArray(value) || value.length > MAX_VARIABLES) {
    throw invalid('variables', `must be a list of at most ${MAX_VARIABLES} {key, value}`);
  }
  const parsed: Variables = {};
  for (const item of value) {
    const { key, value: expression } = (item ?? {}) as { key?: unknown; value?: unknown };
    if (typeof key !== 'string' || !VARIABLE_NAME.test(key)) {
      throw invalid('variables', 'each key must be a Terraform variable name');
    }
    if (typeof expression !== 'string' || expression.length > MAX_VALUE) {
      throw invalid('variables', `each value must be an HCL expression of at most ${MAX_VALUE} characters`);
    }
    // A run's variables may be secrets (`-var password=…`): people see them as `***`.
    parsed[key] = { value: runVariableValue(expression), sensitive: true };
  }
  return parsed;
}

/** Reads `POST /runs`'s attributes; `422` for a wrong type or a combination the engine refuses. */
export function parseRunInput(attributes: Record<string, unknown>): ParsedRunInput {
  const message = attributes.message;
  if (message !== undefined && message !== null && typeof message !== 'string') {
    throw invalid('message', 'must be a string');
  }
  const text = typeof message === 'string' ? message.slice(0, MAX_MESSAGE) : '';
  const autoApply = attributes['auto-apply'];
  if (autoApply !== undefined && autoApply !== null && typeof autoApply !== 'boolean') {
    throw invalid('auto-apply', 'must be a boolean');
  }
  const parsed: ParsedRunInput = {
    message: text === '' ? 'Queued by the tofu CLI' : text,
    is_destroy: flag(attributes, 'is-destroy', false),
    auto_apply: typeof autoApply === 'boolean' ? autoApply : null,
    plan_only: flag(attributes, 'plan-only', false),
    save_plan: flag(attributes, 'save-plan', false),
    refresh: flag(attributes, 'refresh', true),
    refresh_only: flag(attributes, 'refresh-only', false),
    target_addrs: addresses(attributes, 'target-addrs'),
    replace_addrs: addresses(attributes, 'replace-addrs'),
    variables: variables(attributes.variables),
  };
  if (parsed.is_destroy && parsed.refresh_only) {
    throw invalid('refresh-only', 'a destroy run cannot be refresh-only');
  }
  if (parsed.refresh_only && !parsed.refresh) throw invalid('refresh', 'a refresh-only run refreshes');
  if (parsed.refresh_only && parsed.replace_addrs.length > 0) {
    throw invalid('replace-addrs', 'a refresh-only run replaces nothing');
  }
  return parsed;
}

/** The engine options of the run's plan (the job snapshot's `run_options`); undefined: a full plan. */
export function runOptionsOf(parsed: ParsedRunInput): RunOptions | undefined {
  const options: RunOptions = {};
  if (parsed.target_addrs.length > 0) options.target = parsed.target_addrs;
  if (parsed.replace_addrs.length > 0) options.replace = parsed.replace_addrs;
  if (parsed.refresh_only) options.refresh_only = true;
  if (!parsed.refresh) options.refresh = false;
  const names = Object.keys(parsed.variables).sort();
  if (names.length > 0) options.variables = names;
  return Object.keys(options).length > 0 ? options : undefined;
}

function invalid(path: string, message: string): ValidationError {
  return new ValidationError(`${path} ${message}`, [{ path, message }]);
}
