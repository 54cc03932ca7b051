/**
 * `trellis login` end to end through the web page (SPEC §5.3): the real CLI binary prints the
 * page's URL, Chromium opens it signed out, signs in and comes back, approves, reads the code the
 * page shows and the test types it at the CLI's prompt; `trellis whoami` then works. Also the
 * pages for a bad link and a login approved twice.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, clickAndFollow, findChromium, screenshot, TestBrowser } from './support/browser.js';
import { ADMIN_EMAIL, BOOTSTRAP_TOKEN, WebServer } from './support/webServer.js';

const TRELLIS_BIN = fileURLToPath(new URL('../../cli/dist/bin/trellis.js', import.meta.url));
const chromiumPath = findChromium('the CLI login suite');

/** The `trellis` binary with its own HOME, its output collected as it comes. */
class Cli {
  readonly child: ChildProcess;
  output = '';
  readonly exit: Promise<number | null>;

  constructor(args: string[], home: string) {
    this.child = spawn(process.execPath, [TRELLIS_BIN, ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, XDG_CONFIG_HOME: join(home, 'config') },
      stdio: 'pipe',
    });
    this.child.stdout?.on('data', (data) => {
      this.output += data;
    });
    this.child.stderr?.on('data', (data) => {
      this.output += data;
    });
    this.exit = new Promise((resolve, reject) => {
      this.child.on('error', reject);
      this.child.on('close', resolve);
    });
  }

  async waitFor(pattern: RegExp): Promise<RegExpMatchArray> {
    for (let tries = 0; tries < 600; tries++) {
      const match = pattern.exec(this.output);
      if (match) return match;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`no ${pattern} in the CLI output:\n${this.output}`);
  }

  static async run(args: string[], home: string): Promise<{ code: number | null; output: string }> {
    const cli = new Cli(args, home);
    cli.child.stdin?.end();
    const code = await cli.exit;
    return { code, output: cli.output };
  }
}

describe.skipIf(!chromiumPath)(
  'trellis login through the web page, in Chromium',
  { timeout: BROWSER_TEST_TIMEOUT_MS },
  () => {
    let server: WebServer;
    let browser: TestBrowser;
    let home: string;
    const contexts: BrowserContext[] = [];

    beforeAll(async () => {
      server = await new WebServer().start();
      browser = await TestBrowser.launch(chromiumPath as string);
      home = mkdtempSync(join(tmpdir(), 'trellis-web-cli-home-'));
    });
    afterAll(async () => {
      for (const context of contexts) await context.close();
      await browser?.close();
      await server?.close();
      if (home) rmSync(home, { recursive: true, force: true });
    });

    it('signs in, approves, shows the code, and the CLI logs in with it', async () => {
      const login = new Cli(['login', '--server', server.url, '--no-browser'], home);
      const [loginUrl] = await login.waitFor(/http\S+\/cli\/login\?device_code=[0-9a-f-]{36}/);
      await login.waitFor(/Verification code: /);

      const { context, page, errors } = await browser.context();
      contexts.push(context);
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });

      // Signed out: the page sends the browser to sign in, and the sign-in brings it back.
      await page.goto(loginUrl as string);
      expect(new URL(page.url()).pathname).toBe('/signin');
      expect(await page.locator('.signin .notice').textContent()).toContain(
        'approve the login of the trellis command line',
      );
      await screenshot(page, 'cli-login-signin');
      await page.fill('#bootstrap-token', BOOTSTRAP_TOKEN);
      await page.click('.bootstrap button[type=submit]');
      await page.waitForURL(loginUrl as string);

      // Nothing is approved by opening the page: the CLI is still waiting for an approval.
      const lead = await page.locator('.cli-login .lead').textContent();
      expect(lead).toBe(
        `A Trellis CLI is asking to sign in as ${ADMIN_EMAIL}. It will be able to create and run deployments, read logs and register agents for your account.`,
      );
      await screenshot(page, 'cli-login-approve');

      await clickAndFollow(page, '#approve');
      const code = (await page.locator('#verification-code').textContent()) as string;
      expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{6}$/);
      await page.click('[data-copy]');
      await page.locator('[data-copy]', { hasText: 'Copied' }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(code);
      await screenshot(page, 'cli-login-code');

      login.child.stdin?.write(`${code.toLowerCase()}\n`);
      expect(await login.exit).toBe(0);
      expect(login.output).toContain(`Logged in to ${server.url} as ${ADMIN_EMAIL}`);
      const whoami = await Cli.run(['whoami', '--json'], home);
      expect(whoami.code).toBe(0);
      expect(JSON.parse(whoami.output)).toMatchObject({ server: server.url, email: ADMIN_EMAIL });

      // Approving the same login again (the form re-sent) gets a clear page, not a second code.
      await page.goBack();
      await page.waitForURL(loginUrl as string);
      await page.click('#approve');
      await page.locator('h1', { hasText: 'already approved' }).waitFor();
      expect(await page.locator('#verification-code').count()).toBe(0);
      await screenshot(page, 'cli-login-used');
      expect(errors).toEqual([]);
    });

    it('says plainly that a login link without a valid device code is not valid', async () => {
      const { context, page } = await browser.context();
      contexts.push(context);
      await page.goto(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
      const response = await page.goto(`${server.url}/cli/login?device_code=not-a-uuid`);
      expect(response?.status()).toBe(400);
      expect(await page.locator('h1').textContent()).toBe('This login link is not valid');
      await screenshot(page, 'cli-login-invalid');
    });
  },
);
