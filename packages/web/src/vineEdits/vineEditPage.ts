import type { VineView, Vineyard } from '@trellis/core';
import { refusalParagraph } from '../confirmation.js';
import { html } from '../html.js';
import type { Page } from '../layout.js';
import type { Refusal } from '../vineyardEdits/refusal.js';

/**
 * Editing a vine (issue 25): its name, tags (issue 29), engine, execution mode (issue 27), inline files and
 * variables, and a link to deleting it (`vineyardEdits`' confirmation page). The form is posted
 * to `POST /configurations/:id/edit`, which sends core only what changed; a sensitive variable's
 * value is never on the page (write-only: typing one replaces it). A refused form comes back as
 * typed (`vine` then holds the typed values), with core's problem on top.
 */
export function vineEditPage(input: {
  base: string;
  vine: VineView;
  vineyard: Vineyard | null;
  refusal?: Refusal | null;
}): Page {
  const { base, vine, vineyard, refusal } = input;
  const variables = Object.entries(vine.variables).sort(([a], [b]) => a.localeCompare(b));
  const files =
    vine.source.type === 'inline' ? Object.entries(vine.source.files).sort(([a], [b]) => a.localeCompare(b)) : [];
  return {
    ...(refusal ? { status: refusal.status } : {}),
    title: `Edit ${vine.name}`,
    section: 'vineyards',
    body: html`<p class="breadcrumbs"><a href="${base}/vineyards">Vineyards</a> /
  ${vineyard ? html`<a href="${base}/vineyards/${vineyard.id}">${vineyard.name}</a> /` : ''}
  <a href="${base}/configurations/${vine.id}">${vine.name}</a> /</p>
<h1>Edit ${vine.name}</h1>
<p class="muted">Saving a change of files, variables or engine makes earlier plans stale: plan again before you deploy.</p>
${refusal ? refusalParagraph(refusal) : ''}
<form method="post" action="${base}/configurations/${vine.id}/edit" class="stacked-form card" data-vine-edit="${vine.id}">
  <h2>Configuration</h2>
  <label>Name <input name="name" required value="${vine.name}"></label>
  <label>Tags <span class="muted small">separated by commas or spaces: letters, digits, ':', '_', '.' and '-'; the fleet filters by them</span>
  <input name="tags" value="${vine.tags.join(', ')}" autocomplete="off" spellcheck="false" data-vine-tags-field></label>
  <label>Engine <select name="engine">
    <option value="tofu"${vine.engine.name === 'tofu' ? ' selected' : ''}>OpenTofu</option>
    <option value="terraform"${vine.engine.name === 'terraform' ? ' selected' : ''}>Terraform</option>
  </select></label>
  <label>Engine version <input name="engine_version" placeholder="the agent's default" value="${vine.engine.version ?? ''}"></label>
  <label>Execution mode <select name="execution_mode">
    <option value="remote"${vine.execution_mode === 'remote' ? ' selected' : ''}>Remote: the stock CLI's plans and applies run on the agents</option>
    <option value="local"${vine.execution_mode === 'local' ? ' selected' : ''}>Local: the stock CLI runs tofu on its own machine, the state stays here</option>
  </select></label>
  <h2>Variables</h2>
  <div class="table-scroll" role="region" aria-label="Variables" tabindex="0"><table data-variables>
    <thead><tr><th>Name</th><th>Value</th><th>Sensitive</th><th>Remove</th></tr></thead>
    <tbody>
    ${variables.map(
      ([name, variable]) => html`<tr data-variable="${name}" data-sensitive="${String(variable.sensitive)}">
      <td><code>${name}</code></td>
      <td>${
        variable.sensitive
          ? html`<input name="value:${name}" type="password" autocomplete="off" placeholder="unchanged; type to replace" aria-label="New value of ${name}">`
          : html`<input name="value:${name}" value="${variable.value}" aria-label="Value of ${name}">`
      }</td>
      <td><input type="checkbox" name="sensitive:${name}"${variable.sensitive ? ' checked' : ''} aria-label="${name} is sensitive"></td>
      <td><input type="checkbox" name="remove:${name}" aria-label="Remove ${name}"></td>
    </tr>`,
    )}
    <tr data-new-variable>
      <td><input name="new_name" placeholder="new variable" aria-label="New variable name"></td>
      <td><input name="new_value" aria-label="New variable value"></td>
      <td><input type="checkbox" name="new_sensitive" aria-label="New variable is sensitive"></td>
      <td></td>
    </tr>
    </tbody>
  </table></div>
  ${
    vine.source.type === 'inline'
      ? html`<h2>Files</h2>
  ${files.map(
    ([name, content]) =>
      html`<label class="file">${name}<textarea name="file:${name}" data-file="${name}" rows="${String(Math.min(24, Math.max(4, content.split('\n').length + 1)))}" spellcheck="false">${content}</textarea></label>`,
  )}
  <label>New file <input name="new_file_name" placeholder="variables.tf"></label>
  <label class="file">Its content<textarea name="new_file_content" rows="4" spellcheck="false"></textarea></label>`
      : html`<p class="muted">The source is git (<code>${vine.source.url}</code>); change it with <code>trellis configs update ${vine.name} --git URL</code>.</p>`
  }
  <div class="actions"><button type="submit" class="button primary" data-vine-save>Save</button>
  <a class="button" href="${base}/configurations/${vine.id}">Cancel</a></div>
</form>
<section class="card danger-zone">
  <h2>Delete</h2>
  <p>A configuration that still manages resources is destroyed first. Its jobs keep their history; its state versions are kept for the retention period.</p>
  <p><a class="button danger" href="${base}/configurations/${vine.id}/delete" data-delete-vine>Delete ${vine.name}…</a></p>
</section>`,
  };
}
