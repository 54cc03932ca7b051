/**
 * A plan's change document (issue 29, "review a plan"): what each resource and output of a PLAN
 * changes, attribute by attribute, as the agent derives it from the engine's `show -json` of the
 * plan. Sensitive values never leave the agent: a value the plan marks sensitive is a mask
 * (`{ sensitive: true }`), a value only known after apply is `{ unknown: true }`. The shape and its
 * limits live here so the agent that writes it, the control plane that checks and serves it, the
 * CLI and the web that show it read one thing.
 */

/** The document's format; a reader that meets a newer one says so rather than guessing. */
export const PLAN_CHANGES_FORMAT_VERSION = 1;

/** A document is at most this large, serialised (the agent leaves resources out past it). */
export const MAX_PLAN_CHANGES_BYTES = 1024 * 1024;
/** At most this many resources and outputs are listed; the rest are counted. */
export const MAX_PLAN_CHANGE_RESOURCES = 2000;
export const MAX_PLAN_CHANGE_OUTPUTS = 500;
/** At most this many changed attributes of one resource (or output) are listed; the rest are counted. */
export const MAX_ATTRIBUTE_CHANGES = 200;
/** A string value longer than this is cut (and flagged `truncated`). */
export const MAX_PLAN_VALUE_CHARS = 1024;
/** An attribute path, an address or a name longer than this is cut. */
export const MAX_PLAN_PATH_CHARS = 1024;

/** A leaf value of the plan: empty lists and objects are leaves too. */
export type PlanScalar = string | number | boolean | null | never[] | Record<string, never>;

/** One side of an attribute's change. */
export type PlanValue =
  | { value: PlanScalar; truncated?: true }
  /** Marked sensitive by the plan: the value stayed on the agent. */
  | { sensitive: true }
  /** Known only after apply. */
  | { unknown: true };

/**
 * One attribute path (`tags.Name`, `ingress[0].from_port`, `labels["app.kubernetes.io/name"]`)
 * that changes: `before` absent means it did not exist, `after` absent that it will not.
 */
export interface AttributeChange {
  path: string;
  before?: PlanValue;
  after?: PlanValue;
  /** The engine replaces the resource because of this attribute. */
  forces_replacement?: true;
}

export interface PlannedResourceChange {
  address: string;
  /** `module.net` (null: the root module). */
  module_address: string | null;
  type: string;
  name: string;
  /** The engine's actions: `["create"]`, `["update"]`, `["delete","create"]`, `["delete"]`, ... */
  actions: string[];
  /** Why the engine chose these actions (`replace_because_cannot_update`, ...), when it says. */
  action_reason?: string;
  /** The attributes that change (an update lists only those). */
  attributes: AttributeChange[];
  /** How many more changed attributes there were past `MAX_ATTRIBUTE_CHANGES`. */
  attributes_omitted: number;
  /** How many attributes an update leaves as they are (not listed). */
  unchanged_attributes: number;
}

export interface PlannedOutputChange {
  name: string;
  actions: string[];
  /** Paths start at the output's name (`endpoint`, `db.host`). */
  attributes: AttributeChange[];
  attributes_omitted: number;
}

export interface PlanChanges {
  format_version: typeof PLAN_CHANGES_FORMAT_VERSION;
  /** Each resource the plan changes (no-op and read-only ones left out), in the plan's order. */
  resource_changes: PlannedResourceChange[];
  /** How many more changed resources there were past the limits. */
  resource_changes_omitted: number;
  output_changes: PlannedOutputChange[];
  output_changes_omitted: number;
  /** Something was left out or cut: resources, outputs, attributes or long values. */
  truncated: boolean;
}

/** `GET /api/cli/jobs/{id}/plan/changes`: the document of a PLAN job. */
export type PlanChangesView = PlanChanges & { job_id: string };

/** What an entry's actions do, as a person reads them. */
export type ChangeKind = 'create' | 'update' | 'replace' | 'delete' | 'read' | 'no-op';

export function changeKind(actions: readonly string[]): ChangeKind {
  const creates = actions.includes('create');
  const deletes = actions.includes('delete');
  if (creates && deletes) return 'replace';
  if (creates) return 'create';
  if (deletes || actions.includes('forget')) return 'delete';
  if (actions.includes('update')) return 'update';
  if (actions.includes('read')) return 'read';
  return 'no-op';
}

/** The engine's marks: `+` create, `~` update, `-/+` replace (`+/-` when it creates first), `-` destroy. */
export function changeMark(actions: readonly string[]): string {
  const kind = changeKind(actions);
  switch (kind) {
    case 'create':
      return '+';
    case 'update':
      return '~';
    case 'replace':
      return actions.indexOf('create') < actions.indexOf('delete') ? '+/-' : '-/+';
    case 'delete':
      return '-';
    case 'read':
      return '<=';
    case 'no-op':
      return ' ';
    default: {
      const never: never = kind;
      return never;
    }
  }
}

/** `create` → "create", `replace` → "replace", ...: the word beside the mark. */
export const CHANGE_KIND_WORDS: Readonly<Record<ChangeKind, string>> = {
  create: 'create',
  update: 'update in place',
  replace: 'replace',
  delete: 'destroy',
  read: 'read',
  'no-op': 'no change',
};

/** One module of the change tree and the resources it changes directly. */
export interface ModuleChanges {
  /** Null: the root module. */
  module_address: string | null;
  /** 0 for the root module, 1 for `module.a`, 2 for `module.a.module.b`, ... */
  depth: number;
  resources: PlannedResourceChange[];
}

const MODULE_STEP = /module\.[^.[\s]+(?:\[(?:"(?:[^"\\]|\\.)*"|[^\]]*)\])?/g;

/** `module.a.module.b["x"]` → `["module.a", "module.a.module.b[\"x\"]"]`. */
export function moduleLineage(moduleAddress: string): string[] {
  const lineage: string[] = [];
  let at = '';
  for (const match of moduleAddress.matchAll(MODULE_STEP)) {
    at = at ? `${at}.${match[0]}` : match[0];
    lineage.push(at);
  }
  return lineage.length > 0 ? lineage : [moduleAddress];
}

/**
 * The change tree: the root module first, then each module after its parent (a parent with no
 * change of its own is listed too, so the tree has no gaps), resources in the plan's order.
 */
export function changesByModule(changes: readonly PlannedResourceChange[]): ModuleChanges[] {
  const modules = new Map<string, ModuleChanges>();
  const ensure = (address: string | null, depth: number): ModuleChanges => {
    const key = address ?? '';
    let found = modules.get(key);
    if (!found) {
      found = { module_address: address, depth, resources: [] };
      modules.set(key, found);
    }
    return found;
  };
  for (const change of changes) {
    if (change.module_address === null || change.module_address === '') {
      ensure(null, 0).resources.push(change);
      continue;
    }
    const lineage = moduleLineage(change.module_address);
    lineage.forEach((address, index) => {
      ensure(address, index + 1);
    });
    ensure(change.module_address, lineage.length).resources.push(change);
  }
  return [...modules.values()].sort((a, b) => {
    if (a.module_address === null) return -1;
    if (b.module_address === null) return 1;
    return a.module_address < b.module_address ? -1 : a.module_address > b.module_address ? 1 : 0;
  });
}

/** How a value reads to a person: a mask, `(known after apply)`, or the value as JSON. */
export function planValueText(value: PlanValue | undefined): string {
  if (value === undefined) return '(none)';
  if ('sensitive' in value) return '(sensitive)';
  if ('unknown' in value) return '(known after apply)';
  const text = JSON.stringify(value.value);
  return value.truncated ? `${text}…` : text;
}
