import { MAX_PAGE_LIMIT, NotFoundError, roleAllows } from '@trellis/core';
import type { RequestHandler, Router } from 'express';
import type { Page } from '../layout.js';
import { type FormProblem, orgPage, orgsPage } from './orgPages.js';
import { type Confirmation, unconfirmed } from '../confirmation.js';
import { formField, formProblem, type PageContext, Redirect, type WebRouteDeps } from '../routing.js';

/** Organizations (issue 12), their members and invitations: every change goes through the same use cases as the API. */
export function orgRoutes(router: Router, deps: WebRouteDeps): void {
  // ---- organizations (issue 12): every change goes through the same use cases as the API.

  /** The organizations page: the person's organizations and invitations, and what a failed form said. */
  const listOrgs = async ({ user, base, now }: PageContext, more: { problem?: FormProblem; name?: string } = {}) =>
    orgsPage({
      base,
      orgs: await deps.orgsOf(user),
      invitations: await deps.useCases.invitations.list(user),
      now,
      ...more,
    });

  router.get('/orgs', deps.headers, deps.signedIn(listOrgs));

  // Invitations (issue 23): accepting opens the organization joined; declining stays on the list.
  router.post(
    '/orgs/invitations/:id/:answer',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(async (context) => {
      const { id, answer } = context.req.params;
      try {
        if (answer === 'accept')
          return new Redirect(`/orgs/${(await deps.useCases.invitations.accept(context.user, id)).id}`);
        if (answer !== 'decline') throw new NotFoundError('invitation');
        await deps.useCases.invitations.decline(context.user, id);
        return new Redirect('/orgs');
      } catch (error) {
        return listOrgs(context, { problem: formProblem(error) });
      }
    }),
  );

  router.post(
    '/orgs',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(async (context) => {
      const name = formField(context.req, 'name');
      try {
        const org = await deps.useCases.orgs.create(context.user, { name });
        return new Redirect(`/orgs/${org.id}`);
      } catch (error) {
        return listOrgs(context, { problem: formProblem(error), name: name ?? '' });
      }
    }),
  );

  /** The organization page, with what a failed form said above its members. */
  const showOrg = async (context: PageContext, problem: FormProblem | null = null): Promise<Page> => {
    const { req, user, base, now } = context;
    const org = await deps.useCases.orgs.get(user, req.params.id);
    const members = [];
    let cursor: string | undefined;
    do {
      const page = await deps.useCases.orgs.listMembers(user, org.id, { limit: MAX_PAGE_LIMIT, cursor });
      members.push(...page.items);
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    return orgPage({ base, org, members, userId: user.userId, now, problem });
  };

  router.get('/orgs/:id', deps.headers, deps.signedIn(showOrg));

  /** A member form: the change, then back to the organization page (or what went wrong, on it). */
  const memberForm = (change: (context: PageContext) => Promise<void>, ask?: Confirmation): RequestHandler =>
    deps.signedIn(async (context) => {
      const asking = ask
        ? unconfirmed(context.req, context.base, { ...ask, back: `/orgs/${context.req.params.id}` })
        : null;
      if (asking) return asking;
      try {
        await change(context);
      } catch (error) {
        if (error instanceof NotFoundError) throw error;
        return showOrg(context, formProblem(error));
      }
      // A member who removed themselves (or gave up the role to see it) may no longer see the organization.
      const stillMember = (await deps.orgsOf(context.user)).some((org) => org.id === context.req.params.id);
      return new Redirect(stillMember ? `/orgs/${context.req.params.id}` : '/orgs');
    });

  router.post(
    '/orgs/:id/members',
    deps.headers,
    ...deps.sameOriginForm,
    memberForm(async ({ req, user }) => {
      await deps.useCases.orgs.addMember(user, req.params.id, {
        email: formField(req, 'email'),
        role: formField(req, 'role'),
      });
    }),
  );

  router.post(
    '/orgs/:id/members/:memberId/role',
    deps.headers,
    ...deps.sameOriginForm,
    memberForm(async ({ req, user }) => {
      await deps.useCases.orgs.setMemberRole(user, req.params.id, req.params.memberId, {
        role: formField(req, 'role'),
      });
    }),
  );

  router.post(
    '/orgs/:id/members/:memberId/remove',
    deps.headers,
    ...deps.sameOriginForm,
    memberForm(
      async ({ req, user }) => {
        await deps.useCases.orgs.removeMember(user, req.params.id, req.params.memberId);
      },
      {
        title: 'Remove from the organization',
        question: "Remove this membership? Whoever holds it loses access to the organization's records at once.",
        button: 'Remove',
        back: '',
        section: 'orgs',
      },
    ),
  );

  router.post(
    '/orgs/:id/rename',
    deps.headers,
    ...deps.sameOriginForm,
    memberForm(async ({ req, user }) => {
      await deps.useCases.orgs.rename(user, req.params.id, { name: formField(req, 'name') });
    }),
  );

  // Deleting asks for the organization's name, typed: a stray click (or a form sent with the
  // wrong organization's id) deletes nothing. Whoever may not delete it is told so by the use case.
  router.post(
    '/orgs/:id/delete',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(async (context) => {
      const { req, user } = context;
      try {
        const org = await deps.useCases.orgs.get(user, req.params.id);
        if (roleAllows(org.role, 'org.delete') && formField(req, 'confirm') !== org.name) {
          return showOrg(context, {
            status: 400,
            message: `Type the organization's name, ${org.name}, to delete it. Nothing was deleted.`,
          });
        }
        await deps.useCases.orgs.delete(user, org.id);
      } catch (error) {
        if (error instanceof NotFoundError) throw error;
        return showOrg(context, formProblem(error));
      }
      return new Redirect('/orgs');
    }),
  );
}
