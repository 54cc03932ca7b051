import type {
  AttributeChange,
  PlanChanges,
  PlannedOutputChange,
  PlannedResourceChange,
  PlanScalar,
  PlanValue,
} from '@trellis/core';
import {
  MAX_ATTRIBUTE_CHANGES,
  MAX_PLAN_CHANGE_OUTPUTS,
  MAX_PLAN_CHANGE_RESOURCES,
  MAX_PLAN_CHANGES_BYTES,
  MAX_PLAN_PATH_CHARS,
  MAX_PLAN_VALUE_CHARS,
  PLAN_CHANGES_FORMAT_VERSION,
} from '@trellis/core/agent';

/**
 * The plan's change document (issue 29) from `show -json <plan>`: each resource change (no-op
 * and read-only ones left out, as `resource_changes` of the results) with its attribute diff, and
 * each output change. The masking happens here, on the agent, before anything is sent:
 *
 * - a value the plan marks in `before_sensitive`/`after_sensitive` (a leaf, or a whole object or
 *   list: then its keys too) becomes `{sensitive: true}`; the value is never copied;
 * - a value marked in `after_unknown` becomes `{unknown: true}` (known after apply);
 * - a string that holds one of the job's secrets (a sensitive variable the engine did not mark,
 *   the agent's credentials) is masked too, as the log is: `isSecret` is the job's secret set.
 *
 * Bounded: at most `MAX_ATTRIBUTE_CHANGES` attributes a resource, strings cut at
 * `MAX_PLAN_VALUE_CHARS`, and resources then outputs taken in order while the document stays
 * under `MAX_PLAN_CHANGES_BYTES`; whatever is left out is counted and `truncated` says so.
 */
export interface PlanChangeOptions {
  /** Whether a string holds a secret of the job (masked like a sensitive value). */
  isSecret?: (text: string) => boolean;
  /** The document's size limit (tests use a small one). */
  maxBytes?: number;
}

type Sides = Map<string, Leaf>;
/** A flattened leaf: what is shown, and (never shown) the raw value to tell whether it changed. */
type Leaf = { shown: PlanValue; raw: unknown };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return (Array.isArray(value) && value.length > 0) || (isObject(value) && Object.keys(value).length > 0);
}

/** The mark of `key` under a sensitivity or unknown structure: `true` covers everything below. */
function markBelow(mark: unknown, key: string | number): unknown {
  if (mark === true) return true;
  if (Array.isArray(mark) && typeof key === 'number') return mark[key];
  if (isObject(mark)) return mark[String(key)];
  return undefined;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;

function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (IDENTIFIER.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${JSON.stringify(key)}]`;
}

function cut(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) : text;
}

class Flattener {
  truncated = false;

  constructor(private readonly isSecret: (text: string) => boolean) {}

  /** Every leaf of one side of a change, by path; masked where `sensitive` or `unknown` say so. */
  flatten(value: unknown, sensitive: unknown, unknown: unknown, root: string): Sides {
    const out: Sides = new Map();
    this.walk(value, sensitive, unknown, root, out);
    return out;
  }

  private walk(value: unknown, sensitive: unknown, unknown: unknown, path: string, out: Sides): void {
    // A sensitive mark over nothing (the `before` of a create, a value removed) hides no value.
    if (sensitive === true && ((value !== null && value !== undefined) || unknown === true)) {
      out.set(path, { shown: { sensitive: true }, raw: value });
      return;
    }
    if (sensitive === true) {
      if (value === null) out.set(path, { shown: { value: null }, raw: null });
      return;
    }
    if (unknown === true) {
      out.set(path, { shown: { unknown: true }, raw: undefined });
      return;
    }
    // Unknown parts of a value may be missing from it: walk the union of both structures.
    if (Array.isArray(value) || Array.isArray(unknown)) {
      const list = Array.isArray(value) ? value : [];
      const length = Math.max(list.length, Array.isArray(unknown) ? unknown.length : 0);
      if (length === 0 || (!Array.isArray(value) && value !== undefined && value !== null)) {
        if (value !== undefined) out.set(path, this.leaf(value));
        if (length === 0) return;
      }
      for (let index = 0; index < length; index += 1) {
        const item = list[index];
        const itemUnknown = markBelow(unknown, index);
        if (item === undefined && itemUnknown !== true && !isContainer(itemUnknown)) continue;
        this.walk(item, markBelow(sensitive, index), itemUnknown, childPath(path, index), out);
      }
      return;
    }
    if (isObject(value) || isObject(unknown)) {
      const object = isObject(value) ? value : {};
      const keys = new Set([...Object.keys(object), ...(isObject(unknown) ? Object.keys(unknown) : [])]);
      if (keys.size === 0 || (!isObject(value) && value !== undefined && value !== null)) {
        if (value !== undefined) out.set(path, this.leaf(value));
        if (keys.size === 0) return;
      }
      for (const key of keys) {
        const item = object[key];
        const itemUnknown = markBelow(unknown, key);
        if (item === undefined && itemUnknown !== true && !isContainer(itemUnknown)) continue;
        // A key holding a secret would show it in the path: the key is masked like a value.
        const shownKey = this.isSecret(key) ? '(sensitive key)' : key;
        this.walk(item, markBelow(sensitive, key), itemUnknown, childPath(path, shownKey), out);
      }
      return;
    }
    if (value === undefined) return;
    out.set(path, this.leaf(value));
  }

  private leaf(value: unknown): Leaf {
    if (typeof value === 'string') {
      if (this.isSecret(value)) return { shown: { sensitive: true }, raw: value };
      if (value.length > MAX_PLAN_VALUE_CHARS) {
        this.truncated = true;
        return { shown: { value: value.slice(0, MAX_PLAN_VALUE_CHARS), truncated: true }, raw: value };
      }
      return { shown: { value }, raw: value };
    }
    if (typeof value === 'number' || typeof value === 'boolean' || value === null) {
      return { shown: { value }, raw: value };
    }
    // Only empty lists and objects reach here as leaves.
    return { shown: { value: (Array.isArray(value) ? [] : {}) as PlanScalar }, raw: value };
  }
}

function isNullish(leaf: Leaf | undefined): boolean {
  return leaf === undefined || ('value' in leaf.shown && leaf.shown.value === null);
}

function sameLeaf(before: Leaf, after: Leaf): boolean {
  if ('unknown' in after.shown) return false;
  if ('sensitive' in before.shown !== 'sensitive' in after.shown) return false;
  return JSON.stringify(before.raw) === JSON.stringify(after.raw);
}

/** `["tags","Name"]` → `tags.Name`, as attribute paths are written. */
function replacePath(steps: unknown): string | null {
  if (!Array.isArray(steps)) return null;
  let path = '';
  for (const step of steps) {
    if (typeof step !== 'string' && typeof step !== 'number') return null;
    path = childPath(path, step);
  }
  return path;
}

function forcesReplacement(path: string, replacePaths: string[]): boolean {
  return replacePaths.some(
    (replace) => path === replace || path.startsWith(`${replace}.`) || path.startsWith(`${replace}[`),
  );
}

interface Diff {
  attributes: AttributeChange[];
  omitted: number;
  unchanged: number;
}

/** The changed attribute paths of one change: leaves of both sides paired by path. */
function diffSides(
  flattener: Flattener,
  change: Record<string, unknown>,
  root: string,
  replacePaths: string[] = [],
): Diff {
  const before = flattener.flatten(change.before, change.before_sensitive, undefined, root);
  const after = flattener.flatten(change.after, change.after_sensitive, change.after_unknown, root);
  const attributes: AttributeChange[] = [];
  let omitted = 0;
  let unchanged = 0;
  for (const path of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(path);
    const will = after.get(path);
    // Null or absent on both sides is no attribute at all (the engine hides them too).
    if (isNullish(was) && isNullish(will)) continue;
    if (was && will && sameLeaf(was, will)) {
      unchanged += 1;
      continue;
    }
    if (attributes.length >= MAX_ATTRIBUTE_CHANGES) {
      omitted += 1;
      continue;
    }
    const entry: AttributeChange = { path: cut(path, MAX_PLAN_PATH_CHARS) };
    // A null side reads as absent: `null → "x"` is an attribute set, `"x" → null` one removed.
    if (was && !isNullish(was)) entry.before = was.shown;
    if (will && !isNullish(will)) entry.after = will.shown;
    if (forcesReplacement(path, replacePaths)) entry.forces_replacement = true;
    attributes.push(entry);
  }
  if (omitted > 0) flattener.truncated = true;
  return { attributes, omitted, unchanged };
}

function stringActions(value: unknown): string[] | null {
  return Array.isArray(value) && value.length > 0 && value.every((action) => typeof action === 'string')
    ? [...value]
    : null;
}

function changes(actions: string[]): boolean {
  return !actions.every((action) => action === 'no-op' || action === 'read');
}

function text(value: unknown, fallback = ''): string {
  return cut(typeof value === 'string' ? value : fallback, MAX_PLAN_PATH_CHARS);
}

/** The change document of a plan; see `PlanChangeOptions`. Never throws on a malformed plan. */
export function planChangeDocument(plan: unknown, options: PlanChangeOptions = {}): PlanChanges {
  const isSecret = options.isSecret ?? (() => false);
  const maxBytes = options.maxBytes ?? MAX_PLAN_CHANGES_BYTES;
  const flattener = new Flattener(isSecret);
  const document: PlanChanges = {
    format_version: PLAN_CHANGES_FORMAT_VERSION,
    resource_changes: [],
    resource_changes_omitted: 0,
    output_changes: [],
    output_changes_omitted: 0,
    truncated: false,
  };
  // The envelope and the counts, with room to spare.
  let size = Buffer.byteLength(JSON.stringify(document)) + 64;
  const fits = (entry: unknown): boolean => {
    const bytes = Buffer.byteLength(JSON.stringify(entry)) + 1;
    if (size + bytes > maxBytes) return false;
    size += bytes;
    return true;
  };

  const resources = isObject(plan) && Array.isArray(plan.resource_changes) ? plan.resource_changes : [];
  for (const entry of resources) {
    if (!isObject(entry) || typeof entry.address !== 'string' || !isObject(entry.change)) continue;
    const actions = stringActions(entry.change.actions);
    if (!actions || !changes(actions)) continue;
    if (document.resource_changes.length >= MAX_PLAN_CHANGE_RESOURCES) {
      document.resource_changes_omitted += 1;
      continue;
    }
    const replacePaths = Array.isArray(entry.change.replace_paths)
      ? entry.change.replace_paths.map(replacePath).filter((path): path is string => path !== null)
      : [];
    const diff = diffSides(flattener, entry.change, '', replacePaths);
    const moduleAddress = typeof entry.module_address === 'string' ? text(entry.module_address) : null;
    const change: PlannedResourceChange = {
      address: text(entry.address),
      module_address: moduleAddress,
      type: text(entry.type),
      name: text(entry.name),
      actions,
      ...(typeof entry.action_reason === 'string' ? { action_reason: cut(entry.action_reason, 128) } : {}),
      attributes: diff.attributes,
      attributes_omitted: diff.omitted,
      unchanged_attributes: diff.unchanged,
    };
    if (fits(change)) document.resource_changes.push(change);
    else document.resource_changes_omitted += 1;
  }

  const outputs = isObject(plan) && isObject(plan.output_changes) ? plan.output_changes : {};
  for (const [name, change] of Object.entries(outputs)) {
    if (!isObject(change)) continue;
    const actions = stringActions(change.actions);
    if (!actions || !changes(actions)) continue;
    if (document.output_changes.length >= MAX_PLAN_CHANGE_OUTPUTS) {
      document.output_changes_omitted += 1;
      continue;
    }
    const diff = diffSides(flattener, change, childPath('', name));
    const output: PlannedOutputChange = {
      name: text(name),
      actions,
      attributes: diff.attributes,
      attributes_omitted: diff.omitted,
    };
    if (fits(output)) document.output_changes.push(output);
    else document.output_changes_omitted += 1;
  }

  document.truncated =
    flattener.truncated || document.resource_changes_omitted > 0 || document.output_changes_omitted > 0;
  return document;
}
