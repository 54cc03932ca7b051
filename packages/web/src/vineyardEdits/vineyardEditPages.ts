import type { VineView, VineyardView } from '@trellis/core';
import { type Html, html } from '../html.js';
import type { Page } from '../layout.js';
import type { OrgEntry } from '../standing.js';
import { breadcrumbs, fieldMessages, Issues, refusalBox, textField } from './formParts.js';
import type { Refusal } from './refusal.js';

/**
 * Creating, renaming and deleting vineyards and creating and deleting configurations (issue 29):
 * plain forms posted to the web's own routes, which work without the page script. A refused form
 * comes back with core's detail on top and each field's message beside the field, everything as
 * typed except sensitive values, which are never sent back to the browser.
 */

// ---- vineyards

/** `GET /vineyards/new`: a name, and whose records it joins (the person's own, or an organization they manage in). */
export function newVineyardPage(input: {
  base: string;
  /** The organizations the person may create vineyards in. */
  orgs: readonly OrgEntry[];
  name: string;
  orgId: string;
  refusal?: Refusal | null;
}): Page {
  const { base, orgs, refusal } = input;
  const issues = new Issues(refusal);
  const name = textField({
    id: 'vineyard-name',
    name: 'name',
    label: 'Name',
    hint: "Letters, digits, '.', '_' or '-', e.g. production.",
    value: input.name,
    messages: issues.at('name'),
    required: true,
  });
  const owner = fieldMessages('vineyard-org', issues.at('org_id'));
  return {
    ...(refusal ? { status: refusal.status } : {}),
    title: 'New vineyard',
    section: 'vineyards',
    body: html`${breadcrumbs(base)}
<h1>New vineyard</h1>
<section class="card">
${refusalBox(refusal, issues.rest())}
<form method="post" action="${base}/vineyards" class="stacked-form create-form" data-create-vineyard>
  ${name}
  <div class="field">
    <label for="vineyard-org">Owner</label>
    <select id="vineyard-org" name="org_id"${owner.attrs}>
      <option value="">You (your own records)</option>
      ${orgs.map((org) => html`<option value="${org.id}"${org.id === input.orgId ? html` selected` : ''}>${org.name} (organization)</option>`)}
    </select>
    ${owner.note}
  </div>
  <div class="actions"><button type="submit" class="button primary">Create vineyard</button>
  <a class="button" href="${base}/vineyards">Cancel</a></div>
</form>
</section>`,
  };
}

/** The rename form and the way to delete, on a vineyard's page for those who may manage it. */
export function vineyardManageSection(base: string, vineyard: VineyardView): Html {
  return html`<section class="card" data-vineyard-manage>
  <h2>Manage</h2>
  <form method="post" action="${base}/vineyards/${vineyard.id}/rename" class="inline-form" data-vineyard-rename>
    <label for="vineyard-rename">Name</label>
    <input id="vineyard-rename" name="name" required value="${vineyard.name}" autocomplete="off">
    <button type="submit" class="button">Rename</button>
  </form>
  <p><a class="button danger" href="${base}/vineyards/${vineyard.id}/delete" data-delete-vineyard>Delete ${vineyard.name}…</a>
  ${vineyard.vines.length > 0 ? html`<span class="muted small">A vineyard is deleted once it holds no configurations.</span>` : ''}</p>
</section>`;
}

/** `POST /vineyards/:id/rename` refused: the form again, with what was typed and why. */
export function renameVineyardPage(input: {
  base: string;
  vineyard: VineyardView;
  name: string;
  refusal?: Refusal | null;
}): Page {
  const { base, vineyard, refusal } = input;
  const issues = new Issues(refusal);
  const name = textField({
    id: 'vineyard-name',
    name: 'name',
    label: 'New name',
    value: input.name,
    messages: issues.at('name'),
    required: true,
  });
  return {
    ...(refusal ? { status: refusal.status } : {}),
    title: `Rename ${vineyard.name}`,
    section: 'vineyards',
    body: html`${breadcrumbs(base, vineyard)}
<h1>Rename ${vineyard.name}</h1>
<section class="card">
${refusalBox(refusal, issues.rest())}
<form method="post" action="${base}/vineyards/${vineyard.id}/rename" class="stacked-form" data-vineyard-rename>
  ${name}
  <div class="actions"><button type="submit" class="button primary">Rename</button>
  <a class="button" href="${base}/vineyards/${vineyard.id}">Cancel</a></div>
</form>
</section>`,
  };
}

/** The confirmation of a deletion: the record's name, typed, and the button. */
function deleteForm(input: {
  action: string;
  name: string;
  what: string;
  cancel: string;
  issues: Issues;
  more?: Html;
}): Html {
  const confirm = fieldMessages('delete-confirm', input.issues.at('confirm'));
  return html`<form method="post" action="${input.action}" class="stacked-form" data-delete-form>
  <div class="field">
    <label for="delete-confirm">Type <strong>${input.name}</strong> to confirm</label>
    <input id="delete-confirm" name="confirm" required autocomplete="off"${confirm.attrs}>
    ${confirm.note}
  </div>
  ${input.more ?? ''}
  <div class="actions"><button type="submit" class="button danger" data-confirm-delete>Delete ${input.what}</button>
  <a class="button" href="${input.cancel}">Cancel</a></div>
</form>`;
}

/** `GET /vineyards/:id/delete`: only an empty vineyard is deleted (core says which configurations stand in the way). */
export function deleteVineyardPage(input: { base: string; vineyard: VineyardView; refusal?: Refusal | null }): Page {
  const { base, vineyard, refusal } = input;
  const issues = new Issues(refusal);
  const form = deleteForm({
    action: `${base}/vineyards/${vineyard.id}/delete`,
    name: vineyard.name,
    what: vineyard.name,
    cancel: `${base}/vineyards/${vineyard.id}`,
    issues,
  });
  return {
    ...(refusal ? { status: refusal.status } : {}),
    title: `Delete ${vineyard.name}`,
    section: 'vineyards',
    body: html`${breadcrumbs(base, vineyard)}
<h1>Delete ${vineyard.name}</h1>
<section class="card danger-zone">
${refusalBox(refusal, issues.rest())}
<p>A vineyard is deleted once it holds no configurations. Its name is free at once; the jobs of its deleted configurations keep their history.</p>
${form}
</section>`,
  };
}

// ---- configurations

/** `GET /configurations/:id/delete`: the typed name, and force for one that still manages resources. */
export function deleteVinePage(input: {
  base: string;
  vine: VineView;
  vineyard: { id: string; name: string } | null;
  force: boolean;
  refusal?: Refusal | null;
}): Page {
  const { base, vine, vineyard, refusal } = input;
  const issues = new Issues(refusal);
  const force = fieldMessages('delete-force', issues.at('force'));
  const form = deleteForm({
    action: `${base}/configurations/${vine.id}/delete`,
    name: vine.name,
    what: vine.name,
    cancel: `${base}/configurations/${vine.id}`,
    issues,
    more: html`<div class="field check">
    <input type="checkbox" id="delete-force" name="force" value="true"${input.force ? html` checked` : ''}${force.attrs}>
    <label for="delete-force">Delete even though it manages resources: they keep running, unmanaged (organization admins and owners)</label>
    ${force.note}
  </div>`,
  });
  return {
    ...(refusal ? { status: refusal.status } : {}),
    title: `Delete ${vine.name}`,
    section: 'vineyards',
    body: html`${breadcrumbs(base, vineyard ?? undefined)}
<h1>Delete ${vine.name}</h1>
<section class="card danger-zone">
${refusalBox(refusal, issues.rest())}
<p>A configuration that still manages resources is destroyed first (or deleted with force). One with a queued or running job, or connected to a repository, is not deleted. Its jobs keep their history; its state versions are kept for the retention period.</p>
${form}
</section>`,
  };
}
