import { ENGINE_NAMES, isOneOf } from '../domain/enums.js';
import { type FieldIssue, ValidationError } from '../domain/errors.js';
import { gitSourceIssues } from '../domain/gitSource.js';
import type { Engine, Variables, VineSource } from '../domain/records.js';
import { isUuid, requireName } from '../domain/validation.js';
import type { ApprovalSetting } from '../domain/policies.js';
import { parseApprovalSetting } from './PlanReviewUseCases.js';

/** The body of `POST /api/cli/configurations` (DESIGN §4). */
export interface CreateVineInput {
  name: unknown;
  vineyard_id: unknown;
  project_name?: unknown;
  source: unknown;
  variables?: unknown;
  engine?: unknown;
  cloud_identity_id?: unknown;
  cloud_identity?: unknown;
  /** Issue 15: `{required, separate_approver?}` or null. */
  approval?: unknown;
}

export interface ParsedVine {
  name: string;
  vineyard_id: string;
  project_name: string;
  source: VineSource;
  variables: Variables;
  engine: Engine;
  cloud_identity: { id: string } | { role_arn: string; external_id: string | null } | null;
  approval: ApprovalSetting | null;
}

export const MAX_INLINE_SOURCE_BYTES = 5 * 1024 * 1024;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,127}$/;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@\-/]{1,512}$/;

/** Checks every field and reports all failures at once, so a person fixes them in one go. */
export function parseVineInput(input: CreateVineInput): ParsedVine {
  const issues: FieldIssue[] = [];
  const field = <T>(path: string, read: () => T): T | undefined => {
    try {
      return read();
    } catch (error) {
      if (error instanceof ValidationError) {
        issues.push(...(error.fields.length > 0 ? error.fields : [{ path, message: error.message }]));
        return undefined;
      }
      throw error;
    }
  };

  const name = field('name', () => requireName(input.name, 'name'));
  const projectName = field('project_name', () =>
    input.project_name === undefined || input.project_name === null
      ? name
      : requireName(input.project_name, 'project_name'),
  );
  if (!isUuid(input.vineyard_id)) issues.push({ path: 'vineyard_id', message: 'must be a UUID' });
  const source = field('source', () => parseSource(input.source));
  const variables = field('variables', () => parseVariables(input.variables));
  const engine = field('engine', () => parseEngine(input.engine));
  const cloudIdentity = field('cloud_identity', () => parseCloudIdentity(input));
  const approval = field('approval', () => parseApprovalSetting(input.approval));

  if (issues.length > 0 || name === undefined || source === undefined) {
    throw new ValidationError('the configuration is invalid', issues);
  }
  return {
    name,
    vineyard_id: (input.vineyard_id as string).toLowerCase(),
    project_name: projectName ?? name,
    source,
    variables: variables ?? {},
    engine: engine ?? { name: 'tofu', version: null },
    cloud_identity: cloudIdentity ?? null,
    approval: approval ?? null,
  };
}

function fail(path: string, message: string): never {
  throw new ValidationError(`${path} ${message}`, [{ path, message }]);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A relative path inside the workspace: no absolute paths, no `..`, no backslashes. */
function isSafeRelativePath(path: string): boolean {
  return (
    path.length > 0 &&
    path.length <= 255 &&
    !path.startsWith('/') &&
    !path.includes('\\') &&
    !path.includes('\0') &&
    path.split('/').every((part) => part !== '..' && part !== '' && part !== '.')
  );
}

export function parseSource(value: unknown): VineSource {
  if (!isRecord(value)) fail('source', 'must be an object with a type of "git" or "inline"');
  if (value.type === 'git') {
    const { url, ref, path } = value;
    if (typeof url !== 'string' || url.trim() === '' || url.length > 2048) {
      fail('source.url', 'must be a git URL');
    }
    if (ref !== undefined && ref !== null && (typeof ref !== 'string' || ref.trim() === '' || ref.length > 255)) {
      fail('source.ref', 'must be a branch, tag or commit');
    }
    if (path !== undefined && path !== null && (typeof path !== 'string' || !isSafeRelativePath(path))) {
      fail('source.path', "must be a relative path without '..'");
    }
    const source = { url, ref: (ref as string | undefined) ?? null, path: (path as string | undefined) ?? null };
    // file:// is each agent's decision (`--allow-file-sources`); everything else is refused here.
    const issues = gitSourceIssues(source, { allowFile: true });
    if (issues.length > 0) throw new ValidationError('the git source is invalid', issues);
    return { type: 'git', ...source };
  }
  if (value.type === 'inline') {
    const { files } = value;
    if (!isRecord(files) || Object.keys(files).length === 0) {
      fail('source.files', 'must map at least one file name to its content');
    }
    let total = 0;
    for (const [name, content] of Object.entries(files)) {
      if (!isSafeRelativePath(name)) fail(`source.files.${name}`, "must be a relative path without '..'");
      if (typeof content !== 'string') fail(`source.files.${name}`, 'must be the file content as a string');
      total += Buffer.byteLength(content, 'utf8');
    }
    if (total > MAX_INLINE_SOURCE_BYTES) fail('source.files', `must hold at most ${MAX_INLINE_SOURCE_BYTES} bytes`);
    return { type: 'inline', files: files as Record<string, string> };
  }
  return fail('source.type', 'must be "git" or "inline"');
}

/** Accepts `{k: "v"}` and `{k: {value: "v", sensitive: true}}`. */
export function parseVariables(value: unknown): Variables {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) fail('variables', 'must be an object');
  const variables: Variables = {};
  for (const [key, raw] of Object.entries(value)) {
    if (!VARIABLE_NAME.test(key)) fail(`variables.${key}`, 'is not a valid variable name');
    if (typeof raw === 'string') {
      variables[key] = { value: raw, sensitive: false };
    } else if (isRecord(raw) && typeof raw.value === 'string') {
      if (raw.sensitive !== undefined && typeof raw.sensitive !== 'boolean') {
        fail(`variables.${key}.sensitive`, 'must be a boolean');
      }
      variables[key] = { value: raw.value, sensitive: raw.sensitive === true };
    } else {
      fail(`variables.${key}`, 'must be a string or {"value": string, "sensitive": boolean}');
    }
  }
  return variables;
}

export function parseEngine(value: unknown): Engine {
  if (value === undefined || value === null) return { name: 'tofu', version: null };
  if (typeof value === 'string') value = { name: value };
  if (!isRecord(value) || !isOneOf(ENGINE_NAMES, value.name)) fail('engine.name', 'must be "tofu" or "terraform"');
  const { version } = value;
  if (version !== undefined && version !== null && (typeof version !== 'string' || !/^[\w.+-]{1,64}$/.test(version))) {
    fail('engine.version', 'must be a version string');
  }
  return { name: value.name, version: (version as string | undefined) ?? null };
}

function parseCloudIdentity(input: CreateVineInput): ParsedVine['cloud_identity'] {
  const { cloud_identity_id: id, cloud_identity: inline } = input;
  if (id !== undefined && id !== null) {
    if (inline !== undefined && inline !== null)
      fail('cloud_identity', 'give cloud_identity_id or cloud_identity, not both');
    if (!isUuid(id)) fail('cloud_identity_id', 'must be a UUID');
    return { id: id.toLowerCase() };
  }
  if (inline === undefined || inline === null) return null;
  if (!isRecord(inline)) fail('cloud_identity', 'must be an object');
  if (inline.provider !== undefined && inline.provider !== 'aws') fail('cloud_identity.provider', 'must be "aws"');
  if (typeof inline.role_arn !== 'string' || !ROLE_ARN.test(inline.role_arn)) {
    fail('cloud_identity.role_arn', 'must be an IAM role ARN (arn:aws:iam::123456789012:role/name)');
  }
  const externalId = inline.external_id;
  if (externalId !== undefined && externalId !== null && !isUuid(externalId)) {
    fail('cloud_identity.external_id', 'must be a UUID');
  }
  return { role_arn: inline.role_arn, external_id: (externalId as string | undefined)?.toLowerCase() ?? null };
}
