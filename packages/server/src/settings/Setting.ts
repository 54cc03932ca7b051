import { ConfigError } from './ConfigError.js';

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * One environment variable of `trellis-server`: one row of the settings table (`table.ts`), from
 * which the parsing, the typed settings and `docs/configuration.md` all come (Yarn's
 * `coreDefinitions`). Made by the builders below, never by hand.
 */
export interface Setting<T> {
  readonly kind: 'setting';
  /** The variable; a family's holds a placeholder (`TRELLIS_<PROVIDER>_CLIENT_ID`). */
  readonly env: string;
  /** What the variable accepts, for the reference (markdown). */
  readonly accepts: string;
  /** The value when the variable is unset or empty. */
  readonly default: T;
  /** The reference's default when the value alone does not say it (markdown). */
  readonly shownDefault: string | null;
  /** What the variable does: one cell of the reference (markdown). */
  readonly description: string;
  /**
   * Former names still read when `env` is unset, in this order, and named as deprecated in the
   * reference and in a warning at start-up.
   */
  readonly deprecatedEnv: readonly string[];
  /** Never repeated in an error message, and marked so in the reference. */
  readonly secret: boolean;
  /** The value of a set, non-empty variable; a ConfigError naming `name` and what was wrong otherwise. */
  parse(raw: string, name: string): T;
}

/** One variable per member (`TRELLIS_GITHUB_CLIENT_ID`, `TRELLIS_GITLAB_CLIENT_ID`, …), parsed alike. */
export interface SettingFamily<M extends string, T> {
  readonly kind: 'family';
  readonly placeholder: string;
  readonly members: readonly M[];
  readonly setting: Setting<T>;
}

/** Rows, and groups of rows that become nested objects of the settings (`oidc.issuer`). */
export interface SettingsTable {
  readonly [key: string]: Setting<unknown> | SettingFamily<string, unknown> | SettingsTable;
}

/** The typed settings a table parses into. */
export type SettingsOf<S extends SettingsTable> = {
  readonly [K in keyof S]: S[K] extends Setting<infer T>
    ? T
    : S[K] extends SettingFamily<infer M, infer T>
      ? Readonly<Record<M, T>>
      : S[K] extends SettingsTable
        ? SettingsOf<S[K]>
        : never;
};

interface Row {
  env: string;
  description: string;
  shownDefault?: string;
  deprecatedEnv?: readonly string[];
}

function setting<T>(
  row: Row,
  fields: Omit<Setting<T>, 'kind' | 'env' | 'description' | 'shownDefault' | 'deprecatedEnv'>,
): Setting<T> {
  return Object.freeze({
    kind: 'setting',
    env: row.env,
    description: row.description,
    shownDefault: row.shownDefault ?? null,
    deprecatedEnv: Object.freeze([...(row.deprecatedEnv ?? [])]),
    ...fields,
  });
}

function wholeNumber(raw: string, name: string, min: number, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return value;
}

export function integer(row: Row & { default: number; min: number; max: number }): Setting<number> {
  return setting(row, {
    accepts: `\`${row.min}\`–\`${row.max}\``,
    default: row.default,
    secret: false,
    parse: (raw, name) => wholeNumber(raw, name, row.min, row.max),
  });
}

/** An integer that is unset by default (`null`). */
export function optionalInteger(row: Row & { min: number; max: number }): Setting<number | null> {
  return setting<number | null>(row, {
    accepts: `\`${row.min}\`–\`${row.max}\``,
    default: null,
    secret: false,
    parse: (raw, name) => wholeNumber(raw, name, row.min, row.max),
  });
}

export function boolean(row: Row & { default: boolean }): Setting<boolean> {
  return setting(row, {
    accepts: '`true`, `false`',
    default: row.default,
    secret: false,
    parse(raw, name) {
      if (raw === 'true') return true;
      if (raw === 'false') return false;
      throw new ConfigError(`${name} must be true or false (got "${raw}")`);
    },
  });
}

export function text(row: Row & { default: string }): Setting<string> {
  return setting(row, { accepts: 'text', default: row.default, secret: false, parse: (raw) => raw });
}

/** Text that is unset by default (`null`), such as a URL whose default is derived from others. */
export function optionalText(row: Row & { accepts?: string }): Setting<string | null> {
  return setting<string | null>(row, {
    accepts: row.accepts ?? 'text',
    default: null,
    secret: false,
    parse: (raw) => raw,
  });
}

/** An http(s) URL, unset by default; `stripTrailingSlashes` for a base that paths are appended to. */
export function httpUrl(row: Row & { stripTrailingSlashes?: boolean }): Setting<string | null> {
  return setting<string | null>(row, {
    accepts: 'an `http://` or `https://` URL',
    default: null,
    secret: false,
    parse(raw, name) {
      let protocol: string;
      try {
        protocol = new URL(raw).protocol;
      } catch {
        protocol = '';
      }
      if (protocol !== 'http:' && protocol !== 'https:') {
        throw new ConfigError(`${name} must be an http(s) URL (got "${raw}")`);
      }
      return row.stripTrailingSlashes ? raw.replace(/\/+$/, '') : raw;
    },
  });
}

/**
 * A secret, unset by default: an error names its length, never its value. `minLength` counts
 * `unit` (characters by default, or UTF-8 bytes); `hint` says how to make a good one.
 */
export function secret(
  row: Row & { minLength?: number; unit?: 'characters' | 'bytes'; hint?: string },
): Setting<string | null> {
  const unit = row.unit ?? 'characters';
  const min = row.minLength ?? 1;
  return setting<string | null>(row, {
    accepts: min > 1 ? `a secret of at least ${min} ${unit}` : 'a secret',
    default: null,
    secret: true,
    parse(raw, name) {
      const length = unit === 'bytes' ? Buffer.byteLength(raw, 'utf8') : raw.length;
      if (length < min) {
        throw new ConfigError(
          `${name} must be at least ${min} ${unit} (got ${length})${row.hint ? `; ${row.hint}` : ''}`,
        );
      }
      return raw;
    },
  });
}

export function oneOf<const V extends string>(row: Row & { values: readonly V[]; default: V }): Setting<V> {
  return setting(row, {
    accepts: row.values.map((value) => `\`${value}\``).join(', '),
    default: row.default,
    secret: false,
    parse(raw, name) {
      if ((row.values as readonly string[]).includes(raw)) return raw as V;
      throw new ConfigError(`${name} must be one of ${row.values.join(', ')} (got "${raw}")`);
    },
  });
}

/** A variable with a syntax of its own: `parse` says what is wrong, naming the variable. */
export function custom<T>(
  row: Row & { accepts: string; default: NoInfer<T>; secret?: boolean; parse(raw: string, name: string): T },
): Setting<T> {
  return setting(row, { accepts: row.accepts, default: row.default, secret: row.secret ?? false, parse: row.parse });
}

/** The same row for each member, its placeholder in the name replaced by the member. */
export function family<const M extends string, T>(
  placeholder: string,
  members: readonly M[],
  row: Setting<T>,
): SettingFamily<M, T> {
  if (!row.env.includes(placeholder)) throw new Error(`${row.env} has no ${placeholder}`);
  return Object.freeze({ kind: 'family', placeholder, members, setting: row });
}

function read<T>(row: Setting<T>, name: string, env: Env): T {
  const used = [name, ...(name === row.env ? row.deprecatedEnv : [])].find((each) => isSet(env[each]));
  return used === undefined ? row.default : row.parse(env[used] as string, used);
}

function isSet(raw: string | undefined): raw is string {
  return raw !== undefined && raw !== '';
}

/** A warning for each deprecated name `env` sets, naming the variable that replaces it. */
export function deprecatedSettingsIn(table: SettingsTable, env: Env): string[] {
  return settingRows(table).flatMap((row) =>
    row.deprecatedEnv
      .filter((name) => isSet(env[name]))
      .map((name) =>
        isSet(env[row.env])
          ? `${name} is deprecated and ignored: ${row.env} is set`
          : `${name} is deprecated: set ${row.env} instead`,
      ),
  );
}

/** Parses `env` by the table: every row read, every group an object of its own, all frozen. */
export function parseSettings<S extends SettingsTable>(table: S, env: Env): SettingsOf<S> {
  const settings: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(table)) {
    if (entry.kind === 'setting') {
      settings[key] = read(entry as Setting<unknown>, entry.env as string, env);
    } else if (entry.kind === 'family') {
      const { placeholder, members, setting: row } = entry as SettingFamily<string, unknown>;
      settings[key] = Object.freeze(
        Object.fromEntries(members.map((member) => [member, read(row, row.env.replace(placeholder, member), env)])),
      );
    } else {
      settings[key] = parseSettings(entry as SettingsTable, env);
    }
  }
  return Object.freeze(settings) as SettingsOf<S>;
}

/** Every row of the table in order, a family once (by its placeholder name). */
export function settingRows(table: SettingsTable): Setting<unknown>[] {
  return Object.values(table).flatMap((entry) => {
    if (entry.kind === 'setting') return [entry as Setting<unknown>];
    if (entry.kind === 'family') return [(entry as SettingFamily<string, unknown>).setting];
    return settingRows(entry as SettingsTable);
  });
}
