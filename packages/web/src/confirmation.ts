import { ValidationError } from '@trellis/core';
import type { Request } from 'express';
import { type Html, html } from './html.js';
import type { Page, Section } from './layout.js';
import type { Handler, PageContext } from './routing.js';
import { type Refusal, refusalOf } from './vineyardEdits/refusal.js';

/**
 * Dangerous buttons ask first, with or without script (issue 29): the button's form posts without
 * `confirmed`, which changes nothing and answers with this question; its own form posts the same
 * fields again with `confirmed=yes` (and, for what cannot be undone, the record's name typed).
 */
export interface Confirmation {
  title: string;
  question: string;
  /** The button that does it. */
  button: string;
  /** Where "Cancel" goes (under the base). */
  back: string;
  section?: Section;
  /** A name to type first (destroying every resource, say), or none. */
  typeName?: string;
}

/** Null when the form was confirmed (and the name typed); else the page that asks. */
export function unconfirmed(req: Request, base: string, ask: Confirmation): Page | null {
  const body = (req.body ?? {}) as Record<string, unknown>;
  if (body.confirmed !== 'yes') return confirmationPage(req, base, ask, null);
  if (ask.typeName === undefined || body.confirm === ask.typeName) return null;
  const message = `type ${ask.typeName} to confirm`;
  const refusal = refusalOf(new ValidationError(`${message}; nothing was done`, [{ path: 'confirm', message }]));
  return confirmationPage(req, base, ask, refusal);
}

function confirmationPage(req: Request, base: string, ask: Confirmation, refusal: Refusal | null): Page {
  const typedWrong = refusal?.detail;
  const body = (req.body ?? {}) as Record<string, unknown>;
  const kept = Object.entries(body).filter(
    (entry): entry is [string, string] =>
      entry[0] !== 'confirmed' && entry[0] !== 'confirm' && typeof entry[1] === 'string',
  );
  const typed =
    ask.typeName === undefined
      ? ''
      : html`<div class="field">
    <label for="action-confirm">Type <strong>${ask.typeName}</strong> to confirm</label>
    <input id="action-confirm" name="confirm" required autocomplete="off"${typedWrong ? html` aria-invalid="true" aria-describedby="action-confirm-error"` : ''}>
    ${typedWrong ? html`<span class="field-error" id="action-confirm-error" data-field-error="action-confirm">${typedWrong}</span>` : ''}
  </div>`;
  return {
    ...(refusal ? { status: refusal.status } : {}),
    title: ask.title,
    ...(ask.section ? { section: ask.section } : {}),
    body: html`<h1>${ask.title}</h1>
<section class="card danger-zone" data-confirmation>
<p>${ask.question}</p>
<form method="post" action="${req.originalUrl}" class="stacked-form">
  ${kept.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
  <input type="hidden" name="confirmed" value="yes">
  ${typed}
  <div class="actions"><button type="submit" class="button danger" data-confirm-yes>${ask.button}</button>
  <a class="button" href="${base}${ask.back}" data-confirm-cancel>Cancel</a></div>
</form>
</section>`,
  };
}

/** What core refused a button with, on a page of its own: its detail and code, and the way back. */
export function refusedActionPage(input: {
  title: string;
  refusal: Refusal;
  back: { path: string; label: string };
  base: string;
  section?: Section;
  /** A field's label on the form that was sent ("Paths" for `paths`), to name it as the person saw it. */
  labels?: Readonly<Record<string, string>>;
}): Page {
  const { refusal } = input;
  return {
    status: refusal.status,
    title: input.title,
    ...(input.section ? { section: input.section } : {}),
    body: html`<h1>${input.title}</h1>
${refusalParagraph(refusal, input.labels)}
<p><a class="button" href="${input.base}${input.back.path}" data-refused-back>${input.back.label}</a></p>`,
  };
}

/** Core's detail, each field issue it does not already say, and its code: "… [plan_not_ready]". */
export function refusalParagraph(refusal: Refusal, labels: Readonly<Record<string, string>> = {}): Html {
  const issues = refusal.fields
    .filter((issue) => !refusal.detail.includes(`${issue.path} ${issue.message}`))
    .map((issue) => `${labels[issue.path.replace(/(\.\d+|\[\d+\])+$/, '')] ?? issue.path} ${issue.message}`)
    .filter((line, index, all) => all.indexOf(line) === index);
  return html`<p class="error" role="alert" data-action-error="${refusal.code}">${refusal.detail}${
    issues.length > 0 ? ` (${issues.join('; ')})` : ''
  } [${refusal.code}]</p>`;
}

/** A form handler that asks first (`unconfirmed`), then does what it does. */
export function askingFirst(ask: (context: PageContext) => Confirmation, handler: Handler): Handler {
  return async (context) => unconfirmed(context.req, context.base, ask(context)) ?? handler(context);
}
