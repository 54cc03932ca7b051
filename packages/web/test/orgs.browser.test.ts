/**
 * Organizations in the web interface, in Chromium (issue 12): two real people signed in through a
 * real OpenID Connect issuer on loopback, a viewer and an admin of one organization, see what their
 * role allows and only the buttons their role may use; an invited person sees the invitation and
 * nothing of the organization until they accept it on the page, or decline it (issue 23); the
 * admin manages members with the forms;
 * the switcher filters the lists; a form the role may not send is refused with the reason; an
 * admin renames the organization, an owner deletes one by typing its name (told `org_busy` while a
 * job is queued), a member leaves.
 */
import type { UserActor } from '@trellis/core';
import { addAcceptedMember } from '@trellis/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BROWSER_TEST_TIMEOUT_MS,
  findChromium,
  screenshot,
  TestBrowser,
  clickAndConfirm,
  postWithSession,
} from './support/browser.js';
import { type Issuer, issuerEnv, signedInThroughIssuer, startIssuer } from './support/oidcIssuer.js';
import { MAIN_TF, WebServer } from './support/webServer.js';

const chromiumPath = findChromium('the organizations suite');

describe.skipIf(!chromiumPath)(
  'organizations in the web interface, in Chromium',
  { timeout: BROWSER_TEST_TIMEOUT_MS },
  () => {
    let issuer: Issuer;
    let server: WebServer;
    let browser: TestBrowser;
    let web: string;
    let owner: UserActor;
    let orgId: string;
    let vineId: string;
    let jobId: string;
    let personalVineyard: string;
    let viewer: Page;
    let admin: Page;

    /** A person in their own browser, signed in through the issuer as `<login>@example.com`. */
    const signedIn = (login: string) => signedInThroughIssuer(browser, issuer, web, login);

    beforeAll(async () => {
      issuer = await startIssuer();
      server = await new WebServer({ env: issuerEnv(issuer) }).start();
      web = `http://localhost:${server.port}`;
      issuer.register(`${web}/api/auth/callback`);
      browser = await TestBrowser.launch(chromiumPath as string);
      viewer = await signedIn('vera');
      admin = await signedIn('adam');

      // The organization, its members and records, made by its owner through the use cases.
      const { useCases } = server;
      const ownerUser = await useCases.auth.ensureUser({ email: 'olga@example.com' });
      owner = { userId: ownerUser.id, email: ownerUser.email };
      orgId = (await useCases.orgs.create(owner, { name: 'platform' })).id;
      // Adam accepts his invitation through the use cases; Vera answers hers on the page (below).
      const adamUser = await useCases.auth.ensureUser({ email: 'adam@example.com' });
      await addAcceptedMember(useCases, owner, orgId, { userId: adamUser.id, email: adamUser.email }, 'admin');
      await useCases.orgs.addMember(owner, orgId, { email: 'vera@example.com', role: 'viewer' });
      const spamId = (await useCases.orgs.create(owner, { name: 'unwanted' })).id;
      await useCases.orgs.addMember(owner, spamId, { email: 'vera@example.com', role: 'owner' });
      const vineyard = await useCases.vineyards.create(owner, { name: 'shared-prod', org_id: orgId });
      const vine = await useCases.vines.create(owner, {
        name: 'edge',
        vineyard_id: vineyard.id,
        source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
      });
      vineId = vine.id;
      jobId = (await useCases.jobs.create(owner, { job_type: 'PLAN', configuration_id: vine.id })).id;
      // Vera's own vineyard: "Personal" shows it, the organization's filter does not.
      const veraUser = await useCases.auth.ensureUser({ email: 'vera@example.com' });
      personalVineyard = (
        await useCases.vineyards.create({ userId: veraUser.id, email: veraUser.email }, { name: 'vera-sandbox' })
      ).name;
    });
    afterAll(async () => {
      await browser?.close();
      await server?.close();
      await new Promise((resolve) => issuer?.server.close(resolve));
    });

    it('shows an invited person the invitations and nothing of the organizations until they answer', async () => {
      await viewer.goto(`${web}/orgs`);
      expect(await viewer.locator('tr[data-org]').count()).toBe(0);
      const invitation = viewer.locator('tr[data-invitation="platform"]');
      expect(await invitation.locator('[data-role-badge]').textContent()).toBe('viewer');
      expect(await invitation.textContent()).toContain('olga@example.com');
      // No organization yet, so no switcher.
      expect(await viewer.locator('#org-switcher').count()).toBe(0);
      await screenshot(viewer, 'orgs-invitations');
      const before = await viewer.goto(`${web}/orgs/${orgId}`);
      expect(before?.status()).toBe(404);

      await viewer.goto(`${web}/orgs`);
      await viewer.locator('tr[data-invitation="unwanted"] [data-decline]').click();
      await viewer.locator('tr[data-invitation="unwanted"]').waitFor({ state: 'detached' });
      expect(await viewer.locator('tr[data-org="unwanted"]').count()).toBe(0);
      await viewer.locator('tr[data-invitation="platform"] [data-accept]').click();
      await viewer.waitForURL(`${web}/orgs/${orgId}`);
      expect(await viewer.locator('[data-my-role]').getAttribute('data-my-role')).toBe('viewer');
      await viewer.goto(`${web}/orgs`);
      expect(await viewer.locator('[data-invitations]').count()).toBe(0);
    });

    it('shows a viewer the organization and its members, read only', async () => {
      await viewer.goto(`${web}/orgs`);
      expect(await viewer.locator('tr[data-org="platform"] [data-role-badge]').textContent()).toBe('viewer');
      await viewer.click('tr[data-org="platform"] a');
      await viewer.waitForURL(`${web}/orgs/${orgId}`);
      expect(await viewer.locator('[data-my-role]').getAttribute('data-my-role')).toBe('viewer');
      const emails = await viewer
        .locator('tr[data-member]')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-member')));
      expect(emails.sort()).toEqual(['adam@example.com', 'olga@example.com', 'vera@example.com']);
      expect(await viewer.locator('form[data-add-member]').count()).toBe(0);
      expect(await viewer.locator('form[data-set-role], form[data-remove-member]').count()).toBe(0);
      expect(await viewer.locator('[data-read-only]').count()).toBe(1);
      await screenshot(viewer, 'orgs-viewer-members');
    });

    it('gives a viewer no buttons to run or cancel jobs of the organization', async () => {
      await viewer.goto(`${web}/configurations/${vineId}`);
      expect(await viewer.locator('h1').textContent()).toBe('edge');
      expect(await viewer.locator('[data-create-job]').count()).toBe(0);
      expect(await viewer.locator('[data-read-only]').textContent()).toContain('Your role in platform is viewer');
      await viewer.goto(`${web}/jobs/${jobId}`);
      expect(await viewer.locator('#job-status').textContent()).toBe('QUEUED');
      expect(await viewer.locator('[data-cancel-job], [data-create-job]').count()).toBe(0);
      await screenshot(viewer, 'orgs-viewer-job');
    });

    it('filters the lists with the organization switcher', async () => {
      await viewer.goto(`${web}/vineyards`);
      const names = () => viewer.locator('.vineyard h2 a').allTextContents();
      expect((await names()).sort()).toEqual(['shared-prod', personalVineyard]);
      expect(await viewer.locator('.vineyard [data-owner="platform"]').count()).toBe(1);
      await viewer.selectOption('#org-switcher', { label: 'platform' });
      await viewer.waitForURL((url) => url.searchParams.get('org_id') === orgId);
      expect(await names()).toEqual(['shared-prod']);
      await viewer.selectOption('#org-switcher', { label: 'Personal' });
      await viewer.waitForURL((url) => url.searchParams.get('org_id') === 'personal');
      expect(await names()).toEqual([personalVineyard]);
      await viewer.goto(`${web}/jobs?org_id=${orgId}`);
      expect(await viewer.locator(`a[href="/jobs/${jobId}"]`).count()).toBe(1);
      expect(await viewer.locator('#org-switcher').inputValue()).toBe(orgId);
    });

    it("shows a viewer a notification's URL up to its host, an admin all of it", async () => {
      const url = 'https://1.1.1.1/services/T000/B000/secret-part-of-the-url';
      const created = await server.useCases.notifications.create(owner, {
        name: 'ops',
        kind: 'slack',
        url,
        events: ['job.failed'],
        org_id: orgId,
      });
      await viewer.goto(`${web}/notifications?org_id=${orgId}`);
      const row = viewer.locator(`#notification-${created.id}`);
      expect(await row.locator('code').textContent()).toBe('https://1.1.1.1/…');
      expect(await row.textContent()).toContain('the rest is shown to admins only');
      expect(await viewer.content()).not.toContain('secret-part');
      await viewer.goto(`${web}/notifications/${created.id}`);
      expect(await viewer.content()).not.toContain('secret-part');
      await admin.goto(`${web}/notifications?org_id=${orgId}`);
      expect(await admin.locator(`#notification-${created.id} code`).textContent()).toBe(url);
      await server.useCases.notifications.delete(owner, created.id);
    });

    it("refuses a viewer's member form, saying which role it needs", async () => {
      await viewer.goto(`${web}/orgs/${orgId}`);
      // The form is not on the page; send it anyway from the page (our origin, the viewer's session).
      const answer = await viewer.evaluate(async (path) => {
        const response = await fetch(path, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'email=mallory%40example.com&role=admin',
        });
        return { status: response.status, text: await response.text() };
      }, `/orgs/${orgId}/members`);
      expect(answer.status).toBe(403);
      expect(answer.text).toContain('yours is viewer');
      const members = await server.useCases.orgs.listMembers(owner, orgId);
      expect(members.items.map((member) => member.email)).not.toContain('mallory@example.com');
    });

    it('gives a viewer no rename or delete form, and refuses them sent by hand', async () => {
      await viewer.goto(`${web}/orgs/${orgId}`);
      expect(await viewer.locator('form[data-rename-org], form[data-delete-org]').count()).toBe(0);
      expect(await viewer.locator('form[data-leave-org]').count()).toBe(1);
      const send = (path: string, body: string) =>
        viewer.evaluate(
          async ([to, form]) => {
            const response = await fetch(to as string, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: form as string,
            });
            return { status: response.status, text: await response.text() };
          },
          [path, body],
        );
      const rename = await send(`/orgs/${orgId}/rename`, 'name=hijacked');
      expect(rename.status).toBe(403);
      expect(rename.text).toContain('yours is viewer');
      const remove = await send(`/orgs/${orgId}/delete`, 'confirm=platform');
      expect(remove.status).toBe(403);
      expect(remove.text).toContain('yours is viewer');
      expect((await server.useCases.orgs.get(owner, orgId)).name).toBe('platform');
    });

    it('lets an admin add a member, change a role and remove a member; owners stay out of reach', async () => {
      await admin.goto(`${web}/orgs/${orgId}`);
      expect(await admin.locator('[data-my-role]').getAttribute('data-my-role')).toBe('admin');
      // An admin may not make owners, nor change or remove one.
      const roles = await admin.locator('#member-role option').allTextContents();
      expect(roles).toEqual(['viewer', 'operator', 'admin']);
      const ownerRow = admin.locator('tr[data-member="olga@example.com"]');
      expect(await ownerRow.locator('form').count()).toBe(0);

      await admin.fill('#member-email', 'newbie@example.com');
      await admin.selectOption('#member-role', 'operator');
      await admin.click('form[data-add-member] button[type=submit]');
      const newbie = admin.locator('tr[data-member="newbie@example.com"]');
      await newbie.waitFor();
      expect(await newbie.locator('[data-role-badge]').textContent()).toBe('operator');
      expect(await newbie.textContent()).toContain('pending');

      const vera = admin.locator('tr[data-member="vera@example.com"]');
      await vera.locator('select').selectOption('operator');
      await vera.locator('form[data-set-role] button').click();
      await admin.waitForFunction(
        () =>
          document.querySelector('tr[data-member="vera@example.com"] [data-role-badge]')?.textContent === 'operator',
      );
      await screenshot(admin, 'orgs-admin-members');

      await Promise.all([
        admin.waitForSelector('[data-confirmation]'),
        newbie.locator('form[data-remove-member] button').click(),
      ]);
      await Promise.all([admin.waitForNavigation(), admin.click('[data-confirm-yes]')]);
      await newbie.waitFor({ state: 'detached' });
      const members = await server.useCases.orgs.listMembers(owner, orgId);
      expect(members.items.map((member) => [member.email, member.role]).sort()).toEqual([
        ['adam@example.com', 'admin'],
        ['olga@example.com', 'owner'],
        ['vera@example.com', 'operator'],
      ]);
      // Adding someone twice is refused with the reason, on the page.
      await admin.fill('#member-email', 'vera@example.com');
      await admin.click('form[data-add-member] button[type=submit]');
      await admin.locator('[data-form-error]').waitFor();
      expect(await admin.locator('[data-form-error]').textContent()).toMatch(/already/i);
    });

    it("refuses a member form sent from another site, even with an admin's session", async () => {
      const response = await postWithSession(
        admin,
        `${web}/orgs/${orgId}/members`,
        'email=mallory%40example.com&role=admin',
        'http://evil.example',
      );
      expect(response.status).toBe(403);
      expect(await response.text()).toContain('Request refused');
      const members = await server.useCases.orgs.listMembers(owner, orgId);
      expect(members.items.map((member) => member.email)).not.toContain('mallory@example.com');
    });

    it('gives an admin the buttons to run and cancel jobs of the organization', async () => {
      await admin.goto(`${web}/configurations/${vineId}`);
      expect(await admin.locator('[data-create-job="PLAN"]').count()).toBe(1);
      expect(await admin.locator('[data-read-only]').count()).toBe(0);
      await admin.goto(`${web}/jobs/${jobId}`);
      expect(await admin.locator('[data-cancel-job]').isVisible()).toBe(true);
    });

    it('lets someone invited by email join after their first sign-in, by accepting', async () => {
      await admin.goto(`${web}/orgs/${orgId}`);
      await admin.fill('#member-email', 'pia@example.com');
      await admin.click('form[data-add-member] button[type=submit]');
      const invited = admin.locator('tr[data-member="pia@example.com"]');
      await invited.waitFor();
      expect(await invited.textContent()).toContain('pending');

      const pia = await signedIn('pia');
      expect(await pia.locator('#org-switcher').count()).toBe(0);
      await pia.goto(`${web}/orgs`);
      expect(await pia.locator('tr[data-invitation="platform"]').textContent()).toContain('adam@example.com');
      await pia.locator('tr[data-invitation="platform"] [data-accept]').click();
      await pia.waitForURL(`${web}/orgs/${orgId}`);
      expect(await pia.locator('#org-switcher option').allTextContents()).toEqual(['All', 'Personal', 'platform']);
      expect(await pia.locator('[data-my-role]').getAttribute('data-my-role')).toBe('viewer');
      expect(await pia.locator('tr[data-member="pia@example.com"]').textContent()).toContain('active');
    });

    it('creates an organization with the form, its creator its owner', async () => {
      await admin.goto(`${web}/orgs`);
      await admin.fill('#org-name', 'adams-lab');
      await admin.click('form[data-create-org] button[type=submit]');
      await admin.waitForURL((url) => /^\/orgs\/[0-9a-f-]{36}$/.test(url.pathname));
      expect(await admin.locator('h1').textContent()).toBe('adams-lab');
      expect(await admin.locator('[data-my-role]').getAttribute('data-my-role')).toBe('owner');
      // The owner may make owners.
      expect(await admin.locator('#member-role option').allTextContents()).toContain('owner');
      // The switcher now lists both organizations.
      expect(await admin.locator('#org-switcher option').allTextContents()).toEqual([
        'All',
        'Personal',
        'adams-lab',
        'platform',
      ]);
      // A taken name is refused on the page.
      await admin.goto(`${web}/orgs`);
      await admin.fill('#org-name', 'platform');
      await admin.click('form[data-create-org] button[type=submit]');
      await admin.locator('[data-form-error]').waitFor();
      expect(await admin.locator('#org-name').inputValue()).toBe('platform');
    });
    it('lets an admin rename the organization, but not delete it', async () => {
      await admin.goto(`${web}/orgs/${orgId}`);
      expect(await admin.locator('form[data-delete-org]').count()).toBe(0);
      expect(await admin.locator('#org-new-name').inputValue()).toBe('platform');
      await admin.fill('#org-new-name', 'platform-ops');
      await admin.click('form[data-rename-org] button[type=submit]');
      await admin.waitForFunction(() => document.querySelector('h1')?.textContent === 'platform-ops');
      expect(admin.url()).toBe(`${web}/orgs/${orgId}`);
      expect((await server.useCases.orgs.get(owner, orgId)).name).toBe('platform-ops');
      expect(await admin.locator('#org-switcher option').allTextContents()).toContain('platform-ops');
      await screenshot(admin, 'orgs-admin-rename');

      // A taken name is refused on the page; an admin's delete sent by hand is refused.
      await admin.fill('#org-new-name', 'adams-lab');
      await admin.click('form[data-rename-org] button[type=submit]');
      await admin.locator('[data-form-error]').waitFor();
      expect(await admin.locator('[data-form-error]').textContent()).toMatch(/taken|already/i);
      const answer = await admin.evaluate(async (path) => {
        const response = await fetch(path, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'confirm=platform-ops',
        });
        return { status: response.status, text: await response.text() };
      }, `/orgs/${orgId}/delete`);
      expect(answer.status).toBe(403);
      expect(answer.text).toContain('yours is admin');
      expect((await server.useCases.orgs.get(owner, orgId)).name).toBe('platform-ops');
    });

    it("refuses a rename sent from another site, even with an admin's session", async () => {
      const response = await postWithSession(admin, `${web}/orgs/${orgId}/rename`, 'name=evil', 'http://evil.example');
      expect(response.status).toBe(403);
      expect(await response.text()).toContain('Request refused');
      expect((await server.useCases.orgs.get(owner, orgId)).name).toBe('platform-ops');
    });

    it('lets an owner delete an organization by typing its name, and says org_busy while a job is queued', async () => {
      const adamUser = await server.useCases.auth.ensureUser({ email: 'adam@example.com' });
      const adam: UserActor = { userId: adamUser.id, email: adamUser.email };
      const lab = (await server.useCases.orgs.list(adam, {})).items.find((org) => org.name === 'adams-lab');
      const labId = lab?.id as string;
      const vineyard = await server.useCases.vineyards.create(adam, { name: 'lab-prod', org_id: labId });
      const vine = await server.useCases.vines.create(adam, {
        name: 'lab-edge',
        vineyard_id: vineyard.id,
        source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
      });
      const job = await server.useCases.jobs.create(adam, { job_type: 'PLAN', configuration_id: vine.id });

      await admin.goto(`${web}/orgs/${labId}`);
      // Its only owner cannot leave it, and is told so instead of offered the button.
      expect(await admin.locator('form[data-leave-org]').count()).toBe(0);
      expect(await admin.locator('[data-last-owner]').textContent()).toContain('last owner');

      // A wrong name deletes nothing.
      await admin.fill('#org-delete-confirm', 'adams');
      await admin.click('form[data-delete-org] button[type=submit]');
      await admin.locator('[data-form-error]').waitFor();
      expect(await admin.locator('[data-form-error]').textContent()).toContain('Nothing was deleted');

      // A queued job: refused, saying why and where the jobs are.
      await admin.fill('#org-delete-confirm', 'adams-lab');
      const [busy] = await Promise.all([
        admin.waitForResponse((response) => response.url().endsWith(`/orgs/${labId}/delete`)),
        admin.click('form[data-delete-org] button[type=submit]'),
      ]);
      expect(busy.status()).toBe(409);
      expect(await admin.locator('[data-form-error]').textContent()).toContain(
        'the organization has queued or running jobs; cancel them first',
      );
      expect(await admin.locator('[data-busy-jobs]').getAttribute('href')).toBe(`/jobs?org_id=${labId}&status=QUEUED`);
      await screenshot(admin, 'orgs-owner-delete-busy');
      expect((await server.useCases.orgs.get(adam, labId)).name).toBe('adams-lab');

      await server.useCases.jobs.cancel(adam, job.id);
      await admin.fill('#org-delete-confirm', 'adams-lab');
      await admin.click('form[data-delete-org] button[type=submit]');
      await admin.waitForURL(`${web}/orgs`);
      expect(await admin.locator('tr[data-org]').evaluateAll((rows) => rows.map((row) => row.dataset.org))).toEqual([
        'platform-ops',
      ]);
      await expect(server.useCases.orgs.get(adam, labId)).rejects.toMatchObject({ code: 'org_not_found' });
    });

    it('lets a member leave the organization', async () => {
      await viewer.goto(`${web}/orgs/${orgId}`);
      await clickAndConfirm(viewer, 'form[data-leave-org] button[type=submit]');
      expect(new URL(viewer.url()).pathname).toBe('/orgs');
      expect(await viewer.locator('tr[data-org]').count()).toBe(0);
      const members = await server.useCases.orgs.listMembers(owner, orgId);
      expect(members.items.map((member) => member.email)).not.toContain('vera@example.com');
      // The organization's page is now not found for her.
      const gone = await viewer.goto(`${web}/orgs/${orgId}`);
      expect(gone?.status()).toBe(404);
    });
  },
);
