/**
 * A browser suite run once on SQLite and once on Postgres (DESIGN §8): the suite's control plane
 * on the dialect's database, a Chromium, and, for suites where people sign in through Google, a
 * test OpenID Connect issuer; closed in the order they depend on each other.
 */
import {
  createTestDatabase,
  type PostgresAvailability,
  type TestDatabase,
  type TestDialect,
  testPostgresPoolSize,
} from '@trellis/testkit';
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { describe } from 'vitest';
import { TestBrowser } from './browser.js';
import { type Issuer, issuerEnv, startIssuer } from './oidcIssuer.js';
import { BOOTSTRAP_TOKEN, WebServer, type WebServerOptions } from './webServer.js';

export interface DialectSuiteOptions {
  /** From `findChromium`: without it the suite is skipped (findChromium said so). */
  chromiumPath: string | null;
  /** From `checkTestPostgres()`: without it the Postgres suite is skipped. */
  postgres: PostgresAvailability;
  /** False when another peer the suite needs is missing (`requirePeer` said so). */
  peersFound?: boolean;
  /** Per test. */
  timeout: number;
}

/**
 * `describe(`${title} (${dialect})`)` for each dialect, skipped without Chromium, without a peer
 * it needs, or (the Postgres one) without Postgres.
 */
export function describeInChromiumOnEachDialect(
  title: string,
  options: DialectSuiteOptions,
  body: (dialect: TestDialect) => void,
): void {
  const { chromiumPath, postgres, peersFound = true, timeout } = options;
  for (const dialect of ['sqlite', 'postgres'] as const) {
    describe.skipIf(!chromiumPath || !peersFound || (dialect === 'postgres' && !postgres.available))(
      `${title} (${dialect})`,
      { timeout },
      () => body(dialect),
    );
  }
}

export interface WebOnDialectOptions<WithIssuer extends boolean> extends Omit<WebServerOptions, 'signInProviders'> {
  /** Starts a test OpenID Connect issuer and points the server's Google sign-in at it. */
  issuer?: WithIssuer;
}

/** What `startWebOnDialect` started; `close()` ends all of it. */
export interface WebOnDialect<WithIssuer extends boolean = false> {
  server: WebServer;
  browser: TestBrowser;
  /** Set when started with `issuer: true`; its callback is registered at `localhostUrl`. */
  issuer: WithIssuer extends true ? Issuer : null;
  /** `http://localhost:<port>`: the server by the name people use (the issuer sends them back there). */
  localhostUrl: string;
  /** A browser context of its own (see `TestBrowser.context`), closed by `close()`. */
  context(): Promise<{ context: BrowserContext; page: Page; errors: string[] }>;
  /** A browser context with these options (no script, CSP bypassed for axe…), closed by `close()`. */
  newContext(options: BrowserContextOptions): Promise<BrowserContext>;
  /** A page in a context of its own, signed in as the bootstrap admin (optionally at that viewport). */
  signedInPage(viewport?: { width: number; height: number }): Promise<Page>;
  /** Closes the contexts, the browser, the server, the issuer, then drops the Postgres database. */
  close(): Promise<void>;
}

/**
 * A control plane on `dialect`'s database (a fresh Postgres database, or the server's own SQLite
 * file), a Chromium and, with `issuer: true`, an OpenID Connect issuer. If any of them fails to
 * start, what did start is closed again before the error is thrown.
 */
export async function startWebOnDialect<WithIssuer extends boolean = false>(
  dialect: TestDialect,
  chromiumPath: string,
  options: WebOnDialectOptions<WithIssuer> = {},
): Promise<WebOnDialect<WithIssuer>> {
  const { issuer: withIssuer = false, env, ...serverOptions } = options;
  let database: TestDatabase | undefined;
  let issuer: Issuer | null = null;
  let server: WebServer | undefined;
  let browser: TestBrowser | undefined;
  const contexts: BrowserContext[] = [];

  async function close(): Promise<void> {
    for (const context of contexts) await context.close();
    await browser?.close();
    await server?.close();
    await new Promise((resolve) => (issuer ? issuer.server.close(resolve) : resolve(undefined)));
    await database?.drop();
  }

  try {
    if (dialect === 'postgres') database = await createTestDatabase('postgres');
    if (withIssuer) issuer = await startIssuer();
    server = await new WebServer({
      ...serverOptions,
      env: {
        ...(issuer ? issuerEnv(issuer) : {}),
        ...(database ? { DATABASE_URL: database.url, TRELLIS_DB_POOL_MAX: String(testPostgresPoolSize()) } : {}),
        ...env,
      },
    }).start();
    const localhostUrl = `http://localhost:${server.port}`;
    issuer?.register(`${localhostUrl}/api/auth/callback`);
    browser = await TestBrowser.launch(chromiumPath);

    const started: WebOnDialect<WithIssuer> = {
      server,
      browser,
      issuer: issuer as WebOnDialect<WithIssuer>['issuer'],
      localhostUrl,
      async context() {
        const opened = await started.browser.context();
        contexts.push(opened.context);
        return opened;
      },
      async newContext(contextOptions) {
        const context = await started.browser.browser.newContext({
          viewport: { width: 1280, height: 860 },
          ...contextOptions,
        });
        context.setDefaultTimeout(20_000);
        contexts.push(context);
        return context;
      },
      async signedInPage(viewport) {
        const { page } = await started.context();
        if (viewport) await page.setViewportSize(viewport);
        await page.goto(`${started.server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
        return page;
      },
      close,
    };
    return started;
  } catch (error) {
    await close();
    throw error;
  }
}
