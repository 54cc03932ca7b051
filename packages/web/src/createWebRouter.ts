import {
  type Clock,
  type ConfiguredProvider,
  ConflictError,
  DomainError,
  isUuid,
  jobTokenSubject,
  MAX_PAGE_LIMIT,
  NotFoundError,
  safeNextOr,
  type UseCases,
  type UserActor,
  ValidationError,
} from '@trellis/core';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { Assets } from './assets.js';
import { FEATURE_PAGES, type FeaturePages } from './featurePages.js';
import { type LayoutContext, layout, type Page } from './layout.js';
import { approveCliLoginPage, cliLoginCodePage, invalidCliLoginPage, usedCliLoginPage } from './pages/cliLoginPages.js';
import { vinePage } from './pages/vinePage.js';
import { crossSitePage, notFoundPage, serverErrorPage, signInAgainPage } from './pages/errorPages.js';
import { jobPage } from './pages/jobPage.js';
import { type JobListFilters, jobsPage } from './pages/jobsPage.js';
import { signInPage } from './pages/signInPage.js';
import { vineyardPage, vineyardsPage } from './pages/vineyardPages.js';
import { workersPage } from './pages/workersPage.js';
import { type OrgEntry, orgFilterOf, Standing } from './standing.js';
import { signInPath } from './paths.js';
import { securityHeaders } from './securityHeaders.js';
import { tfeLoginRoutes } from './tfe/tfeLoginRoutes.js';
import { stateRoutes } from './state/stateRoutes.js';
import { queueRoutes } from './queue/queueRoutes.js';
import { jobActionRoutes } from './jobActions/jobActionRoutes.js';
import { planReviewRoutes } from './policies/planReviewRoutes.js';
import { vineSettingRoutes } from './vineSettings/vineSettingRoutes.js';
import { stateSection } from './tfe/stateSection.js';
import { vineEditRoutes } from './vineEdits/vineEditRoutes.js';
import { vineyardEditRoutes } from './vineyardEdits/vineyardEditRoutes.js';
import { type Handler, pageQuery, Redirect, type WebRouteDeps } from './routing.js';
import { jobListStream } from './live/jobLists.js';
import type { LiveLists } from './live/LiveLists.js';
import { liveRoutes } from './live/liveRoutes.js';

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
  /** The modules' pages, in order (default: every feature's, `FEATURE_PAGES`). */
  pages?: readonly FeaturePages[];
  /**
   * The live lists (issue 29, `GET /live/jobs`, `/live/queue`, `/live/fleet`): with them the job
   * lists, the queue and the fleet stay current as jobs are queued, start and end; without, they
   * are plain pages. `shutdown` ends every stream.
   */
  live?: { lists: LiveLists; shutdown: AbortSignal };
}

/**
 * The web interface as an express router: server-rendered pages for `/`, `/signin`,
 * `/cli/login`, `/vineyards`, `/configurations/:id`, `/jobs`, `/jobs/:id` and `/workers`, and
 * their stylesheet and scripts under `/assets/`. Everything it changes is a plain form posted to
 * a web route (issue 29), checked like the API (our own Origin) and handed to the use cases the API
 * calls; htmx sends some in place. Only the plan review forms still post JSON from the script.
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
        htmx: assets.url(base, 'htmx.min.js'),
        sse: assets.url(base, 'htmx-sse.js'),
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
        // A page asks to sign in; a fragment htmx fetches in place gets 401, which htmx never swaps in
        // (the part of the page stays as it was, instead of turning into the sign-in page).
        const inPlace = req.get('HX-Request') === 'true';
        if ((req.method === 'GET' || req.method === 'HEAD') && !inPlace) {
          res.redirect(303, `${req.baseUrl}${signInPath(req.url)}`);
        } else render(req, res, signInAgainPage(req.baseUrl), null);
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

  // A configuration's inline files come in the form: up to the API's body limit, urlencoded.
  const sameOriginLargeForm = [
    sameOrigin,
    express.urlencoded({ extended: false, limit: '16mb', parameterLimit: 2000 }),
  ];
  vineEditRoutes(router, { useCases, headers, signedIn, sameOriginLargeForm });
  // Before `/vineyards/:id`, which would take `/vineyards/new` for an id.
  vineyardEditRoutes(router, { useCases, headers, signedIn, sameOriginLargeForm });
  stateRoutes(router, { useCases, headers, signedIn, sameOriginForm, orgsOf });
  queueRoutes(router, { useCases, headers, signedIn, sameOriginForm, orgsOf, live: options.live !== undefined });
  if (options.live) {
    const { lists, shutdown } = options.live;
    liveRoutes(router, {
      useCases,
      liveLists: lists,
      headers,
      orgsOf,
      currentUser: options.currentUser,
      shutdown,
      now,
      ...(options.onError ? { onError: options.onError } : {}),
    });
  }
  jobActionRoutes(router, { useCases, headers, signedIn, sameOriginForm, orgsOf });
  planReviewRoutes(router, { useCases, headers, signedIn, sameOriginForm, orgsOf });
  vineSettingRoutes(router, { useCases, headers, signedIn, sameOriginForm, orgsOf });

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
        mayRollback: roles.may(vine.owner_id, 'state.rollback'),
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
        liveJobs: options.live ? jobListStream(base, 'vine', { vine_id: vine.id }) : null,
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
      const jobs = await useCases.jobs.list(user, { ...filters, ...pageQuery(req) });
      // The first page follows the stream; an older page stays as it was read.
      const first = req.query.cursor === undefined;
      const limit = typeof req.query.limit === 'string' ? { limit: req.query.limit } : {};
      const live = options.live && first ? jobListStream(base, 'jobs', { ...filters, ...limit }) : null;
      return jobsPage({ base, jobs, filters, now, live });
    }),
  );

  router.get(
    '/jobs/:id',
    headers,
    signedIn(async ({ req, user, base, now, standing }) => {
      const job = await useCases.jobWaiting.show(user, req.params.id);
      const gitDriven = job.trigger?.type === 'push' || job.trigger?.type === 'pull_request';
      const [vineyard, appliedBy, vine, vcsFeedback, planless, planChanges] = await Promise.all([
        job.vineyard_id ? useCases.vineyards.get(user, job.vineyard_id).catch(notFoundAsNull) : null,
        job.job_type === 'PLAN' ? useCases.jobs.deployOfPlan(user, job.id) : null,
        job.job_type === 'PLAN' && job.vine_id ? useCases.vines.get(user, job.vine_id).catch(notFoundAsNull) : null,
        gitDriven ? useCases.vcsFeedback.forJob(user, job.id) : null,
        job.vine_id ? useCases.jobs.planlessActions(user, job.vine_id).catch(notFoundAsNull) : null,
        // A finished plan's change document (issue 29); an older agent's plan has none.
        job.job_type === 'PLAN' && job.status === 'SUCCESS'
          ? useCases.planArtifacts.changes(user, job.id).catch(notFoundAsNull)
          : null,
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
        queuePosition: job.queue_position,
        planless,
        planChanges,
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

  // Each module's pages (`web/src/<feature>/`), after the pages above.
  const routes: WebRouteDeps = {
    useCases,
    headers,
    signedIn,
    sameOriginForm,
    orgsOf,
    live: options.live !== undefined,
  };
  for (const pages of options.pages ?? Object.values(FEATURE_PAGES)) pages(router, routes);

  return router;
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

/** The filters of `/jobs`, kept in its "Older" link. */
function jobFilters(req: Request): JobListFilters {
  const filters: JobListFilters = {};
  for (const name of ['status', 'vineyard_id', 'vine_id', 'org_id'] as const) {
    const value = req.query[name];
    if (typeof value === 'string') filters[name] = value;
  }
  return filters;
}
