import { NotFoundError, problemStatusOf, type UseCases, type UserActor, ValidationError } from '@trellis/core';
import type { Request, RequestHandler, Router } from 'express';
import { html } from '../html.js';
import type { Page } from '../layout.js';
import { formField, type Handler, type PageContext, Redirect } from '../routing.js';
import type { Standing } from '../standing.js';
import { type Refusal, refused } from './refusal.js';
import { newVinePage } from './newVinePage.js';
import { isMultipart, type MultipartForm, readMultipartForm } from './multipartForm.js';
import { createVineInput, EMPTY_VINE_FORM, shownAgain, type VineFormValues, vineFormValues } from './vineForm.js';
import { deleteVinePage, deleteVineyardPage, newVineyardPage, renameVineyardPage } from './vineyardEditPages.js';

export interface VineyardEditWebDeps {
  useCases: UseCases;
  headers: RequestHandler;
  signedIn(handler: Handler): RequestHandler;
  /** Our own Origin (the API's CSRF rule), then a form body large enough for a configuration's files. */
  sameOriginLargeForm: RequestHandler[];
}

/**
 * Creating, renaming and deleting vineyards, creating and deleting configurations (issue 29): forms
 * posted without script to these routes, which call the use cases the API calls. Core judges every
 * input and refuses with its problem; the form is shown again with it, as typed (no sensitive value).
 */
export function vineyardEditRoutes(router: Router, deps: VineyardEditWebDeps): void {
  const { useCases } = deps;
  const form = [deps.headers, ...deps.sameOriginLargeForm];

  /** The organizations where the person may create vineyards. */
  const managedOrgs = (standing: Standing) => standing.orgs.filter((org) => standing.may(org.id, 'vineyards.manage'));

  router.get(
    '/vineyards/new',
    deps.headers,
    deps.signedIn(async ({ req, standing }) =>
      newVineyardPage({
        base: req.baseUrl,
        orgs: managedOrgs(await standing()),
        name: '',
        orgId: typeof req.query.org_id === 'string' ? req.query.org_id : '',
      }),
    ),
  );

  router.post(
    '/vineyards',
    ...form,
    deps.signedIn(async ({ req, user, base, standing }) => {
      const name = formField(req, 'name') ?? '';
      const orgId = formField(req, 'org_id') ?? '';
      const result = await refused(() =>
        useCases.vineyards.create(user, { name, ...(orgId !== '' ? { org_id: orgId } : {}) }),
      );
      if ('done' in result) return new Redirect(`/vineyards/${result.done.id}`);
      return newVineyardPage({ base, orgs: managedOrgs(await standing()), name, orgId, refusal: result.refusal });
    }),
  );

  router.get(
    '/vineyards/:id/rename',
    deps.headers,
    deps.signedIn(async ({ req, user, base }) => {
      const vineyard = await useCases.vineyards.get(user, req.params.id);
      return renameVineyardPage({ base, vineyard, name: vineyard.name });
    }),
  );

  router.post(
    '/vineyards/:id/rename',
    ...form,
    deps.signedIn(async ({ req, user, base }) => {
      const vineyard = await useCases.vineyards.get(user, req.params.id);
      const name = formField(req, 'name') ?? '';
      const result = await refused(() => useCases.vineEdits.updateVineyard(user, vineyard.id, { name }));
      if ('done' in result) return new Redirect(`/vineyards/${vineyard.id}`);
      return renameVineyardPage({ base, vineyard, name, refusal: result.refusal });
    }),
  );

  router.get(
    '/vineyards/:id/delete',
    deps.headers,
    deps.signedIn(async ({ req, user, base }) =>
      deleteVineyardPage({ base, vineyard: await useCases.vineyards.get(user, req.params.id) }),
    ),
  );

  router.post(
    '/vineyards/:id/delete',
    ...form,
    deps.signedIn(async ({ req, user, base, standing }) => {
      const vineyard = await useCases.vineyards.get(user, req.params.id);
      const result = await refused(async () => {
        // Whoever may delete types the name (a stray click deletes nothing); anyone else hears core's refusal.
        if ((await standing()).may(vineyard.owner_id, 'vineyards.manage')) requireTyped(req, vineyard.name, 'vineyard');
        await useCases.vineEdits.deleteVineyard(user, vineyard.id);
      });
      if ('done' in result) return new Redirect('/vineyards');
      return deleteVineyardPage({ base, vineyard, refusal: result.refusal });
    }),
  );

  // ---- configurations

  /** The vineyard a new configuration goes in, or a page saying the person may not create one there. */
  const vineyardFor = async ({ req, user, standing }: PageContext) => {
    const vineyard = await useCases.vineyards.get(user, req.params.id);
    const roles = await standing();
    return { vineyard, may: roles.may(vineyard.owner_id, 'vineyards.manage'), org: roles.org(vineyard.owner_id) };
  };

  router.get(
    '/vineyards/:id/configurations/new',
    deps.headers,
    deps.signedIn(async (context) => {
      const { vineyard, may, org } = await vineyardFor(context);
      if (!may) return notAllowedPage(`New configuration in ${vineyard.name}`, org);
      return newVinePage({ base: context.base, vineyard, upstreams: vineyard.vines, values: EMPTY_VINE_FORM });
    }),
  );

  router.post(
    '/vineyards/:id/configurations',
    ...form,
    deps.signedIn(async (context) => {
      const { req, user, base } = context;
      const { vineyard } = await vineyardFor(context);
      // The form is multipart (it may carry a directory); a urlencoded post (no upload) is read as well.
      const multipart: MultipartForm | null = isMultipart(req) ? await readMultipartForm(req) : null;
      const body = multipart ? multipart.fields : req.body;
      const values = vineFormValues(body, multipart ?? undefined);
      const again = (more: { values: VineFormValues; refusal?: Refusal }): Page =>
        newVinePage({
          base,
          vineyard,
          upstreams: vineyard.vines,
          ...more,
          values: shownAgain(more.values),
          sensitiveDropped: values.variables.some((row) => row.sensitive && row.value !== ''),
        });
      // Adding a row sends the form back as typed, one row longer; nothing is created.
      const intent = fieldOf(body, 'intent');
      if (intent === 'add_file')
        return again({ values: { ...values, files: [...values.files, { name: '', content: '' }] } });
      if (intent === 'add_variable') {
        return again({
          values: { ...values, variables: [...values.variables, { name: '', value: '', sensitive: false }] },
        });
      }
      // What is wrong with an upload matters only when the upload is the source.
      const upload = values.source_type === 'upload';
      const uploadIssues = (multipart?.issues ?? []).filter((issue) => upload || issue.path !== 'source.upload');
      if (upload && multipart && multipart.files.length === 0 && multipart.skipped > 0) {
        uploadIssues.push({
          path: 'source.upload',
          message: `holds no configuration file (.tf, .tf.json, .tfvars, .terraform.lock.hcl): its ${multipart.skipped} files were left out`,
        });
      }
      const result = await refused(() =>
        useCases.vines.create(user, createVineInput(vineyard.id, values, uploadIssues)),
      );
      if ('done' in result) return new Redirect(`/configurations/${result.done.id}`);
      return again({ values, refusal: result.refusal });
    }),
  );

  router.get(
    '/configurations/:id/delete',
    deps.headers,
    deps.signedIn(async ({ req, user, base }) => {
      const vine = await useCases.vines.get(user, req.params.id);
      return deleteVinePage({ base, vine, vineyard: await vineyardOf(user, vine.vineyard_id), force: false });
    }),
  );

  router.post(
    '/configurations/:id/delete',
    ...form,
    deps.signedIn(async ({ req, user, base, standing }) => {
      const vine = await useCases.vines.get(user, req.params.id);
      const force = formField(req, 'force');
      const result = await refused(async () => {
        if ((await standing()).may(vine.owner_id, 'vineyards.manage')) requireTyped(req, vine.name, 'configuration');
        await useCases.vineEdits.delete(user, vine.id, { force });
      });
      if ('done' in result) return new Redirect(`/vineyards/${vine.vineyard_id}`);
      const vineyard = await vineyardOf(user, vine.vineyard_id);
      return deleteVinePage({ base, vine, vineyard, force: force === 'true', refusal: result.refusal });
    }),
  );

  /** A configuration's vineyard for its breadcrumbs, or none when it is gone. */
  const vineyardOf = (user: UserActor, id: string) =>
    useCases.vineyards.get(user, id).catch((error: unknown) => {
      if (error instanceof NotFoundError) return null;
      throw error;
    });
}

/** A field of a form's body (the first, when given more than once). */
function fieldOf(body: unknown, name: string): string | undefined {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  if (typeof value === 'string') return value;
  return Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;
}

/** The record's name, typed in the confirmation field, or a refusal that deletes nothing. */
function requireTyped(req: Request, name: string, what: string): void {
  if (formField(req, 'confirm') === name) return;
  const message = `type the ${what}'s name, ${name}, to delete it`;
  throw new ValidationError(`${message}; nothing was deleted`, [{ path: 'confirm', message }]);
}

function notAllowedPage(title: string, org: { name: string; role: string } | null): Page {
  return {
    title,
    section: 'vineyards',
    status: problemStatusOf('insufficient_role') ?? 403,
    body: html`<h1>${title}</h1>
<p class="error" data-not-allowed>Your role in ${org?.name ?? 'this organization'} is ${org?.role ?? 'too low'}: only its admins and owners create configurations.</p>`,
  };
}
