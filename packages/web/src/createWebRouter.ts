import {
  type Clock,
  type ConfiguredProvider,
  ConflictError,
  DomainError,
  ForbiddenError,
  isUuid,
  jobTokenSubject,
  MAX_PAGE_LIMIT,
  NotFoundError,
  roleAllows,
  type PageQuery,
  safeNextOr,
  type UseCases,
  type UserActor,
  ValidationError,
} from '@trellis/core';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { Assets } from './assets.js';
import { type LayoutContext, layout, type Page } from './layout.js';
import { approveCliLoginPage, cliLoginCodePage, invalidCliLoginPage, usedCliLoginPage } from './pages/cliLoginPages.js';
import { vinePage } from './pages/vinePage.js';
import { crossSitePage, notFoundPage, serverErrorPage, signInAgainPage } from './pages/errorPages.js';
import { jobPage } from './pages/jobPage.js';
import { type AuditFilters, auditPage } from './pages/auditPage.js';
import { type JobListFilters, jobsPage } from './pages/jobsPage.js';
import { signInPage } from './pages/signInPage.js';
import { vineyardPage, vineyardsPage } from './pages/vineyardPages.js';
import { tokensPage } from './pages/tokensPage.js';
import { notificationPage, notificationsPage } from './pages/notificationsPage.js';
import { policiesPage, policyPage } from './pages/policiesPage.js';
import { workersPage } from './pages/workersPage.js';
import { type FormProblem, orgPage, orgsPage } from './pages/orgPages.js';
import { type OrgEntry, orgFilterOf, Standing } from './standing.js';
import { signInPath } from './paths.js';
import { securityHeaders } from './securityHeaders.js';
import { vineyardNames } from './vineyardNames.js';
import { tfeLoginRoutes } from './tfe/tfeLoginRoutes.js';
import { stateSection } from './tfe/stateSection.js';

export interface WebOptions {
  useCases: UseCases;
  /**
   * The signed-in user of the request, or null. The composition root reads the session cookie
   * here and slides it forward (SPEC §5.2: the session is refreshed on every request).
   */
  currentUser(req: Request, res: Response): UserActor | null;
  /** Whether an `Origin` header is the web interface's own (DESIGN §4 CSRF rule). */
  isWebOrigin(origin: string | undefined): boolean;
  /** Public origin of the web interface; https turns on HSTS. */
  webOrigin: string;
  /** Providers that `GET /auth/signin/{id}?next=` signs in with, one button each. */
  signInProviders: readonly ConfiguredProvider[];
  /** Whether `GET /auth/bootstrap?token=` works (the sign-in page then says how to use it). */
  bootstrapEnabled: boolean;
  clock?: Clock;
  /** Told about unexpected errors, which the page never shows. */
  onError?: (error: unknown, req: Request) => void;
  /** Lifetime of the token `tofu login` mints, as its consent page says it (default 90 days). */
  tfeLoginTokenDays?: number;
}

interface PageContext {
  req: Request;
  res: Response;
  user: UserActor;
  base: string;
  now: Date;
  /** The person's organizations and roles, read once per request (a removed member sees it at once). */
  standing: () => Promise<Standing>;
}

/** A redirect to a path under the web interface's base. */
class Redirect {
  constructor(readonly path: string) {}
}

type Handler = (context: PageContext) => Promise<Page | Redirect>;

/**
 * The web interface as an express router: server-rendered pages for `/`, `/signin`,
 * `/cli/login`, `/vineyards`, `/configurations/:id`, `/jobs`, `/jobs/:id` and `/workers`, and
 * their stylesheet and script under `/assets/`. Everything it changes goes through the JSON API
 * (with the session cookie) or, for the CLI login approval, through a form checked like the API.
 */
export function createWebRouter(options: WebOptions): Router {
  const router = express.Router();
  const assets = new Assets();
  const headers = securityHeaders({ https: new URL(options.webOrigin).protocol === 'https:' });
  const now = () => options.clock?.now() ?? new Date();
  const { useCases } = options;

  /** Every organization of the person (a page of them at a time), with their role in each. */
  const orgsOf = async (user: UserActor): Promise<(OrgEntry & { created_at: string })[]> => {
    const orgs: (OrgEntry & { created_at: string })[] = [];
    let cursor: string | undefined;
    do {
      const page = await useCases.orgs.list(user, { limit: MAX_PAGE_LIMIT, cursor });
      orgs.push(...page.items);
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    return orgs;
  };

  const render = (req: Request, res: Response, page: Page, user: UserActor | null, standing?: Standing | null) => {
    const base = req.baseUrl;
    const context: LayoutContext = {
      base,
      user,
      standing: standing ?? null,
      assets: {
        css: assets.url(base, 'trellis.css'),
        js: assets.url(base, 'trellis.js'),
        icon: assets.url(base, 'favicon.svg'),
      },
    };
    res.status(page.status ?? 200);
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.send(layout(page, context).value);
  };

  const failed = (req: Request, res: Response, error: unknown, user: UserActor | null) => {
    if (error instanceof NotFoundError || (error instanceof ValidationError && error.code === 'validation_failed')) {
      render(req, res, notFoundPage(req.baseUrl), user);
      return;
    }
    if (!(error instanceof DomainError)) options.onError?.(error, req);
    render(req, res, serverErrorPage(req.baseUrl), user);
  };

  /** A page for signed-in people; anyone else is sent to sign in and brought back. */
  const signedIn =
    (handler: Handler): RequestHandler =>
    async (req, res) => {
      const user = options.currentUser(req, res);
      if (!user) {
        if (req.method === 'GET' || req.method === 'HEAD') res.redirect(303, `${req.baseUrl}${signInPath(req.url)}`);
        else render(req, res, signInAgainPage(req.baseUrl), null);
        return;
      }
      let standing: Promise<Standing> | null = null;
      const standingOf = () => {
        standing ??= orgsOf(user).then((orgs) => new Standing(user.userId, orgs));
        return standing;
      };
      try {
        const result = await handler({ req, res, user, base: req.baseUrl, now: now(), standing: standingOf });
        if (result instanceof Redirect) res.redirect(303, `${req.baseUrl}${result.path}`);
        else render(req, res, result, user, await standingOf());
      } catch (error) {
        failed(req, res, error, user);
      }
    };

  router.get('/assets/:name', assets.handler());

  router.get('/signin', headers, (req, res) => {
    const next = safeNextOr(req.query.next);
    if (options.currentUser(req, res)) {
      res.redirect(303, `${req.baseUrl}${next}`);
      return;
    }
    const page = signInPage({
      base: req.baseUrl,
      next,
      providers: options.signInProviders,
      bootstrapEnabled: options.bootstrapEnabled,
      forCliLogin: next.startsWith('/cli/login'),
      error: signInError(req.query),
    });
    render(req, res, page, null);
  });

  router.get(
    '/',
    headers,
    signedIn(async () => new Redirect('/vineyards')),
  );

  router.get(
    '/cli/login',
    headers,
    signedIn(async ({ req, user, base }) => {
      const deviceCode = req.query.device_code;
      if (!isUuid(deviceCode)) return invalidCliLoginPage();
      return approveCliLoginPage({ base, user, deviceCode: deviceCode.toLowerCase() });
    }),
  );

  /** The API's CSRF rule for the forms here: a POST must come with our own Origin. */
  const sameOrigin: RequestHandler = (req, res, next) => {
    if (!options.isWebOrigin(req.headers.origin)) {
      render(req, res, crossSitePage(), null);
      return;
    }
    next();
  };

  /** Forms that change something: sent from our own pages (the API's CSRF rule), with a small body. */
  const sameOriginForm: RequestHandler[] = [sameOrigin, express.urlencoded({ extended: false, limit: '4kb' })];

  // The code is made by a POST from the approval page, never by the GET that opens it: a link
  // alone (sent by someone else, or fetched by a preview bot) must not approve a login for the
  // person who follows it. This is the same CSRF rule as the API's: the Origin must be ours.

  router.post(
    '/cli/login',
    headers,
    ...sameOriginForm,
    signedIn(async ({ req, user }) => {
      const deviceCode = (req.body as Record<string, unknown> | undefined)?.device_code;
      if (!isUuid(deviceCode)) return invalidCliLoginPage();
      try {
        const login = await useCases.auth.generateCliLogin(user, deviceCode.toLowerCase());
        return cliLoginCodePage({ user, verificationCode: login.verification_code, expiresAt: login.expires_at });
      } catch (error) {
        if (error instanceof ConflictError && error.code === 'device_code_used') return usedCliLoginPage();
        throw error;
      }
    }),
  );

  tfeLoginRoutes(router, {
    useCases,
    headers,
    signedIn,
    sameOrigin,
    currentUser: options.currentUser,
    render,
    tokenDays: options.tfeLoginTokenDays ?? 90,
  });

  // A workspace's `self-html` link in the Terraform Cloud protocol (docs/terraform-cloud.md).
  router.get(
    '/app/:org/workspaces/:name',
    headers,
    signedIn(async ({ req, user }) => {
      const ref = { organization: String(req.params.org), name: String(req.params.name) };
      return new Redirect(`/configurations/${(await useCases.tfe.workspaces.read(user, ref)).vine.id}`);
    }),
  );

  router.get(
    '/vineyards',
    headers,
    signedIn(async ({ req, user, base, now, standing }) => {
      const orgFilter = orgFilterOf(req.query.org_id);
      const vineyards = await useCases.vineyards.list(user, { ...pageQuery(req), org_id: orgFilter });
      return vineyardsPage({ base, vineyards, standing: await standing(), orgFilter, now });
    }),
  );

  router.get(
    '/vineyards/:id',
    headers,
    signedIn(async ({ req, user, base, now, standing }) => {
      const vineyard = await useCases.vineyards.get(user, req.params.id);
      const [vines, lastJobs] = await Promise.all([
        Promise.all(vineyard.vines.map((vine) => useCases.vines.get(user, vine.id))),
        Promise.all(vineyard.vines.map((vine) => useCases.jobs.list(user, { vine_id: vine.id, limit: 1 }))),
      ]);
      const lastJobOf = new Map(lastJobs.flatMap((page) => page.items.map((job) => [job.vine_id ?? '', job] as const)));
      return vineyardPage({ base, vineyard, vines, lastJobs: lastJobOf, standing: await standing(), now });
    }),
  );

  router.get(
    '/configurations/:id',
    headers,
    signedIn(async ({ req, user, base, now, standing }) => {
      const vine = await useCases.vines.get(user, req.params.id);
      const [vineyard, jobs, vcs, stateHistory, planless] = await Promise.all([
        useCases.vineyards.get(user, vine.vineyard_id).catch(notFoundAsNull),
        useCases.jobs.list(user, { vine_id: vine.id }),
        useCases.vcs.find(user, vine.id),
        useCases.tfe.history.list(user, vine.id),
        useCases.jobs.planlessActions(user, vine.id),
      ]);
      const roles = await standing();
      const state = stateSection({
        base,
        history: stateHistory,
        mayUseState: roles.may(vine.owner_id, 'state.use'),
        mayForceUnlock: roles.may(vine.owner_id, 'state.force_unlock'),
        executionMode: vine.execution_mode,
        tags: vine.tags,
      });
      return vinePage({
        base,
        vine,
        vineyard,
        jobs,
        planless,
        mayRun: roles.may(vine.owner_id, 'jobs.run'),
        mayManage: roles.may(vine.owner_id, 'vineyards.manage'),
        org: roles.org(vine.owner_id),
        vcs,
        vcsProviders: useCases.vcs.providers(),
        now,
        state,
        // What a cloud's trust policy names for this vine's job tokens (issue 16).
        ...(vine.cloud_identity?.kind === 'oidc'
          ? {
              oidc: {
                issuer: useCases.workloadIdentity.discovery().issuer,
                subjects: {
                  deploy: jobTokenSubject({ vineyard_id: vine.vineyard_id, vine_id: vine.id }, 'DEPLOY', 'standard'),
                  plan: jobTokenSubject({ vineyard_id: vine.vineyard_id, vine_id: vine.id }, 'PLAN', 'standard'),
                  speculative: jobTokenSubject(
                    { vineyard_id: vine.vineyard_id, vine_id: vine.id },
                    'PLAN',
                    'speculative',
                  ),
                },
              },
            }
          : {}),
      });
    }),
  );

  router.get(
    '/jobs',
    headers,
    signedIn(async ({ req, user, base, now }) => {
      const filters = jobFilters(req);
      return jobsPage({ base, jobs: await useCases.jobs.list(user, { ...filters, ...pageQuery(req) }), filters, now });
    }),
  );

  router.get(
    '/jobs/:id',
    headers,
    signedIn(async ({ req, user, base, now, standing }) => {
      const job = await useCases.jobWaiting.show(user, req.params.id);
      const gitDriven = job.trigger?.type === 'push' || job.trigger?.type === 'pull_request';
      const [vineyard, appliedBy, vine, vcsFeedback] = await Promise.all([
        job.vineyard_id ? useCases.vineyards.get(user, job.vineyard_id).catch(notFoundAsNull) : null,
        job.job_type === 'PLAN' ? useCases.jobs.deployOfPlan(user, job.id) : null,
        job.job_type === 'PLAN' && job.vine_id ? useCases.vines.get(user, job.vine_id).catch(notFoundAsNull) : null,
        gitDriven ? useCases.vcsFeedback.forJob(user, job.id) : null,
      ]);
      const roles = await standing();
      return jobPage({
        base,
        job,
        vineyard,
        appliedBy,
        vcsFeedback,
        mayRun: roles.may(job.owner_id, 'jobs.run'),
        org: roles.org(job.owner_id),
        now,
        approvalSetting: vine?.approval ?? null,
        waitingFor: job.waiting_for,
        review: {
          mayApprove: roles.may(job.owner_id, 'plans.approve'),
          mayOverride: roles.may(job.owner_id, 'plans.override'),
        },
      });
    }),
  );

  router.get(
    '/workers',
    headers,
    signedIn(async ({ req, user, base, now, standing }) => {
      const orgFilter = orgFilterOf(req.query.org_id);
      const workers = await useCases.workers.listForPerson(user, { ...pageQuery(req), org_id: orgFilter });
      return workersPage({ base, workers, standing: await standing(), orgFilter, now });
    }),
  );

  // ---- organizations (issue 12): every change goes through the same use cases as the API.

  /** The organizations page: the person's organizations and invitations, and what a failed form said. */
  const listOrgs = async ({ user, base, now }: PageContext, more: { problem?: FormProblem; name?: string } = {}) =>
    orgsPage({ base, orgs: await orgsOf(user), invitations: await useCases.invitations.list(user), now, ...more });

  router.get('/orgs', headers, signedIn(listOrgs));

  // Invitations (issue 23): accepting opens the organization joined; declining stays on the list.
  router.post(
    '/orgs/invitations/:id/:answer',
    headers,
    ...sameOriginForm,
    signedIn(async (context) => {
      const { id, answer } = context.req.params;
      try {
        if (answer === 'accept')
          return new Redirect(`/orgs/${(await useCases.invitations.accept(context.user, id)).id}`);
        if (answer !== 'decline') throw new NotFoundError('invitation');
        await useCases.invitations.decline(context.user, id);
        return new Redirect('/orgs');
      } catch (error) {
        return listOrgs(context, { problem: formProblem(error) });
      }
    }),
  );

  router.post(
    '/orgs',
    headers,
    ...sameOriginForm,
    signedIn(async (context) => {
      const name = formField(context.req, 'name');
      try {
        const org = await useCases.orgs.create(context.user, { name });
        return new Redirect(`/orgs/${org.id}`);
      } catch (error) {
        return listOrgs(context, { problem: formProblem(error), name: name ?? '' });
      }
    }),
  );

  /** The organization page, with what a failed form said above its members. */
  const showOrg = async (context: PageContext, problem: FormProblem | null = null): Promise<Page> => {
    const { req, user, base, now } = context;
    const org = await useCases.orgs.get(user, req.params.id);
    const members = [];
    let cursor: string | undefined;
    do {
      const page = await useCases.orgs.listMembers(user, org.id, { limit: MAX_PAGE_LIMIT, cursor });
      members.push(...page.items);
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    return orgPage({ base, org, members, userId: user.userId, now, problem });
  };

  router.get('/orgs/:id', headers, signedIn(showOrg));

  /** A member form: the change, then back to the organization page (or what went wrong, on it). */
  const memberForm = (change: (context: PageContext) => Promise<void>): RequestHandler =>
    signedIn(async (context) => {
      try {
        await change(context);
      } catch (error) {
        if (error instanceof NotFoundError) throw error;
        return showOrg(context, formProblem(error));
      }
      // A member who removed themselves (or gave up the role to see it) may no longer see the organization.
      const stillMember = (await orgsOf(context.user)).some((org) => org.id === context.req.params.id);
      return new Redirect(stillMember ? `/orgs/${context.req.params.id}` : '/orgs');
    });

  router.post(
    '/orgs/:id/members',
    headers,
    ...sameOriginForm,
    memberForm(async ({ req, user }) => {
      await useCases.orgs.addMember(user, req.params.id, {
        email: formField(req, 'email'),
        role: formField(req, 'role'),
      });
    }),
  );

  router.post(
    '/orgs/:id/members/:memberId/role',
    headers,
    ...sameOriginForm,
    memberForm(async ({ req, user }) => {
      await useCases.orgs.setMemberRole(user, req.params.id, req.params.memberId, { role: formField(req, 'role') });
    }),
  );

  router.post(
    '/orgs/:id/members/:memberId/remove',
    headers,
    ...sameOriginForm,
    memberForm(async ({ req, user }) => {
      await useCases.orgs.removeMember(user, req.params.id, req.params.memberId);
    }),
  );

  router.post(
    '/orgs/:id/rename',
    headers,
    ...sameOriginForm,
    memberForm(async ({ req, user }) => {
      await useCases.orgs.rename(user, req.params.id, { name: formField(req, 'name') });
    }),
  );

  // Deleting asks for the organization's name, typed: a stray click (or a form sent with the
  // wrong organization's id) deletes nothing. Whoever may not delete it is told so by the use case.
  router.post(
    '/orgs/:id/delete',
    headers,
    ...sameOriginForm,
    signedIn(async (context) => {
      const { req, user } = context;
      try {
        const org = await useCases.orgs.get(user, req.params.id);
        if (roleAllows(org.role, 'org.delete') && formField(req, 'confirm') !== org.name) {
          return showOrg(context, {
            status: 400,
            message: `Type the organization's name, ${org.name}, to delete it. Nothing was deleted.`,
          });
        }
        await useCases.orgs.delete(user, org.id);
      } catch (error) {
        if (error instanceof NotFoundError) throw error;
        return showOrg(context, formProblem(error));
      }
      return new Redirect('/orgs');
    }),
  );

  router.get(
    '/audit',
    headers,
    signedIn(async ({ req, user, base, now, standing }) => {
      const filters = auditFilters(req);
      const orgs = (await standing()).orgs.filter((org) => roleAllows(org.role, 'audit.read'));
      try {
        const entries = await useCases.audit.list(user, { ...filters, ...pageQuery(req) });
        return auditPage({ base, entries, filters, orgs, now });
      } catch (error) {
        // A role too low for the organization's log: said on the page, with the filters to go elsewhere.
        if (!(error instanceof ForbiddenError)) throw error;
        return auditPage({ base, entries: null, filters, orgs, now, error: error.message, status: 403 });
      }
    }),
  );

  router.get(
    '/tokens',
    headers,
    signedIn(async ({ req, user, base, now }) => {
      const orgId = orgIdOf(req.query.org_id);
      const tokens = await useCases.apiTokens.list(user, { ...pageQuery(req), org_id: orgId ?? undefined });
      return tokensPage({ base, tokens, orgId, now });
    }),
  );

  // Made by a form POST with our Origin (as the API's CSRF rule); the token is shown in this
  // answer only, never put in a URL or a redirect.
  router.post(
    '/tokens',
    headers,
    ...sameOriginForm,
    signedIn(async ({ req, user, base, now }) => {
      const form = (req.body ?? {}) as Record<string, unknown>;
      const orgId = orgIdOf(form.org_id);
      const list = () => useCases.apiTokens.list(user, { org_id: orgId ?? undefined });
      try {
        const created = await useCases.apiTokens.create(user, {
          name: form.name,
          org_id: orgId ?? undefined,
          role: typeof form.role === 'string' && form.role !== '' ? form.role : undefined,
          expires_in_days:
            typeof form.expires_in_days === 'string' && form.expires_in_days.trim() !== ''
              ? Number(form.expires_in_days)
              : undefined,
        });
        return tokensPage({ base, tokens: await list(), orgId, now, created, status: 201 });
      } catch (error) {
        if (!(error instanceof DomainError) || !['validation', 'forbidden'].includes(error.kind)) throw error;
        const status = error.kind === 'validation' ? 400 : 403;
        return tokensPage({ base, tokens: await list(), orgId, now, error: error.message, status });
      }
    }),
  );

  router.post(
    '/tokens/:id/revoke',
    headers,
    ...sameOriginForm,
    signedIn(async ({ req, user }) => {
      await useCases.apiTokens.revoke(user, req.params.id);
      const orgId = orgIdOf((req.body as Record<string, unknown> | undefined)?.org_id);
      return new Redirect(`/tokens${orgId ? `?org_id=${orgId}` : ''}`);
    }),
  );

  router.get(
    '/notifications',
    headers,
    signedIn(async ({ req, user, base, now }) => {
      const orgId = orgIdOf(req.query.org_id);
      const notifications = await useCases.notifications.list(user, { ...pageQuery(req), org_id: orgId ?? undefined });
      return notificationsPage({ base, notifications, orgId, now });
    }),
  );

  // The secret is shown in this answer only, never put in a URL or a redirect.
  router.post(
    '/notifications',
    headers,
    ...sameOriginForm,
    signedIn(async ({ req, user, base, now }) => {
      const form = (req.body ?? {}) as Record<string, unknown>;
      const orgId = orgIdOf(form.org_id);
      const list = () => useCases.notifications.list(user, { org_id: orgId ?? undefined });
      const events = form.events === undefined ? [] : Array.isArray(form.events) ? form.events : [form.events];
      try {
        const created = await useCases.notifications.create(user, {
          name: form.name,
          kind: form.kind,
          url: form.url,
          events,
          org_id: orgId ?? undefined,
        });
        return notificationsPage({ base, notifications: await list(), orgId, now, created, status: 201 });
      } catch (error) {
        if (!(error instanceof DomainError) || !['validation', 'forbidden'].includes(error.kind)) throw error;
        const status = error.kind === 'validation' ? 400 : 403;
        return notificationsPage({ base, notifications: await list(), orgId, now, error: error.message, status });
      }
    }),
  );

  router.post(
    '/notifications/:id/test',
    headers,
    ...sameOriginForm,
    signedIn(async ({ req, user, base, now }) => {
      const tested = await useCases.notifications.test(user, req.params.id);
      const notifications = await useCases.notifications.list(user, {});
      return notificationsPage({ base, notifications, orgId: null, now, tested });
    }),
  );

  router.post(
    '/notifications/:id/delete',
    headers,
    ...sameOriginForm,
    signedIn(async ({ req, user }) => {
      await useCases.notifications.delete(user, req.params.id);
      return new Redirect('/notifications');
    }),
  );

  router.get(
    '/notifications/:id',
    headers,
    signedIn(async ({ req, user, base, now }) => {
      const notification = await useCases.notifications.get(user, req.params.id);
      const deliveries = await useCases.notifications.deliveries(user, req.params.id, pageQuery(req));
      const vineyards = await vineyardNames(useCases, user, [notification]);
      return notificationPage({ base, notification, deliveries, now, vineyards });
    }),
  );

  router.get(
    '/policies',
    headers,
    signedIn(async ({ req, user, base, now }) => {
      const orgId = orgIdOf(req.query.org_id);
      const policies = await useCases.policies.list(user, { ...pageQuery(req), org_id: orgId ?? undefined });
      const vineyards = await vineyardNames(useCases, user, policies.items);
      return policiesPage({ base, policies, orgId, now, vineyards });
    }),
  );

  router.post(
    '/policies',
    headers,
    ...sameOriginForm,
    signedIn(async ({ req, user, base, now }) => {
      const form = (req.body ?? {}) as Record<string, unknown>;
      const orgId = orgIdOf(form.org_id);
      const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
      const vineyardId = text(form.vineyard_id)?.trim() || undefined;
      try {
        const created = await useCases.policies.create(user, {
          name: form.name,
          enforcement: form.enforcement,
          module: text(form.module)?.replaceAll('\r\n', '\n'),
          vineyard_id: vineyardId,
          org_id: orgId ?? undefined,
        });
        return new Redirect(`/policies/${created.id}`);
      } catch (error) {
        const refused = refusedFormStatus(error);
        if (refused === null) throw error;
        const policies = await useCases.policies.list(user, { org_id: orgId ?? undefined });
        const kept = {
          name: text(form.name),
          enforcement: text(form.enforcement),
          module: text(form.module),
          vineyard_id: vineyardId,
        };
        return policiesPage({
          base,
          policies,
          orgId,
          now,
          vineyards: await vineyardNames(useCases, user, policies.items),
          form: kept,
          error: (error as Error).message,
          status: refused,
        });
      }
    }),
  );

  router.get(
    '/policies/:id',
    headers,
    signedIn(async ({ req, user, base, now, standing }) => {
      const policy = await useCases.policies.get(user, req.params.id);
      const roles = await standing();
      const mayManage = roles.may(policy.org_id ?? user.userId, 'policies.manage');
      return policyPage({ base, policy, mayManage, now, vineyards: await vineyardNames(useCases, user, [policy]) });
    }),
  );

  router.post(
    '/policies/:id',
    headers,
    ...sameOriginForm,
    signedIn(async ({ req, user, base, now, standing }) => {
      const form = (req.body ?? {}) as Record<string, unknown>;
      const module = typeof form.module === 'string' ? form.module.replaceAll('\r\n', '\n') : undefined;
      try {
        await useCases.policies.update(user, req.params.id, { enforcement: form.enforcement, module });
        return new Redirect(`/policies/${req.params.id}`);
      } catch (error) {
        const refused = refusedFormStatus(error);
        if (refused === null) throw error;
        const policy = await useCases.policies.get(user, req.params.id);
        const roles = await standing();
        return policyPage({
          base,
          policy,
          mayManage: roles.may(policy.org_id ?? user.userId, 'policies.manage'),
          now,
          vineyards: await vineyardNames(useCases, user, [policy]),
          error: (error as Error).message,
          ...(module !== undefined ? { module } : {}),
          status: refused,
        });
      }
    }),
  );

  router.post(
    '/policies/:id/delete',
    headers,
    ...sameOriginForm,
    signedIn(async ({ req, user }) => {
      await useCases.policies.delete(user, req.params.id);
      return new Redirect('/policies');
    }),
  );

  return router;
}

/** The status a refused form is shown again with (400, 403 or 422), or null for any other error. */
function refusedFormStatus(error: unknown): number | null {
  if (!(error instanceof DomainError)) return null;
  if (error.kind === 'validation') return 400;
  if (error.kind === 'forbidden') return 403;
  if (error.kind === 'unprocessable') return 422;
  return null;
}

/** An organization id from a query or form, lower case; anything else is none. */
function orgIdOf(value: unknown): string | null {
  return isUuid(value) ? value.toLowerCase() : null;
}

/** `?error=<code>&provider=<id>`, as the sign-in callback reports a failure. */
function signInError(query: Request['query']): { code: string; provider: string | null } | null {
  const code = query.error;
  if (typeof code !== 'string' || !/^[a-z_]{1,64}$/.test(code)) return null;
  return { code, provider: typeof query.provider === 'string' ? query.provider : null };
}

function notFoundAsNull(error: unknown): null {
  if (error instanceof NotFoundError) return null;
  throw error;
}

/** `?limit=&cursor=` of a paged page, checked by core like the API's. */
function pageQuery(req: Request): PageQuery {
  return { limit: req.query.limit, cursor: req.query.cursor };
}

/** A field of a submitted form, or undefined (core says what is missing). */
function formField(req: Request, name: string): string | undefined {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
}

/** What a refused form change says to the person, and the status of the page that says it. */
function formProblem(error: unknown): FormProblem {
  if (error instanceof ValidationError) return { status: 400, message: error.message };
  if (error instanceof ForbiddenError) return { status: 403, message: error.message };
  if (error instanceof ConflictError) return { status: 409, message: error.message, code: error.code };
  throw error;
}

/** The filters of `/audit`, kept in its "Older" link (empty fields are no filter). */
function auditFilters(req: Request): AuditFilters {
  const filters: AuditFilters = {};
  for (const name of ['org_id', 'action', 'actor', 'target_id'] as const) {
    const value = req.query[name];
    if (typeof value === 'string' && value !== '') filters[name] = value;
  }
  return filters;
}

/** The filters of `/jobs`, kept in its "Older" link. */
function jobFilters(req: Request): JobListFilters {
  const filters: JobListFilters = {};
  for (const name of ['status', 'vineyard_id', 'vine_id', 'org_id'] as const) {
    const value = req.query[name];
    if (typeof value === 'string') filters[name] = value;
  }
  return filters;
}
