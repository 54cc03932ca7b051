import type { UseCases, UserActor } from '@trellis/core';
import { html } from '../html.js';
import type { Request, RequestHandler, Router } from 'express';
import type { Page } from '../layout.js';
import type { Standing } from '../standing.js';
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
    }) => Promise<Page>,
  ): RequestHandler;
}

/** `GET /configurations/:id/edit` (issue 25); saving goes through the JSON API, deleting through `vineyardEdits`. */
export function vineEditRoutes(router: Router, deps: VineEditWebDeps): void {
  router.get(
    '/configurations/:id/edit',
    deps.headers,
    deps.signedIn(async ({ req, user, base, standing }) => {
      const vine = await deps.useCases.vines.get(user, req.params.id);
      const org = (await standing()).org(vine.owner_id);
      if (!(await standing()).may(vine.owner_id, 'vineyards.manage')) {
        return {
          title: `Edit ${vine.name}`,
          section: 'vineyards',
          status: 403,
          body: html`<h1>Edit ${vine.name}</h1>
<p class="error">Your role in ${org?.name ?? 'this organization'} is ${org?.role ?? 'too low'}: only its admins and owners change or delete configurations.</p>`,
        };
      }
      const vineyard = await deps.useCases.vineyards.get(user, vine.vineyard_id).catch(() => null);
      return vineEditPage({ base, vine, vineyard });
    }),
  );
}
