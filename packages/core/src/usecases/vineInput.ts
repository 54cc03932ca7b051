import { ENGINE_NAMES, isOneOf } from '../domain/enums.js';
import { type FieldIssue, fieldReader, ValidationError } from '../domain/errors.js';
import { gitSourceIssues } from '../domain/gitSource.js';
import type { CloudIdentitySettings, Engine, Variables, VineSource, VineTriggers } from '../domain/records.js';
import { parseTags } from '../domain/tags.js';
import { parseTriggers } from '../drift/DriftUseCases.js';
import { isUuid, requireName } from '../domain/validation.js';
import type { ApprovalSetting } from '../domain/policies.js';
import { parseApprovalSetting } from '../policies/PlanReviewUseCases.js';

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
  /** Tags for the fleet's filter (`domain/tags.ts`), as the Terraform Cloud protocol's workspace tags. */
  tags?: unknown;
  /** `{after: [configuration ids]}`: run after a successful DEPLOY of any of these (same owner). */
  triggers?: unknown;
}

export interface ParsedVine {
  name: string;
  vineyard_id: string;
  project_name: string;
  source: VineSource;
  variables: Variables;
  engine: Engine;
  /** An existing identity, or the settings of a new one (`external_id` null: generated). */
  cloud_identity:
    | { id: string }
    | { kind: 'assume_role'; role_arn: string; external_id: string | null }
    | Extract<CloudIdentitySettings, { kind: 'oidc' }>
    | null;
  approval: ApprovalSetting | null;
  tags: string[];
  triggers: VineTriggers;
}

export const MAX_INLINE_SOURCE_BYTES = 5 * 1024 * 1024;
/**
 * One variable's value, and all of a vine's values together. Variables reach the engine in a
 * `.tfvars.json` file, so no operating-system limit applies; these keep a vine's snapshot (copied
 * into every job) and its pages a sane size, and are checked when the vine is written.
 */
export const MAX_VARIABLE_VALUE_BYTES = 256 * 1024;
export const MAX_VARIABLES_BYTES = 1024 * 1024;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,127}$/;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@\-/]{1,512}$/;

/** Checks every field and reports all failures at once, so a person fixes them in one go. */
export function parseVineInput(input: CreateVineInput): ParsedVine {
  const issues: FieldIssue[] = [];
  const field = fieldReader(issues);

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
  const tags = field('tags', () => (input.tags === undefined || input.tags === null ? [] : parseTags(input.tags)));
  const triggers = field('triggers', () => parseTriggers(input.triggers ?? undefined));

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
    tags: tags ?? [],
    triggers: triggers ?? { after: [] },
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
  let total = 0;
  for (const [key, raw] of Object.entries(value)) {
    if (!VARIABLE_NAME.test(key)) {
      fail(
        `variables.${key}`,
        "is not a variable name: use letters, digits, '_' and '-', starting with a letter or '_' (at most 128)",
      );
    }
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
    const size = Buffer.byteLength(variables[key].value, 'utf8');
    if (size > MAX_VARIABLE_VALUE_BYTES) {
      fail(`variables.${key}`, `is ${formatKiB(size)}; a value can be at most ${formatKiB(MAX_VARIABLE_VALUE_BYTES)}`);
    }
    total += size;
  }
  if (total > MAX_VARIABLES_BYTES) {
    fail(
      'variables',
      `hold ${formatKiB(total)} together; a configuration's values can be at most ${formatKiB(MAX_VARIABLES_BYTES)}`,
    );
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

export function parseCloudIdentity(
  input: Pick<CreateVineInput, 'cloud_identity_id' | 'cloud_identity'>,
): ParsedVine['cloud_identity'] {
  const { cloud_identity_id: id, cloud_identity: inline } = input;
  if (id !== undefined && id !== null) {
    if (inline !== undefined && inline !== null)
      fail('cloud_identity', 'give cloud_identity_id or cloud_identity, not both');
    if (!isUuid(id)) fail('cloud_identity_id', 'must be a UUID');
    return { id: id.toLowerCase() };
  }
  if (inline === undefined || inline === null) return null;
  if (!isRecord(inline)) fail('cloud_identity', 'must be an object');
  const kind = inline.kind ?? 'assume_role';
  if (kind !== 'assume_role' && kind !== 'oidc') fail('cloud_identity.kind', 'must be "assume_role" or "oidc"');
  const provider = inline.provider ?? 'aws';
  if (kind === 'oidc') return parseOidcIdentity(inline, provider);
  if (provider !== 'aws') fail('cloud_identity.provider', 'must be "aws" for assume_role');
  const roleArn = requireRoleArn(inline.role_arn);
  const externalId = inline.external_id;
  if (externalId !== undefined && externalId !== null && !isUuid(externalId)) {
    fail('cloud_identity.external_id', 'must be a UUID');
  }
  return {
    kind: 'assume_role',
    role_arn: roleArn,
    external_id: (externalId as string | undefined)?.toLowerCase() ?? null,
  };
}

function requireRoleArn(value: unknown): string {
  if (typeof value !== 'string' || !ROLE_ARN.test(value)) {
    fail('cloud_identity.role_arn', 'must be an IAM role ARN (arn:aws:iam::123456789012:role/name)');
  }
  return value;
}

const GCP_PROVIDER = /^projects\/[^/\s]+\/locations\/global\/workloadIdentityPools\/[^/\s]+\/providers\/[^/\s]+$/;
const EMAIL = /^[^@\s]+@[^@\s]+$/;
const AZURE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function optionalText(value: unknown, path: string, max = 512): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length === 0 || value.length > max) {
    fail(path, `must be a non-empty string of at most ${max} characters`);
  }
  return value;
}

function parseOidcIdentity(
  inline: Record<string, unknown>,
  provider: unknown,
): Extract<CloudIdentitySettings, { kind: 'oidc' }> {
  const audience = optionalText(inline.audience, 'cloud_identity.audience');
  switch (provider) {
    case 'aws': {
      const duration = inline.session_duration;
      if (
        duration !== undefined &&
        duration !== null &&
        (typeof duration !== 'number' || !Number.isInteger(duration) || duration < 900 || duration > 43200)
      ) {
        fail('cloud_identity.session_duration', 'must be a number of seconds from 900 to 43200');
      }
      return {
        kind: 'oidc',
        provider: 'aws',
        role_arn: requireRoleArn(inline.role_arn),
        audience,
        session_duration: (duration as number | undefined) ?? null,
      };
    }
    case 'gcp': {
      const pool = inline.workload_identity_provider;
      if (typeof pool !== 'string' || !GCP_PROVIDER.test(pool)) {
        fail(
          'cloud_identity.workload_identity_provider',
          'must be projects/<number>/locations/global/workloadIdentityPools/<pool>/providers/<provider>',
        );
      }
      const email = optionalText(inline.service_account_email, 'cloud_identity.service_account_email');
      if (email !== null && !EMAIL.test(email)) fail('cloud_identity.service_account_email', 'must be an email');
      return {
        kind: 'oidc',
        provider: 'gcp',
        workload_identity_provider: pool,
        service_account_email: email,
        audience,
      };
    }
    case 'azure': {
      const { tenant_id: tenant, client_id: client } = inline;
      if (typeof tenant !== 'string' || !AZURE_ID.test(tenant)) fail('cloud_identity.tenant_id', 'must be a UUID');
      if (typeof client !== 'string' || !AZURE_ID.test(client)) fail('cloud_identity.client_id', 'must be a UUID');
      return {
        kind: 'oidc',
        provider: 'azure',
        tenant_id: tenant.toLowerCase(),
        client_id: client.toLowerCase(),
        audience,
      };
    }
    default:
      return fail('cloud_identity.provider', 'must be "aws", "gcp" or "azure"');
  }
}

function formatKiB(bytes: number): string {
  return `${Math.ceil(bytes / 1024).toLocaleString('en-US')} KiB`;
}
