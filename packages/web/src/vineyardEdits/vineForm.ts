import { type CreateVineInput, type FieldIssue, ValidationError } from '@trellis/core';

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

/** Everything the new-configuration form holds, as typed (sensitive values aside once shown again). */
export interface VineFormValues {
  name: string;
  project_name: string;
  source_type: string;
  files: FileRow[];
  git: { url: string; ref: string; path: string };
  variables: VariableRow[];
  engine: string;
  engine_version: string;
  approval: string;
}

export const EMPTY_VINE_FORM: VineFormValues = {
  name: '',
  project_name: '',
  source_type: 'inline',
  files: [{ name: 'main.tf', content: '' }],
  git: { url: '', ref: '', path: '' },
  variables: [],
  engine: 'tofu',
  engine_version: '',
  approval: 'none',
};

type FormBody = Record<string, unknown>;

function text(body: FormBody, name: string): string {
  const value = body[name];
  if (typeof value === 'string') return value;
  return Array.isArray(value) && typeof value[0] === 'string' ? value[0] : '';
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

/** The form as sent: rows left wholly empty are dropped. */
export function vineFormValues(body: unknown): VineFormValues {
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
  };
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
export function createVineInput(vineyardId: string, values: VineFormValues): CreateVineInput {
  const twice: FieldIssue[] = [];
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
  };
}

/** The form as it is shown again: everything typed, but no sensitive value (the person types it again). */
export function shownAgain(values: VineFormValues): VineFormValues {
  return {
    ...values,
    variables: values.variables.map((row) => (row.sensitive ? { ...row, value: '' } : row)),
  };
}
