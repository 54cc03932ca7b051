import { type UseCases, type UserActor, ValidationError } from '@trellis/core';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { Page } from '../layout.js';
import { signInAgainPage } from '../pages/errorPages.js';
import { approveTfeLoginPage, invalidTfeLoginPage } from './tfeLoginPages.js';

export interface TfeLoginWebDeps {
  useCases: UseCases;
  headers: RequestHandler;
  /** A page for signed-in people (anyone else signs in first and comes back). */
  signedIn(handler: (context: { req: Request; user: UserActor; base: string }) => Promise<Page>): RequestHandler;
  /** The API's CSRF rule: a POST must come with our own Origin. */
  sameOrigin: RequestHandler;
  currentUser(req: Request, res: Response): UserActor | null;
  render(req: Request, res: Response, page: Page, user: UserActor | null): void;
  tokenDays: number;
}

/**
 * The consent page of `tofu login` (the `authz` of `login.v1`): `GET` shows what is asked, the
 * `POST` of its form approves (never the GET: a link alone must not approve), then the browser is
 * sent back to the CLI's loopback server with a one-time code.
 */
export function tfeLoginRoutes(router: Router, deps: TfeLoginWebDeps): void {
  router.get(
    '/oauth/authorize',
    deps.headers,
    deps.signedIn(async ({ req, user, base }) => {
      try {
        const request = deps.useCases.tfe.login.parseAuthorization(req.query as Record<string, unknown>);
        return approveTfeLoginPage({ base, user, request, tokenDays: deps.tokenDays });
      } catch (error) {
        if (error instanceof ValidationError) return invalidTfeLoginPage(error.message);
        throw error;
      }
    }),
  );
  router.post(
    '/oauth/authorize',
    deps.headers,
    deps.sameOrigin,
    express.urlencoded({ extended: false, limit: '8kb' }),
    async (req, res) => {
      const user = deps.currentUser(req, res);
      if (!user) {
        deps.render(req, res, signInAgainPage(req.baseUrl), null);
        return;
      }
      try {
        const { redirect } = await deps.useCases.tfe.login.approve(user, (req.body ?? {}) as Record<string, unknown>);
        res.redirect(303, redirect);
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        deps.render(req, res, invalidTfeLoginPage(error.message), user);
      }
    },
  );
}
