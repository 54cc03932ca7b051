import { readAll, stateResources, summarizeState, type UseCases, type UserActor, ValidationError } from '@trellis/core';
import type { Router } from 'express';
import type { Page } from '../layout.js';
import type { FormProblem } from '../orgs/orgPages.js';
import { unconfirmed } from '../confirmation.js';
import { formProblem, type PageContext, Redirect, type WebRouteDeps } from '../routing.js';
import { type CurrentState, statePage } from './statePage.js';

/**
 * `GET /configurations/:id/state` (issue 29), and its forms: roll back to a version, force-unlock,
 * acknowledge a late state. Each goes through the same use case as the API, which decides who may.
 */
export function stateRoutes(router: Router, deps: WebRouteDeps): void {
  const { useCases } = deps;

  const show = async (context: PageContext, problem: FormProblem | null = null): Promise<Page> => {
    const { req, user, base, standing } = context;
    const vine = await useCases.vines.get(user, req.params.id);
    const [vineyard, history, roles] = await Promise.all([
      useCases.vineyards.get(user, vine.vineyard_id).catch(() => null),
      useCases.tfe.history.list(user, vine.id),
      standing(),
    ]);
    const may = {
      download: roles.may(vine.owner_id, 'state.use'),
      rollback: roles.may(vine.owner_id, 'state.rollback'),
      forceUnlock: roles.may(vine.owner_id, 'state.force_unlock'),
      // Core's rule for acknowledging a late state is the force-unlock one (admins).
      acknowledge: roles.may(vine.owner_id, 'state.force_unlock'),
    };
    const newest = history.versions.find((version) => !version.rejected);
    const current = newest && may.download ? await readCurrent(useCases, user, vine.id, newest.id) : null;
    const org = roles.org(vine.owner_id);
    const people = new Map<string, string>();
    if (org) {
      const members = await useCases.orgs.listMembers(user, org.id, { limit: 200 });
      for (const member of members.items) if (member.user_id) people.set(member.user_id, member.email);
    }
    const done = typeof req.query.done === 'string' ? req.query.done : null;
    return statePage({ base, vine, vineyard, history, current, people, userId: user.userId, may, problem, done });
  };

  /**
   * A state form: asked first (a page of its own, no script needed), then the use case; its
   * refusal (403, 409) is shown on the page with core's message.
   */
  const stateForm =
    (
      ask: (context: PageContext) => { question: string; button: string },
      change: (context: PageContext) => Promise<string>,
    ) =>
    async (context: PageContext): Promise<Page | Redirect> => {
      const back = `/configurations/${context.req.params.id}/state`;
      const question = ask(context);
      const asking = unconfirmed(context.req, context.base, {
        title: question.button,
        ...question,
        back,
        section: 'vineyards',
      });
      if (asking) return asking;
      let done: string;
      try {
        done = await change(context);
      } catch (error) {
        return show(context, formProblem(error));
      }
      return new Redirect(`/configurations/${context.req.params.id}/state?done=${done}`);
    };

  router.get('/configurations/:id/state', deps.headers, deps.signedIn(show));

  router.post(
    '/configurations/:id/state/versions/:version/rollback',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(
      stateForm(
        ({ req }) => ({
          question: `Make version ${req.params.version} the current state? It is written as a new version with the next serial.`,
          button: `Roll back to version ${req.params.version}`,
        }),
        async ({ req, user }) => {
          await useCases.tfe.history.rollback(user, req.params.id, req.params.version);
          return 'rolled-back';
        },
      ),
    ),
  );

  router.post(
    '/configurations/:id/state/unlock',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(
      stateForm(
        () => ({
          question: 'Force-unlock this state? Only do this when no engine is still writing it.',
          button: 'Force unlock',
        }),
        async ({ req, user }) => {
          await useCases.tfe.history.forceUnlock(user, req.params.id);
          return 'unlocked';
        },
      ),
    ),
  );

  router.post(
    '/configurations/:id/state/acknowledge',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(
      stateForm(
        () => ({ question: 'Mark the late state reviewed?', button: 'Acknowledge' }),
        async ({ req, user }) => {
          await useCases.tfe.history.acknowledgeAfterLost(user, req.params.id);
          return 'acknowledged';
        },
      ),
    ),
  );
}

/** The current state's resources and outputs, read as the API's download of that version reads it. */
async function readCurrent(
  useCases: UseCases,
  user: UserActor,
  vineId: string,
  versionId: number,
): Promise<CurrentState | null> {
  const { body, version } = await useCases.tfe.history.download(user, vineId, versionId);
  const bytes = await readAll(body);
  try {
    return { version, resources: stateResources(bytes), outputs: summarizeState(bytes).outputs };
  } catch (error) {
    // A state that is not JSON (written with `tofu state push -force`) still lists its versions.
    if (error instanceof ValidationError && error.code === 'invalid_state_file') return null;
    throw error;
  }
}
