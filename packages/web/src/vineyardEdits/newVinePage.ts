import { MAX_INLINE_SOURCE_BYTES } from '@trellis/core';
import { type Html, html } from '../html.js';
import type { Page } from '../layout.js';
import { breadcrumbs, fieldMessages, Issues, refusalBox, textField } from './formParts.js';
import type { Refusal } from './refusal.js';
import {
  type FileRow,
  IDENTITY_KINDS,
  type IdentityFields,
  type VariableRow,
  type VineFormValues,
} from './vineForm.js';

/**
 * `GET /vineyards/:id/configurations/new`: a configuration's name, tags, source (files written
 * here, an uploaded directory or a Git repository), variables, engine, cloud identity, approvals
 * and run triggers. The form is multipart (it may carry a directory); it works without script.
 */
export function newVinePage(input: {
  base: string;
  vineyard: { id: string; name: string };
  /** The configurations it may run after (its vineyard's). */
  upstreams: readonly { id: string; name: string }[];
  values: VineFormValues;
  refusal?: Refusal | null;
  /** Whether sensitive values were typed and are not shown again. */
  sensitiveDropped?: boolean;
}): Page {
  const { base, vineyard, values, refusal } = input;
  const issues = new Issues(refusal);
  const name = textField({
    id: 'vine-name',
    name: 'name',
    label: 'Name',
    hint: "Letters, digits, '.', '_' or '-', e.g. web.",
    value: values.name,
    messages: issues.at('name'),
    required: true,
  });
  const project = textField({
    id: 'vine-project',
    name: 'project_name',
    label: 'Project name (optional)',
    hint: 'The name the engine and the state know it by; the name when left empty.',
    value: values.project_name,
    messages: issues.at('project_name'),
  });
  const tags = textField({
    id: 'vine-tags',
    name: 'tags',
    label: 'Tags (optional)',
    hint: "Separated by commas or spaces: letters, digits, ':', '_', '.' and '-', e.g. prod, team:web. The fleet filters by them.",
    value: values.tags,
    messages: issues.at('tags', true),
  });
  const sourceType = fieldMessages('vine-source', [...issues.at('source'), ...issues.at('source.type')]);
  // The uploaded files take core's issues about files when the source is the upload.
  const upload = uploadFieldset(values, issues);
  const files = filesFieldset(values, issues);
  const git = html`<fieldset class="source-choice" data-git-source>
    <legend><input type="radio" id="source-git" name="source_type" value="git"${values.source_type === 'git' ? html` checked` : ''}${sourceType.attrs}> <label for="source-git">A Git repository</label></legend>
    ${textField({ id: 'git-url', name: 'git_url', label: 'Repository URL', placeholder: 'https://github.com/acme/infra.git', value: values.git.url, messages: issues.at('source.url') })}
    ${textField({ id: 'git-ref', name: 'git_ref', label: 'Branch, tag or commit (optional)', placeholder: 'the default branch', value: values.git.ref, messages: issues.at('source.ref') })}
    ${textField({ id: 'git-path', name: 'git_path', label: 'Directory (optional)', placeholder: 'the root of the repository', value: values.git.path, messages: issues.at('source.path') })}
  </fieldset>`;
  const variables = variablesFieldset(values, issues);
  const engine = fieldMessages('vine-engine', [...issues.at('engine'), ...issues.at('engine.name')]);
  const engineVersion = textField({
    id: 'vine-engine-version',
    name: 'engine_version',
    label: 'Engine version (optional)',
    hint: "e.g. 1.9.0; empty: the agent's default.",
    value: values.engine_version,
    messages: issues.at('engine.version'),
  });
  const approval = fieldMessages('vine-approval', issues.at('approval', true));
  const identity = identityFieldset(values.identity, issues);
  const triggers = triggersFieldset(input.upstreams, values.triggers_after, issues);
  const rest = issues.rest();
  return {
    ...(refusal ? { status: refusal.status } : {}),
    title: `New configuration in ${vineyard.name}`,
    section: 'vineyards',
    body: html`${breadcrumbs(base, vineyard)}
<h1>New configuration</h1>
<p class="muted">In the vineyard ${vineyard.name}. Creating it runs nothing: plan it from its page.</p>
${refusalBox(
  refusal,
  rest,
  input.sensitiveDropped
    ? html`<p data-sensitive-dropped>Sensitive values are never sent back to your browser: type them again.</p>`
    : '',
)}
<form method="post" action="${base}/vineyards/${vineyard.id}/configurations" enctype="multipart/form-data" class="stacked-form create-form card" data-create-vine>
  ${name}
  ${project}
  ${tags}
  <h2>Source</h2>
  ${sourceType.note}
  ${files}
  ${upload}
  ${git}
  <h2>Variables</h2>
  ${variables}
  <h2>Engine</h2>
  <div class="field">
    <label for="vine-engine">Engine</label>
    <select id="vine-engine" name="engine"${engine.attrs}>
      <option value="tofu"${values.engine === 'tofu' ? html` selected` : ''}>OpenTofu</option>
      <option value="terraform"${values.engine === 'terraform' ? html` selected` : ''}>Terraform</option>
    </select>
    ${engine.note}
  </div>
  ${engineVersion}
  <h2>Approvals</h2>
  <div class="field">
    <label for="vine-approval">Deploying</label>
    <select id="vine-approval" name="approval"${approval.attrs}>
      <option value="none"${values.approval === 'none' ? html` selected` : ''}>Any successful plan may be deployed</option>
      <option value="required"${values.approval === 'required' ? html` selected` : ''}>Only an approved plan is deployed</option>
      <option value="separate"${values.approval === 'separate' ? html` selected` : ''}>Only a plan approved by someone other than who queued it</option>
    </select>
    ${approval.note}
  </div>
  <h2>Cloud identity</h2>
  ${identity}
  <h2>Run triggers</h2>
  ${triggers}
  <p class="muted small">The drift schedule and a repository connection (plans on push, trigger paths, deploying on its own) are set on the configuration's page once it exists.</p>
  <div class="actions">
    <button type="submit" class="button primary" name="intent" value="create" data-create-vine-submit>Create configuration</button>
    <button type="submit" class="button" name="intent" value="add_file" formnovalidate data-add-file>Add another file</button>
    <button type="submit" class="button" name="intent" value="add_variable" formnovalidate data-add-variable>Add another variable</button>
    <a class="button" href="${base}/vineyards/${vineyard.id}">Cancel</a>
  </div>
</form>`,
  };
}

/**
 * A directory (or files) from the person's computer. A refused form carries the files uploaded in
 * hidden fields and lists them, so nothing is uploaded twice; choosing again replaces them.
 */
function uploadFieldset(values: VineFormValues, issues: Issues): Html {
  const chosen = values.source_type === 'upload';
  const all = fieldMessages('vine-upload', [
    ...issues.at('source.upload'),
    ...(chosen ? issues.at('source.files') : []),
  ]);
  const kept = values.uploads;
  return html`<fieldset class="source-choice" data-upload-source>
    <legend><input type="radio" id="source-upload" name="source_type" value="upload"${chosen ? html` checked` : ''}> <label for="source-upload">A directory from your computer</label></legend>
    <div class="field">
      <label for="vine-upload">Directory</label>
      <span class="muted small" id="vine-upload-hint">Its <code>.tf</code>, <code>.tf.json</code>, <code>.tfvars</code> and <code>.terraform.lock.hcl</code> files are sent, with their paths inside it; <code>.terraform/</code>, other hidden entries and state files are left out. At most ${String(MAX_INLINE_SOURCE_BYTES / 1024 / 1024)} MiB together (a larger one: use a Git repository).</span>
      <input type="file" id="vine-upload" name="upload" webkitdirectory multiple aria-describedby="vine-upload-hint${all.note === '' ? '' : ' vine-upload-error'}"${all.note === '' ? '' : html` aria-invalid="true"`} data-upload-input>
      ${all.note}
    </div>
    <div class="field">
      <label for="vine-upload-files">Or files</label>
      <span class="muted small" id="vine-upload-files-hint">Chosen one by one (a browser without directory choice): each keeps its name.</span>
      <input type="file" id="vine-upload-files" name="upload" multiple accept=".tf,.json,.tfvars,.hcl" aria-describedby="vine-upload-files-hint" data-upload-files-input>
    </div>
    ${
      kept.length > 0
        ? html`<div data-uploaded-files>
      <p class="small">Uploaded (kept; choosing a directory again replaces them):</p>
      <ul class="plain">${kept.map((row, index) => {
        const messages = chosen ? issues.at(`source.files.${row.name}`) : [];
        return html`<li data-uploaded-file="${row.name}"><code>${row.name}</code>${messages.length > 0 ? html` <span class="field-error" data-field-error="upload-${String(index)}">${messages.join('; ')}</span>` : ''}
        <input type="hidden" name="uploads.${String(index)}.name" value="${row.name}">
        <input type="hidden" name="uploads.${String(index)}.content" value="${row.content}"></li>`;
      })}</ul>
    </div>`
        : ''
    }
  </fieldset>`;
}

/** A labelled choice, marked selected when it is the value. */
function option(value: string, label: string, current: string): Html {
  return html`<option value="${value}"${value === current ? html` selected` : ''}>${label}</option>`;
}

/**
 * The cloud identity jobs deploy with: none, one the owner has (its id), or a new one of a kind.
 * Every kind's fields are on the page (it works without script); only the chosen kind's are sent.
 */
function identityFieldset(identity: IdentityFields, issues: Issues): Html {
  const kind = fieldMessages('identity-kind', [
    ...issues.at('cloud_identity'),
    ...issues.at('cloud_identity.kind'),
    ...issues.at('cloud_identity.provider'),
  ]);
  const used = (field: keyof IdentityFields) =>
    Object.entries(IDENTITY_KINDS)
      .filter(([, chosen]) => (chosen.fields as readonly string[]).includes(field))
      .map(([key]) => key);
  const field = (key: keyof IdentityFields, label: string, hint: string, placeholder = '') =>
    textField({
      id: `identity-${key.replaceAll('_', '-')}`,
      name: `identity_${key}`,
      label,
      hint,
      value: identity[key],
      messages:
        used(key).includes(identity.kind) || key === 'id'
          ? issues.at(key === 'id' ? 'cloud_identity_id' : `cloud_identity.${key}`)
          : [],
      ...(placeholder ? { placeholder } : {}),
    });
  return html`<div data-cloud-identity>
  <p class="muted small">Jobs get short-lived cloud credentials from it; no keys are stored. Fill in the fields of the kind you choose.</p>
  <div class="field">
    <label for="identity-kind">Kind</label>
    <select id="identity-kind" name="identity_kind"${kind.attrs}>
      ${option('', 'None: jobs get no cloud credentials from Trellis', identity.kind)}
      ${option('assume_role', 'AWS: a role the agent assumes (with an external id)', identity.kind)}
      ${option('oidc_aws', 'AWS: a role assumed with the job token (OIDC)', identity.kind)}
      ${option('oidc_gcp', 'Google Cloud: workload identity federation (OIDC)', identity.kind)}
      ${option('oidc_azure', 'Azure: workload identity federation (OIDC)', identity.kind)}
      ${option('existing', 'One you already have (its id)', identity.kind)}
    </select>
    ${kind.note}
  </div>
  <fieldset class="identity-group" data-identity-group="aws">
    <legend>AWS</legend>
    ${field('role_arn', 'Role ARN', 'Both AWS kinds.', 'arn:aws:iam::123456789012:role/deploy')}
    ${field('external_id', 'External id (optional)', 'A role the agent assumes: a UUID; generated when left empty.')}
    ${field('session_duration', 'Session duration (optional)', 'OIDC: seconds, 900 to 43200.')}
  </fieldset>
  <fieldset class="identity-group" data-identity-group="gcp">
    <legend>Google Cloud</legend>
    ${field('workload_identity_provider', 'Workload identity provider', 'The pool provider jobs exchange their token with.', 'projects/123/locations/global/workloadIdentityPools/trellis/providers/trellis')}
    ${field('service_account_email', 'Service account (optional)', 'The account to impersonate.')}
  </fieldset>
  <fieldset class="identity-group" data-identity-group="azure">
    <legend>Azure</legend>
    ${field('tenant_id', 'Tenant id', 'A UUID.')}
    ${field('client_id', 'Client id', 'The application (client) id, a UUID.')}
  </fieldset>
  ${field('audience', 'Audience (optional)', "Any OIDC kind: the aud of job tokens; the cloud's default when left empty.")}
  ${field('id', 'Identity id', 'One you already have: its id, from the page of a configuration that uses it.')}
</div>`;
}

/** The configurations a successful deploy of which plans this one. */
function triggersFieldset(
  upstreams: readonly { id: string; name: string }[],
  chosen: readonly string[],
  issues: Issues,
): Html {
  const all = fieldMessages('triggers', issues.at('triggers', true));
  if (upstreams.length === 0) {
    return html`<p class="muted small" data-no-upstreams>Once this vineyard holds other configurations, this one can be planned after a deploy of any of them.</p>${all.note}`;
  }
  return html`<fieldset data-triggers>
    <legend>Plan this configuration after a successful deploy of</legend>
    ${upstreams.map(
      (upstream) => html`<div class="field check">
      <input type="checkbox" id="trigger-${upstream.id}" name="triggers_after" value="${upstream.id}"${chosen.includes(upstream.id) ? html` checked` : ''}>
      <label for="trigger-${upstream.id}">${upstream.name}</label>
    </div>`,
    )}
    ${all.note}
  </fieldset>`;
}

function filesFieldset(values: VineFormValues, issues: Issues): Html {
  const rows: FileRow[] = values.files.length > 0 ? values.files : [{ name: '', content: '' }];
  const all = fieldMessages('files', issues.at('source.files'));
  return html`<fieldset class="source-choice" data-inline-source>
    <legend><input type="radio" id="source-inline" name="source_type" value="inline"${values.source_type !== 'git' && values.source_type !== 'upload' ? html` checked` : ''}> <label for="source-inline">Files written here</label></legend>
    ${all.note}
    ${rows.map((row, index) => {
      const messages = fieldMessages(`file-${index}`, issues.at(`source.files.${row.name}`));
      return html`<div class="file-row" data-file-row="${String(index)}">
      <div class="field">
        <label for="file-${String(index)}-name">File ${String(index + 1)} name</label>
        <input id="file-${String(index)}-name" name="files.${String(index)}.name" value="${row.name}" placeholder="main.tf" autocomplete="off" spellcheck="false"${messages.attrs}>
        ${messages.note}
      </div>
      <div class="field">
        <label for="file-${String(index)}-content">File ${String(index + 1)} content</label>
        <textarea id="file-${String(index)}-content" name="files.${String(index)}.content" rows="${String(Math.min(24, Math.max(6, row.content.split('\n').length + 1)))}" spellcheck="false" class="code">
${row.content}</textarea>
      </div>
    </div>`;
    })}
  </fieldset>`;
}

function variablesFieldset(values: VineFormValues, issues: Issues): Html {
  // One empty row to fill beyond those typed.
  const rows: VariableRow[] = [...values.variables, { name: '', value: '', sensitive: false }];
  const all = fieldMessages('variables', issues.at('variables'));
  return html`<div data-variables>
  <p class="muted small">A sensitive value is write-only: it reaches the engine, but no page, answer or log shows it again.</p>
  ${all.note}
  ${rows.map((row, index) => {
    const id = `variable-${index}`;
    const messages = fieldMessages(id, issues.at(`variables.${row.name}`, true));
    const retype = row.sensitive && row.value === '' && row.name !== '';
    return html`<fieldset class="variable-row" data-variable-row="${String(index)}">
    <legend class="visually-hidden">Variable ${String(index + 1)}</legend>
    <div class="field">
      <label for="${id}-name">Variable ${String(index + 1)} name</label>
      <input id="${id}-name" name="variables.${String(index)}.name" value="${row.name}" autocomplete="off" spellcheck="false"${messages.attrs}>
    </div>
    <div class="field">
      <label for="${id}-value">Value</label>
      ${
        row.sensitive
          ? html`<input id="${id}-value" name="variables.${String(index)}.value" type="password" autocomplete="new-password"${retype ? html` placeholder="type it again" aria-describedby="${id}-retype"` : ''}>`
          : html`<input id="${id}-value" name="variables.${String(index)}.value" value="${row.value}" autocomplete="off" spellcheck="false">`
      }
      ${retype ? html`<span class="muted small" id="${id}-retype" data-retype>Sensitive: type the value again.</span>` : ''}
    </div>
    <div class="field check">
      <input type="checkbox" id="${id}-sensitive" name="variables.${String(index)}.sensitive" value="true"${row.sensitive ? html` checked` : ''}>
      <label for="${id}-sensitive">Sensitive</label>
    </div>
    ${messages.note}
  </fieldset>`;
  })}
</div>`;
}
