/**
 * The web pages over HTTP against a real control plane: who gets sent to sign in, what the
 * sign-in page offers, the security headers, that nothing an agent or a user wrote can become
 * markup or a script link, other people's records, and serving under a path prefix.
 */
import type { TrellisClient } from '@trellis/client';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../src/index.js';
import { runJob } from './support/seed.js';
import { type AgentClient, BOOTSTRAP_TOKEN, vineyardWithVine, WebServer } from './support/webServer.js';

describe('web pages', () => {
  let server: WebServer;
  let cookie: string;
  let user: TrellisClient;
  let agent: AgentClient;

  const get = async (path: string, headers: Record<string, string> = { cookie }) => {
    const response = await fetch(`${server.url}${path}`, { headers, redirect: 'manual' });
    return { response, text: await response.text() };
  };

  beforeAll(async () => {
    server = await new WebServer({
      signInProviders: [
        { id: 'github', name: 'GitHub' },
        { id: 'google', name: 'Google' },
      ],
    }).start();
    cookie = await server.sessionCookie();
    user = await server.userClient();
    agent = await server.agentClient(user);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('sends signed-out visitors to sign in, remembering the page they asked for', async () => {
    const deviceCode = crypto.randomUUID();
    for (const [path, next] of [
      ['/', null],
      ['/vineyards', '/vineyards'],
      ['/workers', '/workers'],
      [`/jobs/${deviceCode}`, `/jobs/${deviceCode}`],
      [`/cli/login?device_code=${deviceCode}`, `/cli/login?device_code=${deviceCode}`],
    ] as const) {
      const { response } = await get(path, {});
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toBe(next ? `/signin?next=${encodeURIComponent(next)}` : '/signin');
    }
    const approve = await fetch(`${server.url}/cli/login`, {
      method: 'POST',
      headers: { origin: new URL(server.url).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: `device_code=${deviceCode}`,
    });
    expect(approve.status).toBe(401);
    expect(await approve.text()).toContain('Your session has ended');
  });

  it('offers a button per provider and the bootstrap sign-in, never the token itself', async () => {
    const { response, text } = await get('/signin?next=%2Fcli%2Flogin%3Fdevice_code%3Dabc', {});
    expect(response.status).toBe(200);
    expect(text).toContain(
      'href="/auth/signin/github?next=%2Fcli%2Flogin%3Fdevice_code%3Dabc">Sign in with GitHub</a>',
    );
    expect(text).toContain(
      'href="/auth/signin/google?next=%2Fcli%2Flogin%3Fdevice_code%3Dabc">Sign in with Google</a>',
    );
    expect(text).toContain('approve the login of the <code>trellis</code> command line');
    expect(text).toContain('action="/auth/bootstrap"');
    expect(text).toContain('name="next" value="/cli/login?device_code=abc"');
    expect(text).not.toContain(BOOTSTRAP_TOKEN);

    // Only paths of this site are kept as the place to return to.
    for (const evil of [
      '//evil.example/x',
      '/\\evil.example',
      'https://evil.example/',
      '/x\r\nSet-Cookie: a=b',
      '/\t/evil.example',
    ]) {
      const page = await get(`/signin?next=${encodeURIComponent(evil)}`, {});
      expect(page.text).toContain('href="/auth/signin/github">');
      expect(page.text).not.toContain('evil.example');
    }
    // A failed sign-in comes back with ?error=: said in words, with the provider's name, and
    // the buttons keep the page to return to.
    const failed = await get('/signin?error=email_not_verified&provider=google&next=%2Fworkers', {});
    expect(failed.text).toContain(
      'Your Google account has no verified email address. Verify one at Google, then sign in again.',
    );
    expect(failed.text).toContain('href="/auth/signin/google?next=%2Fworkers"');
    const odd = await get('/signin?error=%3Cscript%3E&provider=%3Cb%3E', {});
    expect(odd.text).not.toContain('role="alert"');
    expect((await get('/signin?error=invalid_sign_in_link', {})).text).toContain(
      'That sign-in link is not valid: it was already used, or it expired.',
    );
    expect((await get('/signin?error=whatever_else&provider=nope', {})).text).toContain(
      'The sign-in failed. Please try again',
    );

    // A wrong bootstrap token: a browser gets the sign-in page back, a program the problem.
    const wrong = await get('/auth/bootstrap?token=wrong&next=%2Fworkers', { accept: 'text/html' });
    expect(wrong.response.status).toBe(303);
    expect(wrong.response.headers.get('location')).toBe('/signin?error=invalid_bootstrap_token&next=%2Fworkers');
    const program = await get('/auth/bootstrap?token=wrong', {});
    expect(program.response.status).toBe(401);
    expect(JSON.parse(program.text)).toMatchObject({ code: 'invalid_bootstrap_token' });

    // Signed in already: straight to the page asked for.
    const signedIn = await get('/signin?next=%2Fworkers');
    expect(signedIn.response.status).toBe(303);
    expect(signedIn.response.headers.get('location')).toBe('/workers');
  });

  it('sends the security headers with every page, and no HSTS over http', async () => {
    for (const path of ['/signin', '/vineyards', '/cli/login?device_code=nope']) {
      const { response } = await get(path);
      expect(response.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('referrer-policy')).toBe('same-origin');
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('strict-transport-security')).toBeNull();
    }
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');

    const { text } = await get('/vineyards');
    const script = /<script src="(\/assets\/trellis\.js\?v=\w+)"/.exec(text)?.[1] as string;
    expect(text).not.toMatch(/<script>|<style|style="|\son\w+="/);
    const asset = await get(script);
    expect(asset.response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.text).toContain('new EventSource(');
  });

  it('shows what agents and users wrote as text, and links only to http(s) URLs', async () => {
    const { vine } = await vineyardWithVine(user, 'escape');
    const deploy = await runJob(
      user,
      agent,
      { job_type: 'DEPLOY', configuration_id: vine.id },
      {
        status: 'SUCCESS',
        execution_metadata: {
          cluster_name: '<img src=x onerror=alert(1)>',
          cluster_endpoint: 'javascript:alert(2)',
          argocd_url: 'javascript:alert(3)//',
          outputs: { banner: '<script>alert(4)</script>', 'quote\'"': 'x" onmouseover="alert(5)' },
        },
      },
    );
    const failed = await runJob(
      user,
      agent,
      { job_type: 'PLAN', configuration_id: vine.id },
      { status: 'FAILED', error_message: '</p><script>alert(6)</script>' },
    );
    for (const path of [
      `/configurations/${vine.id}`,
      `/vineyards/${vine.vineyard_id}`,
      `/jobs/${failed.id}`,
      `/jobs/${deploy.id}`,
    ]) {
      const { response, text } = await get(path);
      expect(response.status).toBe(200);
      expect(text).not.toMatch(/<script>alert|<img src=x|onmouseover="alert|href="javascript:/);
    }
    const { text } = await get(`/configurations/${vine.id}`);
    expect(text).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(text).toContain('&lt;script&gt;alert(4)&lt;/script&gt;');
    expect(text).toContain('x&quot; onmouseover=&quot;alert(5)');
    expect(text).not.toContain('data-argocd-link');
    expect((await get(`/jobs/${failed.id}`)).text).toContain('&lt;/p&gt;&lt;script&gt;alert(6)&lt;/script&gt;');
  });

  it('shows deployment fields only where a vine has them, sensitive outputs masked, and no drift once destroyed', async () => {
    const { vine } = await vineyardWithVine(user, 'deployed-facts');
    await runJob(
      user,
      agent,
      { job_type: 'DEPLOY', configuration_id: vine.id },
      {
        status: 'SUCCESS',
        execution_metadata: {
          outputs: { bucket: { value: 'logs-1', type: 'string', sensitive: false } },
          sensitive_outputs: ['db_password'],
        },
      },
    );
    const page = async () => (await get(`/configurations/${vine.id}`)).text;
    const deployed = await page();
    expect(deployed).not.toMatch(/<dt>(Cluster|Cluster endpoint|Argo CD)<\/dt>/);
    const yard = async () => (await get(`/vineyards/${vine.vineyard_id}`)).text;
    expect(await yard()).not.toMatch(/<th>(Cluster endpoint|Argo CD)<\/th>/);
    expect(deployed).toMatch(/<th scope="row"><code>bucket<\/code><\/th><td><code>logs-1<\/code><\/td>/);
    expect(deployed).toMatch(
      /<tr data-sensitive-output><th scope="row"><code>db_password<\/code><\/th><td><span class="muted">\(sensitive\)<\/span><\/td><\/tr>/,
    );

    await runJob(
      user,
      agent,
      { job_type: 'DEPLOY', configuration_id: vine.id },
      { status: 'SUCCESS', execution_metadata: { cluster_name: 'eks-1', argocd_url: 'https://argo.example.test' } },
    );
    const withCluster = await page();
    expect(withCluster).toContain('<dt>Cluster</dt><dd data-cluster-name>eks-1</dd>');
    expect(withCluster).not.toContain('<dt>Cluster endpoint</dt>');
    expect(withCluster).toContain('data-argocd-link>https://argo.example.test/</a>');
    expect(await yard()).toContain('<th>Argo CD</th>');
    expect(await yard()).not.toContain('<th>Cluster endpoint</th>');

    const check = await user.checkDrift(vine.id);
    expect((await agent.claimJob())?.job.id).toBe(check.id);
    await agent.reportStatus(check.id, {
      status: 'SUCCESS',
      execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 } },
    });
    expect(await page()).toContain('data-drift="drifted"');
    expect((await get(`/vineyards/${vine.vineyard_id}`)).text).toContain('data-drift="drifted"');

    await runJob(user, agent, { job_type: 'DESTROY', configuration_id: vine.id }, { status: 'SUCCESS' });
    const destroyed = await page();
    expect(destroyed).toContain('DESTROYED');
    expect(destroyed).not.toContain('data-drift=');
    expect(destroyed).not.toMatch(/<dt>(Cluster|Argo CD)<\/dt>/);
    expect((await get(`/vineyards/${vine.vineyard_id}`)).text).not.toContain('data-drift=');
  });

  it('names the vineyard a policy applies to, not its id', async () => {
    const { vineyard } = await vineyardWithVine(user, 'policy-yard');
    const module = 'package trellis.named\n\ndeny contains msg if {\n  false\n  msg := "never"\n}\n';
    const policy = await user.createPolicy({
      name: 'named-yard',
      enforcement: 'advisory',
      module,
      vineyard_id: vineyard.id,
    });
    const list = (await get('/policies')).text;
    expect(list).toContain(
      `vineyard <a href="/vineyards/${vineyard.id}"><span data-vineyard-name>${vineyard.name}</span></a>`,
    );
    expect(list).not.toContain(`<code>${vineyard.id}</code>`);
    // A refused name is explained in words by the browser (the title), not by the pattern alone.
    expect(list).toMatch(
      /id="policy-name"[^>]* title="A name must be 1 to 100 letters, digits, [^"]*starting with a letter or digit\."/,
    );
    const shown = (await get(`/policies/${policy.id}`)).text;
    expect(shown).toContain(`<span data-vineyard-name>${vineyard.name}</span>`);
    expect(shown).not.toContain(`<code>${vineyard.id}</code>`);
  });

  it('shows the plan summary the agent reported', async () => {
    const { vine } = await vineyardWithVine(user, 'summary');
    const changes = await runJob(
      user,
      agent,
      { job_type: 'PLAN', configuration_id: vine.id },
      { status: 'SUCCESS', execution_metadata: { plan_summary: { add: 2, change: 1, destroy: 0 } } },
    );
    expect((await get(`/jobs/${changes.id}`)).text).toMatch(
      /data-plan-summary data-from-metadata>2 to add, 1 to change, 0 to destroy</,
    );
    const none = await runJob(
      user,
      agent,
      { job_type: 'PLAN', configuration_id: vine.id },
      { status: 'SUCCESS', execution_metadata: { plan_summary: { add: 0, change: 0, destroy: 0 } } },
    );
    expect((await get(`/jobs/${none.id}`)).text).toMatch(/data-plan-summary data-from-metadata>No changes\.</);
  });

  it("shows a plan's run options as the engine's flags (issue 27)", async () => {
    const { vine } = await vineyardWithVine(user, 'targeted');
    const job = await user.createJob({
      job_type: 'PLAN',
      configuration_id: vine.id,
      run_options: { target: ['null_resource.a', 'module.m["<b>"]'], replace: ['null_resource.b'], refresh: false },
    });
    const { text } = await get(`/jobs/${job.id}`);
    expect(text).toContain(
      '<dt>Run options</dt><dd data-run-options><code>-target=null_resource.a</code> <code>-target=module.m[&quot;&lt;b&gt;&quot;]</code> <code>-replace=null_resource.b</code> <code>-refresh=false</code> </dd>',
    );
    const plain = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    expect((await get(`/jobs/${plain.id}`)).text).not.toContain('data-run-options');
  });

  it('pages the jobs list through "Older" links that keep the filters', async () => {
    const { vine } = await vineyardWithVine(user, 'paged');
    await user.createVineyard('paged-extra');
    const created: string[] = [];
    for (let i = 0; i < 3; i++) {
      created.push((await user.createJob({ job_type: 'PLAN', configuration_id: vine.id })).id);
    }
    const jobIdsOn = (text: string) => [...text.matchAll(/href="\/jobs\/([0-9a-f-]{36})"/g)].map((m) => m[1]);
    const olderOf = (text: string) => /data-older href="([^"]+)"/.exec(text)?.[1]?.replaceAll('&amp;', '&');
    const seen: (string | undefined)[] = [];
    let path: string | undefined = `/jobs?vine_id=${vine.id}&limit=2`;
    let pages = 0;
    while (path !== undefined) {
      const { response, text } = await get(path);
      expect(response.status).toBe(200);
      seen.push(...jobIdsOn(text));
      path = olderOf(text);
      if (path !== undefined) expect(path).toMatch(new RegExp(`^/jobs\\?vine_id=${vine.id}&cursor=[\\w-]+&limit=2$`));
      pages++;
    }
    expect(pages).toBe(2);
    expect(seen).toEqual([...created].reverse());
    // The first page follows its rows live, with its filters; an older page stays as it was read.
    const first = (await get(`/jobs?vine_id=${vine.id}&limit=2`)).text;
    expect(first).toContain(`sse-connect="/live/jobs?view=jobs&amp;vine_id=${vine.id}&amp;limit=2"`);
    expect((await get(olderOf(first) as string)).text).not.toContain('sse-connect');
    expect((await get('/jobs?limit=0')).response.status).toBe(404);
    expect((await get('/jobs?cursor=garbage')).response.status).toBe(404);
    expect(olderOf((await get('/vineyards?limit=1')).text)).toMatch(/^\/vineyards\?cursor=[\w-]+&limit=1$/);
  });

  it("streams a list's rows to signed-in people only, for the lists and filters there are", async () => {
    const { vine } = await vineyardWithVine(user, 'streamed');
    const signedOut = await get(`/live/jobs?view=vine&vine_id=${vine.id}`, {});
    expect(signedOut.response.status).toBe(401);
    expect((await get('/live/queue', {})).response.status).toBe(401);
    expect((await get('/live/fleet', {})).response.status).toBe(401);
    expect(signedOut.response.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(signedOut.response.headers.get('location')).toBeNull();
    for (const path of [
      '/live/jobs',
      '/live/jobs?view=fleet',
      '/live/jobs?view=vine',
      '/live/jobs?view=jobs&status=DONE',
      '/live/jobs?view=jobs&org_id=nope',
      '/live/jobs?view=vine&vine_id=not-an-id',
      '/live/queue?limit=0',
      '/live/fleet?status=SLEEPING',
    ]) {
      expect((await get(path)).response.status, path).toBe(400);
    }
    const page = (await get(`/configurations/${vine.id}`)).text;
    expect(page).toContain(`sse-connect="/live/jobs?view=vine&amp;vine_id=${vine.id}"`);
    expect(page).toMatch(/<script src="\/assets\/htmx-sse\.js\?v=\w+" defer><\/script>/);
    expect((await get('/queue?limit=5')).text).toContain('sse-connect="/live/queue?limit=5"');
    expect((await get('/fleet?status=PLANNED&limit=5')).text).toContain(
      'sse-connect="/live/fleet?status=PLANNED&amp;limit=5"',
    );
  });

  it("answers 404 for records that do not exist or are someone else's", async () => {
    const other = await server.userClient('mallory@example.com');
    const { vine: theirs } = await vineyardWithVine(other, 'theirs');
    const theirJob = await other.createJob({ job_type: 'PLAN', configuration_id: theirs.id });
    for (const path of [
      `/jobs/${theirJob.id}`,
      `/configurations/${theirs.id}`,
      `/vineyards/${theirs.vineyard_id}`,
      `/jobs/${crypto.randomUUID()}`,
      '/jobs/not-an-id',
      '/vineyards/%3Cscript%3E',
    ]) {
      const { response, text } = await get(path);
      expect(response.status).toBe(404);
      expect(text).toContain('does not exist, or it belongs to someone else');
      expect(text).not.toContain('theirs');
    }
  });
});

describe('web pages under a path prefix', () => {
  let server: WebServer;
  let outer: import('node:http').Server;
  let base: string;

  beforeAll(async () => {
    server = await new WebServer().start();
    const app = express();
    app.use('/trellis', server.controlPlane?.app as express.Express);
    outer = await new Promise((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    const address = outer.address() as import('node:net').AddressInfo;
    base = `http://127.0.0.1:${address.port}/trellis`;
  });
  afterAll(async () => {
    await new Promise((resolve) => outer?.close(resolve));
    await server?.close();
  });

  it('keeps every link, redirect and asset under the prefix', async () => {
    const signedOut = await fetch(`${base}/workers`, { redirect: 'manual' });
    expect(signedOut.headers.get('location')).toBe('/trellis/signin?next=%2Fworkers');
    const signIn = await fetch(`${base}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}&next=/workers`, { redirect: 'manual' });
    expect(signIn.headers.get('location')).toBe('/trellis/workers');
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const page = await (await fetch(`${base}/workers`, { headers: { cookie } })).text();
    const links = [...page.matchAll(/(?:href|src|action|data-then)="([^"]+)"/g)]
      .map((match) => match[1] as string)
      // Only the skip link ("#main") stays within the page, whatever the prefix.
      .filter((link) => link !== '#main');
    expect(links.length).toBeGreaterThan(5);
    for (const link of links) expect(link).toMatch(/^\/trellis\//);
    expect(page).toContain('data-base="/trellis"');
    const jobs = await (await fetch(`${base}/jobs`, { headers: { cookie } })).text();
    expect(jobs).toContain('sse-connect="/trellis/live/jobs?view=jobs"');
    const css = links.find((link) => link.includes('trellis.css')) as string;
    expect((await fetch(`http://127.0.0.1:${new URL(base).port}${css}`)).status).toBe(200);
  });
});
