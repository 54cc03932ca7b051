import { type CreateVineInput, type FieldIssue, ValidationError } from '@trellis/core';
import type { MultipartForm } from './multipartForm.js';

/** The most file and variable rows a form holds (a form post parses at most a few thousand fields). */
export const MAX_FORM_ROWS = 200;

/** A file row of the form: its name and content, as typed. */
export interface FileRow {
  name: string;
  content: string;
}

/**
 * A variable row. A sensitive row's value is in the submitted form only: it is passed to core and
 * never kept in what the form is shown again with (`shownAgain`).
 */
export interface VariableRow {
  name: string;
  value: string;
  sensitive: boolean;
}

/**
 * The cloud identity as the form has it: `kind` is none (''), `existing` (an identity's id) or one
 * of the kinds of a new one; only the fields of the chosen kind are sent.
 */
export interface IdentityFields {
  kind: string;
  id: string;
  role_arn: string;
  external_id: string;
  audience: string;
  session_duration: string;
  workload_identity_provider: string;
  service_account_email: string;
  tenant_id: string;
  client_id: string;
}

/** The identity choices of the form, as the API's `cloud_identity` (kind and provider). */
export const IDENTITY_KINDS = {
  assume_role: { kind: 'assume_role', provider: 'aws', fields: ['role_arn', 'external_id'] },
  oidc_aws: { kind: 'oidc', provider: 'aws', fields: ['role_arn', 'audience', 'session_duration'] },
  oidc_gcp: {
    kind: 'oidc',
    provider: 'gcp',
    fields: ['workload_identity_provider', 'service_account_email', 'audience'],
  },
  oidc_azure: { kind: 'oidc', provider: 'azure', fields: ['tenant_id', 'client_id', 'audience'] },
} as const satisfies Record<string, { kind: string; provider: string; fields: readonly (keyof IdentityFields)[] }>;

/** Everything the new-configuration form holds, as typed (sensitive values aside once shown again). */
export interface VineFormValues {
  name: string;
  project_name: string;
  /** `inline` (files written in the page), `upload` (a directory uploaded) or `git`. */
  source_type: string;
  files: FileRow[];
  /** The files of the uploaded directory; a refused form carries them, so nobody uploads again. */
  uploads: FileRow[];
  git: { url: string; ref: string; path: string };
  variables: VariableRow[];
  engine: string;
  engine_version: string;
  approval: string;
  identity: IdentityFields;
  /** As typed: tags separated by commas or spaces. */
  tags: string;
  /** The ids of the configurations it runs after. */
  triggers_after: string[];
}

const NO_IDENTITY: IdentityFields = {
  kind: '',
  id: '',
  role_arn: '',
  external_id: '',
  audience: '',
  session_duration: '',
  workload_identity_provider: '',
  service_account_email: '',
  tenant_id: '',
  client_id: '',
};

export const EMPTY_VINE_FORM: VineFormValues = {
  name: '',
  project_name: '',
  source_type: 'inline',
  files: [{ name: 'main.tf', content: '' }],
  uploads: [],
  git: { url: '', ref: '', path: '' },
  variables: [],
  engine: 'tofu',
  engine_version: '',
  approval: 'none',
  identity: NO_IDENTITY,
  tags: '',
  triggers_after: [],
};

type FormBody = Record<string, unknown>;

function text(body: FormBody, name: string): string {
  const value = body[name];
  if (typeof value === 'string') return value;
  return Array.isArray(value) && typeof value[0] === 'string' ? value[0] : '';
}

function list(body: FormBody, name: string): string[] {
  const value = body[name];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** The indexes of `prefix.<n>.<field>` fields, in order (at most `MAX_FORM_ROWS`). */
function rowIndexes(body: FormBody, prefix: string): number[] {
  const pattern = new RegExp(`^${prefix}\\.(\\d{1,4})\\.`);
  const indexes = new Set<number>();
  for (const key of Object.keys(body)) {
    const match = pattern.exec(key);
    if (match) indexes.add(Number(match[1]));
  }
  return [...indexes].sort((a, b) => a - b).slice(0, MAX_FORM_ROWS);
}

/**
 * The form as sent: rows left wholly empty are dropped. A directory uploaded (`upload`, from a
 * multipart form) replaces the files a refused form carried from an earlier upload.
 */
export function vineFormValues(body: unknown, upload?: Pick<MultipartForm, 'files'>): VineFormValues {
  const form = (typeof body === 'object' && body !== null ? body : {}) as FormBody;
  const files = rowIndexes(form, 'files')
    .map((index) => ({
      name: text(form, `files.${index}.name`),
      // A browser sends a text area's lines ended by CRLF; the file is the text as typed.
      content: text(form, `files.${index}.content`).replace(/\r\n?/g, '\n'),
    }))
    .filter((row) => row.name !== '' || row.content !== '');
  const variables = rowIndexes(form, 'variables')
    .map((index) => ({
      name: text(form, `variables.${index}.name`),
      value: text(form, `variables.${index}.value`),
      sensitive: text(form, `variables.${index}.sensitive`) === 'true',
    }))
    .filter((row) => row.name !== '' || row.value !== '');
  const carried = rowIndexes(form, 'uploads').map((index) => ({
    name: text(form, `uploads.${index}.name`),
    content: text(form, `uploads.${index}.content`).replace(/\r\n?/g, '\n'),
  }));
  const uploads =
    upload && upload.files.length > 0
      ? upload.files.map((file) => ({ name: file.path, content: file.content }))
      : carried.filter((row) => row.name !== '');
  const identity = Object.fromEntries(
    Object.keys(NO_IDENTITY).map((key) => [key, text(form, `identity_${key}`).trim()]),
  ) as unknown as IdentityFields;
  return {
    name: text(form, 'name'),
    project_name: text(form, 'project_name'),
    source_type: text(form, 'source_type'),
    files,
    git: { url: text(form, 'git_url'), ref: text(form, 'git_ref'), path: text(form, 'git_path') },
    variables,
    engine: text(form, 'engine'),
    engine_version: text(form, 'engine_version'),
    approval: text(form, 'approval'),
    uploads,
    identity,
    tags: text(form, 'tags'),
    triggers_after: list(form, 'triggers_after').slice(0, MAX_FORM_ROWS),
  };
}

/** The tags typed in one field, separated by commas or white space; core judges each one. */
export function typedTags(typed: string): string[] {
  return typed.split(/[\s,]+/).filter((tag) => tag !== '');
}

/** The `cloud_identity_id` or `cloud_identity` of the API's body the identity fields stand for. */
function identityInput(identity: IdentityFields): Pick<CreateVineInput, 'cloud_identity_id' | 'cloud_identity'> {
  if (identity.kind === '') return {};
  if (identity.kind === 'existing') return { cloud_identity_id: identity.id };
  if (!Object.hasOwn(IDENTITY_KINDS, identity.kind)) return { cloud_identity: { kind: identity.kind } };
  const chosen = IDENTITY_KINDS[identity.kind as keyof typeof IDENTITY_KINDS];
  const settings: Record<string, unknown> = { kind: chosen.kind, provider: chosen.provider };
  for (const field of chosen.fields) {
    const value = identity[field];
    if (value === '') continue;
    // A number typed is sent as one; anything else as typed, for core to refuse by name.
    settings[field] = field === 'session_duration' && /^\d{1,9}$/.test(value) ? Number(value) : value;
  }
  return { cloud_identity: settings };
}

/** The approval choices of the form, as the API's `approval` setting. */
const APPROVALS: Readonly<Record<string, CreateVineInput['approval']>> = {
  none: null,
  required: { required: true, separate_approver: false },
  separate: { required: true, separate_approver: true },
};

/**
 * The body of `POST /api/cli/configurations` the form stands for, for core to judge as it judges
 * the API's. Only what a form can say and JSON cannot is refused here: a file or variable name
 * given twice (the second would silently replace the first).
 */
export function createVineInput(
  vineyardId: string,
  values: VineFormValues,
  uploadIssues: readonly FieldIssue[] = [],
): CreateVineInput {
  const twice: FieldIssue[] = [...uploadIssues];
  if (values.source_type === 'upload' && values.uploads.length === 0 && uploadIssues.length === 0) {
    twice.push({
      path: 'source.upload',
      message: 'choose a directory holding .tf files (or the files themselves) to upload',
    });
  }
  const once = <T extends { name: string }>(rows: T[], path: string, what: string): T[] => {
    const seen = new Set<string>();
    for (const row of rows) {
      if (seen.has(row.name))
        twice.push({ path: `${path}.${row.name}`, message: `is given twice: one ${what} per name` });
      seen.add(row.name);
    }
    return rows;
  };
  const files = once(values.files, 'source.files', 'file');
  const variables = once(values.variables, 'variables', 'variable');
  if (twice.length > 0) throw new ValidationError('the configuration is invalid', twice);
  return {
    name: values.name,
    vineyard_id: vineyardId,
    ...(values.project_name !== '' ? { project_name: values.project_name } : {}),
    source:
      values.source_type === 'git'
        ? {
            type: 'git',
            url: values.git.url,
            ...(values.git.ref !== '' ? { ref: values.git.ref } : {}),
            ...(values.git.path !== '' ? { path: values.git.path } : {}),
          }
        : values.source_type === 'inline'
          ? { type: 'inline', files: Object.fromEntries(files.map((row) => [row.name, row.content])) }
          : values.source_type === 'upload'
            ? { type: 'inline', files: Object.fromEntries(values.uploads.map((row) => [row.name, row.content])) }
            : { type: values.source_type },
    variables: Object.fromEntries(
      variables.map((row) => [row.name, { value: row.value, sensitive: row.sensitive }] as const),
    ),
    // A field the form did not send is left out, for core's default.
    ...(values.engine !== '' || values.engine_version !== ''
      ? { engine: { name: values.engine, version: values.engine_version === '' ? null : values.engine_version } }
      : {}),
    ...(values.approval !== ''
      ? { approval: Object.hasOwn(APPROVALS, values.approval) ? APPROVALS[values.approval] : values.approval }
      : {}),
    ...identityInput(values.identity),
    ...(values.tags.trim() !== '' ? { tags: typedTags(values.tags) } : {}),
    ...(values.triggers_after.length > 0 ? { triggers: { after: values.triggers_after } } : {}),
  };
}

/** The form as it is shown again: everything typed, but no sensitive value (the person types it again). */
export function shownAgain(values: VineFormValues): VineFormValues {
  return {
    ...values,
    variables: values.variables.map((row) => (row.sensitive ? { ...row, value: '' } : row)),
  };
}
