import { askingFirst } from '../confirmation.js';
import { NotFoundError } from '@trellis/core';
import type { Router } from 'express';
import type { FormProblem } from '../orgs/orgPages.js';
import { formProblem, type PageContext, pageQuery, Redirect, type WebRouteDeps } from '../routing.js';
import { mirrorPage } from './mirrorPage.js';
import { peopleOf } from './providerRoutes.js';
import { chooseNamespace, tabHref } from './registryNav.js';

/**
 * The provider network mirror of a namespace (issue 28): its archives a page at a time, read
 * through the same use case as the API, and a delete form the use case refuses to anyone but the
 * namespace's admins.
 */
export function mirrorRoutes(router: Router, deps: WebRouteDeps): void {
  /** A namespace's archives: `?namespace=` and its page, or the first page of the namespace a refused form named. */
  const showMirror = async (context: PageContext, refused?: { namespace: string; problem: FormProblem }) => {
    const { req, user, base, now, standing } = context;
    const roles = await standing();
    const choice = chooseNamespace(refused?.namespace ?? req.query.namespace, user, roles);
    const archives = await deps.useCases.mirror.list(user, choice.namespace, refused ? {} : pageQuery(req));
    return mirrorPage({
      base,
      host: req.get('host') ?? 'localhost',
      choice,
      archives,
      people: await peopleOf(deps, user, choice.ownerId),
      mayManage: choice.ownerId !== null && roles.may(choice.ownerId, 'registry.manage'),
      now,
      problem: refused?.problem ?? null,
    });
  };

  router.get(
    '/registry/mirror',
    deps.headers,
    deps.signedIn((context) => showMirror(context)),
  );

  router.post(
    '/registry/mirror/:namespace/:id/delete',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(
      askingFirst(
        ({ req }) => ({
          title: 'Delete from the mirror',
          question:
            'Delete this archive from the mirror? Configurations that install it from the mirror can no longer init.',
          button: 'Delete',
          back: tabHref('', 'mirror', String(req.params.namespace)),
          section: 'registry',
        }),
        async (context) => {
          const namespace = String(context.req.params.namespace);
          const id = String(context.req.params.id);
          try {
            await deps.useCases.mirror.delete(context.user, namespace, id);
          } catch (error) {
            if (error instanceof NotFoundError) throw error;
            return showMirror(context, { namespace, problem: formProblem(error) });
          }
          return new Redirect(tabHref('', 'mirror', namespace));
        },
      ),
    ),
  );
}
