import {
  ConflictError,
  DomainError,
  ForbiddenError,
  isUuid,
  type PageQuery,
  type UseCases,
  type UserActor,
  statusOfError,
  ValidationError,
} from '@trellis/core';
import type { Request, RequestHandler, Response } from 'express';
import type { Page } from './layout.js';
import type { FormProblem } from './orgs/orgPages.js';
import type { OrgEntry, Standing } from './standing.js';

/** What a page handler is given: the request, the signed-in person, and their standing. */
export interface PageContext {
  req: Request;
  res: Response;
  user: UserActor;
  base: string;
  now: Date;
  /** The person's organizations and roles, read once per request (a removed member sees it at once). */
  standing: () => Promise<Standing>;
}

/** A redirect to a path under the web interface's base. */
export class Redirect {
  constructor(readonly path: string) {}
}

export type Handler = (context: PageContext) => Promise<Page | Redirect>;

/** What a feature's pages are mounted with (`createWebRouter` makes it once). */
export interface WebRouteDeps {
  useCases: UseCases;
  /** The security headers every page answers with. */
  headers: RequestHandler;
  /** A page for signed-in people; anyone else is sent to sign in and brought back. */
  signedIn(handler: Handler): RequestHandler;
  /** Forms that change something: sent from our own pages (the API's CSRF rule), with a small body. */
  sameOriginForm: RequestHandler[];
  /** Every organization of the person, with their role in each. */
  orgsOf(user: UserActor): Promise<(OrgEntry & { created_at: string })[]>;
  /** Whether lists may follow their live streams (`/live/…`, `web/src/live/`). */
  live?: boolean;
}

/** `?limit=&cursor=` of a paged page, checked by core like the API's. */
export function pageQuery(req: Request): PageQuery {
  return { limit: req.query.limit, cursor: req.query.cursor };
}

/** A field of a submitted form, or undefined (core says what is missing). */
export function formField(req: Request, name: string): string | undefined {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
}

/** What a refused form change says to the person, and the status of the page that says it. */
export function formProblem(error: unknown): FormProblem {
  if (error instanceof ValidationError || error instanceof ForbiddenError) {
    return { status: statusOfError(error), message: error.message };
  }
  if (error instanceof ConflictError) return { status: statusOfError(error), message: error.message, code: error.code };
  throw error;
}

/** What core refused a form with (bad input, a role too low, unprocessable): the page is shown again. */
const FORM_REFUSALS: readonly DomainError['kind'][] = ['validation', 'forbidden', 'unprocessable'];

/** The status a refused form is shown again with (core's registry decides), or null for any other error. */
export function refusedFormStatus(error: unknown): number | null {
  if (!(error instanceof DomainError) || !FORM_REFUSALS.includes(error.kind)) return null;
  return statusOfError(error);
}

/** An organization id from a query or form, lower case; anything else is none. */
export function orgIdOf(value: unknown): string | null {
  return isUuid(value) ? value.toLowerCase() : null;
}
