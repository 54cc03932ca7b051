import type { EditVineInput, UseCases, UserActor, VineView } from '@trellis/core';
import { problemStatusOf } from '@trellis/core';
import { html } from '../html.js';
import type { Request, RequestHandler, Router } from 'express';
import type { Page } from '../layout.js';
import { Redirect } from '../routing.js';
import type { Standing } from '../standing.js';
import { refused } from '../vineyardEdits/refusal.js';
import { typedTags } from '../vineyardEdits/vineForm.js';
import { vineEditPage } from './vineEditPage.js';

export interface VineEditWebDeps {
  useCases: UseCases;
  headers: RequestHandler;
  /** A page for signed-in people (anyone else signs in first and comes back). */
  signedIn(
    handler: (context: {
      req: Request;
      user: UserActor;
      base: string;
      standing: () => Promise<Standing>;
    }) => Promise<Page | Redirect>,
  ): RequestHandler;
  /** Our own Origin (the API's CSRF rule), then a form body large enough for a configuration's files. */
  sameOriginLargeForm: RequestHandler[];
}

/**
 * `GET /configurations/:id/edit` (issue 25) and `POST` of its form (issue 29), which sends core only
 * what changed (as the API's `PATCH`); deleting goes through `vineyardEdits`.
 */
export function vineEditRoutes(router: Router, deps: VineEditWebDeps): void {
  const mayNotEdit = async (vine: VineView, standing: () => Promise<Standing>): Promise<Page | null> => {
    const org = (await standing()).org(vine.owner_id);
    if (!(await standing()).may(vine.owner_id, 'vineyards.manage')) {
      return {
        title: `Edit ${vine.name}`,
        section: 'vineyards',
        status: problemStatusOf('insufficient_role') ?? 403,
        body: html`<h1>Edit ${vine.name}</h1>
<p class="error">Your role in ${org?.name ?? 'this organization'} is ${org?.role ?? 'too low'}: only its admins and owners change or delete configurations.</p>`,
      };
    }
    return null;
  };

  router.get(
    '/configurations/:id/edit',
    deps.headers,
    deps.signedIn(async ({ req, user, base, standing }) => {
      const vine = await deps.useCases.vines.get(user, req.params.id);
      const notAllowed = await mayNotEdit(vine, standing);
      if (notAllowed) return notAllowed;
      const vineyard = await deps.useCases.vineyards.get(user, vine.vineyard_id).catch(() => null);
      return vineEditPage({ base, vine, vineyard });
    }),
  );

  router.post(
    '/configurations/:id/edit',
    deps.headers,
    ...deps.sameOriginLargeForm,
    deps.signedIn(async ({ req, user, base, standing }) => {
      const vine = await deps.useCases.vines.get(user, req.params.id);
      const notAllowed = await mayNotEdit(vine, standing);
      if (notAllowed) return notAllowed;
      const form = (req.body ?? {}) as Record<string, unknown>;
      const result = await refused(() => deps.useCases.vineEdits.update(user, vine.id, vineChanges(vine, form)));
      if ('done' in result) return new Redirect(`/configurations/${vine.id}`);
      const vineyard = await deps.useCases.vineyards.get(user, vine.vineyard_id).catch(() => null);
      return vineEditPage({ base, vine: asTyped(vine, form), vineyard, refusal: result.refusal });
    }),
  );
}

const text = (form: Record<string, unknown>, name: string): string => {
  const value = form[name];
  return typeof value === 'string' ? value.replace(/\r\n?/g, '\n') : '';
};

/** What the form changes of the vine, as the API's `PATCH` body: only the fields that differ. */
function vineChanges(vine: VineView, form: Record<string, unknown>): EditVineInput {
  const body: EditVineInput = {};
  const name = text(form, 'name');
  if (name !== vine.name) body.name = name;
  const engine = text(form, 'engine');
  const version = text(form, 'engine_version');
  if (engine !== vine.engine.name || version !== (vine.engine.version ?? '')) {
    body.engine = { name: engine, version: version || null };
  }
  const mode = text(form, 'execution_mode');
  if (mode !== vine.execution_mode) body.execution_mode = mode;
  // Tags are kept lower case and sorted: only a different set is a change.
  const tags = typedTags(text(form, 'tags'));
  const sorted = (list: string[]) => [...new Set(list.map((tag) => tag.toLowerCase()))].sort().join(',');
  if (sorted(tags) !== sorted(vine.tags)) body.tags = tags;
  const variables: Record<string, { value: string; sensitive: boolean } | null> = {};
  for (const [key, variable] of Object.entries(vine.variables)) {
    const value = text(form, `value:${key}`);
    const sensitive = form[`sensitive:${key}`] === 'on';
    if (form[`remove:${key}`] === 'on') variables[key] = null;
    // A sensitive value is write-only: an empty field keeps it.
    else if (variable.sensitive && value !== '') variables[key] = { value, sensitive };
    else if (!variable.sensitive && (value !== variable.value || sensitive)) variables[key] = { value, sensitive };
  }
  const newName = text(form, 'new_name');
  if (newName !== '') variables[newName] = { value: text(form, 'new_value'), sensitive: form.new_sensitive === 'on' };
  if (Object.keys(variables).length > 0) body.variables = variables;
  if (vine.source.type === 'inline') {
    const files: Record<string, string> = {};
    let changed = false;
    for (const [file, content] of Object.entries(vine.source.files)) {
      files[file] = text(form, `file:${file}`);
      changed ||= files[file] !== content;
    }
    const newFile = text(form, 'new_file_name');
    if (newFile !== '') {
      files[newFile] = text(form, 'new_file_content');
      changed = true;
    }
    if (changed) body.source = { type: 'inline', files };
  }
  return body;
}

/** The vine as the refused form had it typed, to show the form again (never a sensitive value). */
function asTyped(vine: VineView, form: Record<string, unknown>): VineView {
  const variables = Object.fromEntries(
    Object.entries(vine.variables).map(([key, variable]) => [
      key,
      variable.sensitive ? variable : { ...variable, value: text(form, `value:${key}`) },
    ]),
  );
  const source =
    vine.source.type === 'inline'
      ? {
          ...vine.source,
          files: Object.fromEntries(Object.keys(vine.source.files).map((file) => [file, text(form, `file:${file}`)])),
        }
      : vine.source;
  return {
    ...vine,
    name: text(form, 'name'),
    engine: { name: text(form, 'engine') as VineView['engine']['name'], version: text(form, 'engine_version') || null },
    execution_mode: text(form, 'execution_mode') as VineView['execution_mode'],
    tags: typedTags(text(form, 'tags')),
    variables,
    source,
  };
}
