import type { FieldIssue } from '@trellis/core';
import { type Html, html } from '../html.js';
import type { Refusal } from './refusal.js';

/**
 * The parts of the create, rename and delete forms (issue 29): a refused form comes back with
 * core's detail on top and each field's message beside the field.
 */

/** The issues of a refusal, split into those a field of the page shows and the rest. */
export class Issues {
  private readonly placed = new Set<FieldIssue>();

  constructor(private readonly refusal: Refusal | null | undefined) {}

  /** The messages of the issues at `path` (or, with `under`, at `path` and below it). */
  at(path: string, under = false): string[] {
    const found = (this.refusal?.fields ?? []).filter(
      (issue) => issue.path === path || (under && issue.path.startsWith(`${path}.`)),
    );
    for (const issue of found) this.placed.add(issue);
    return found.map((issue) => issue.message);
  }

  /** The issues no field took, to list in the box on top. Call after the fields are rendered. */
  rest(): FieldIssue[] {
    return (this.refusal?.fields ?? []).filter((issue) => !this.placed.has(issue));
  }
}

/** The refusal's box: core's detail, the issues no field shows, and a note when sensitive values are gone. */
export function refusalBox(
  refusal: Refusal | null | undefined,
  rest: FieldIssue[],
  note: Html | string = '',
): Html | string {
  if (!refusal) return '';
  return html`<div class="error form-refusal" role="alert" data-form-error="${refusal.code}">
  <p>${refusal.detail}${refusal.fields.length > rest.length ? ': see the messages beside the fields below' : ''}</p>
  ${rest.length > 0 ? html`<ul>${rest.map((issue) => html`<li><code>${issue.path}</code> ${issue.message}</li>`)}</ul>` : ''}
  ${note}
</div>`;
}

/** The messages beside a field, and the attributes that tie the field to them. */
export function fieldMessages(id: string, messages: string[]): { note: Html | string; attrs: Html | string } {
  if (messages.length === 0) return { note: '', attrs: '' };
  return {
    note: html`<span class="field-error" id="${id}-error" data-field-error="${id}">${messages.join('; ')}</span>`,
    attrs: html` aria-invalid="true" aria-describedby="${id}-error"`,
  };
}

/** A labelled one-line text field with its messages. */
export function textField(input: {
  id: string;
  name: string;
  label: string;
  value: string;
  messages: string[];
  hint?: string;
  required?: boolean;
  placeholder?: string;
}): Html {
  const { note, attrs } = fieldMessages(input.id, input.messages);
  return html`<div class="field">
  <label for="${input.id}">${input.label}</label>
  ${input.hint ? html`<span class="muted small">${input.hint}</span>` : ''}
  <input id="${input.id}" name="${input.name}" value="${input.value}"${input.required ? html` required` : ''}${input.placeholder ? html` placeholder="${input.placeholder}"` : ''} autocomplete="off"${attrs}>
  ${note}
</div>`;
}

export function breadcrumbs(base: string, vineyard?: { id: string; name: string }): Html {
  return html`<p class="breadcrumbs"><a href="${base}/vineyards">Vineyards</a> /${
    vineyard ? html` <a href="${base}/vineyards/${vineyard.id}">${vineyard.name}</a> /` : ''
  }</p>`;
}
