/**
 * Debian's Chromium driven by playwright-core (never a browser build of Playwright's own). Like a
 * missing test peer: under CI=true a missing Chromium fails the run; elsewhere the browser suites
 * are skipped with a loud warning.
 */
import { accessSync, constants, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page, type Response as PageResponse } from 'playwright-core';

const CANDIDATES = [process.env.TRELLIS_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'];

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** Per test: a browser test waits on pages, agents and restarts, on a machine busy with other suites. */
export const BROWSER_TEST_TIMEOUT_MS = 90_000;

/** Screenshots of every page, kept for people to look at (git-ignored). */
export const SCREENSHOT_DIR = join(ROOT, 'test-artifacts', 'screenshots');

function executable(path: string | undefined): path is string {
  if (!path) return false;
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The Chromium binary, or null (and a loud warning) when there is none outside CI. */
export function findChromium(suite: string): string | null {
  const found = CANDIDATES.find(executable);
  if (found) return found;
  const ci = ['true', '1'].includes((process.env.CI ?? '').toLowerCase());
  const message = `Chromium not found (${CANDIDATES.filter(Boolean).join(', ')}); ${suite} needs it: apt-get install -y chromium`;
  if (ci) throw new Error(message);
  process.stderr.write(`\n*** SKIPPED: ${message} ***\n\n`);
  return null;
}

/** A headless Chromium; Playwright gives it a fresh temporary profile and removes it on close. */
export class TestBrowser {
  private constructor(readonly browser: Browser) {}

  static async launch(executablePath: string): Promise<TestBrowser> {
    const browser = await chromium.launch({
      executablePath,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-quic',
        '--no-first-run',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    return new TestBrowser(browser);
  }

  /** A fresh context (own cookies) whose pages fail loudly on script errors. */
  async context(): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
    const context = await this.browser.newContext({ viewport: { width: 1280, height: 860 } });
    // Well below the test timeout, so a wait that fails says which element it was waiting for.
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/Failed to load resource|ERR_CONNECTION_REFUSED/.test(message.text())) {
        errors.push(message.text());
      }
    });
    return { context, page, errors };
  }

  async close(): Promise<void> {
    await this.browser.close();
  }
}

/** Clicks and waits for the browser to land on another page than the one it was on. */
export async function clickAndFollow(page: Page, selector: string): Promise<URL> {
  const before = page.url();
  await page.click(selector);
  await page.waitForURL((url) => url.href !== before);
  return new URL(page.url());
}

/** Saves a full-page screenshot as `test-artifacts/screenshots/<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** Clicks a button that asks first (issue 29: a page of its own, no script), then its "yes"; resolves once landed. */
export async function clickAndConfirm(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForSelector('[data-confirmation]'), page.click(selector)]);
  await Promise.all([page.waitForNavigation(), page.click('[data-confirm-yes]')]);
}

/**
 * A form POST carrying `page`'s session cookie from `origin`: the web's own (a post past the page
 * that asks first) or another site's (a forged one). Not followed, so its own answer is read.
 */
export async function postWithSession(
  page: Page,
  url: string,
  body: string | Record<string, string>,
  origin: string,
): Promise<Response> {
  const session = (await page.context().cookies()).find((cookie) => cookie.name === 'trellis_session');
  return fetch(url, {
    method: 'POST',
    headers: {
      cookie: `trellis_session=${session?.value}`,
      origin,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: typeof body === 'string' ? body : new URLSearchParams(body).toString(),
    redirect: 'manual',
  });
}

/**
 * The HTML pages (and, with `fragments`, every HTML answer) that watched pages receive, kept to
 * check that a secret is in none; a redirect carries no body. Each body is asked for as it
 * arrives. One the browser dropped first (a page that navigated on before the body was read, which
 * a busy machine allows) is counted apart, never an unhandled rejection: `read()` says how many
 * were read, so a check can require enough of them.
 */
export class HtmlAnswers {
  private readonly bodies: Promise<{ url: string; body: string | null }>[] = [];

  constructor(private readonly options: { fragments: boolean } = { fragments: false }) {}

  /** Keeps what `page` receives from now on; the returned function stops it. */
  watch(page: Page): () => void {
    const keep = (response: PageResponse) => {
      const status = response.status();
      if (status >= 300 && status < 400) return;
      const html = this.options.fragments
        ? (response.headers()['content-type'] ?? '').startsWith('text/html')
        : response.request().resourceType() === 'document';
      if (!html) return;
      const url = response.url();
      this.bodies.push(
        response.text().then(
          (body) => ({ url, body }),
          () => ({ url, body: null }),
        ),
      );
    };
    page.on('response', keep);
    return () => {
      page.off('response', keep);
    };
  }

  /** How many bodies were read so far. */
  async read(): Promise<number> {
    return (await Promise.all(this.bodies)).filter(({ body }) => body !== null).length;
  }

  /** The addresses of the bodies read that hold `secret`. */
  async holding(secret: string): Promise<string[]> {
    return (await Promise.all(this.bodies)).filter(({ body }) => body?.includes(secret)).map(({ url }) => url);
  }
}
