/**
 * `trellis orgs …` and `--org`, the built binary against the real control plane (issue 12): an
 * owner makes an organization, invites a viewer, who sees the invitation and nothing else of the
 * organization until `trellis orgs invitations accept` (issue 23); the owner puts a vineyard and an
 * agent in it; the viewer reads
 * it and is told, in their terms and with exit code 6, what their role does not allow; a removed
 * member no longer finds the organization; an admin renames, a member leaves, an owner deletes (and
 * is told `org_busy` while a job is queued).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, runTrellis, startWithSecondPerson, TempHome, TestServer, userClient } from './harness.js';

describe('trellis orgs and --org', { timeout: 120_000 }, () => {
  const server = new TestServer();
  const ownerHome = new TempHome();
  const viewerHome = new TempHome();
  let viewerToken: string;
  let orgId: string;

  const asOwner = (...args: string[]) => runTrellis(args, { env: ownerHome.env() });
  const asViewer = (...args: string[]) =>
    runTrellis(args, { env: viewerHome.env({ TRELLIS_TOKEN: viewerToken, TRELLIS_SERVER: server.url }) });
  const json = <T>(result: RunResult): T => {
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    return JSON.parse(result.stdout) as T;
  };

  beforeAll(async () => {
    viewerToken = await startWithSecondPerson(server, ownerHome, 'vera@example.com');
  });
  afterAll(async () => {
    await server.destroy();
    ownerHome.remove();
    viewerHome.remove();
  });

  it('creates an organization, with its creator as owner', async () => {
    const created = await asOwner('orgs', 'create', 'platform');
    expect(created.code).toBe(0);
    expect(created.stderr).toContain('Created organization platform; you are its owner');
    orgId = created.stdout.trim();
    expect(orgId).toMatch(/^[0-9a-f-]{36}$/);

    const listed = await asOwner('orgs', 'list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^NAME\s+ROLE\s+CREATED\s+ID$/m);
    expect(listed.stdout).toMatch(new RegExp(`^platform\\s+owner\\s+.*${orgId}$`, 'm'));
    expect(json<{ id: string; role: string }[]>(await asOwner('orgs', 'list', '--json'))).toEqual([
      expect.objectContaining({ id: orgId, name: 'platform', role: 'owner' }),
    ]);

    const taken = await asOwner('orgs', 'create', 'PLATFORM');
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('[org_name_taken]');
  });

  it('invites a member by email, who accepts and is listed; declining removes an invitation', async () => {
    const added = await asOwner('orgs', 'members', 'add', 'platform', 'vera@example.com', '--role', 'viewer');
    expect(added.code).toBe(0);
    expect(added.stderr).toContain('Invited vera@example.com to platform as viewer; they join when they accept');
    // Issue 23: an invitation; vera sees it, and nothing of the organization yet.
    expect(json<unknown[]>(await asViewer('orgs', 'list', '--json'))).toEqual([]);
    const pending = await asViewer('orgs', 'invitations');
    expect(pending.code).toBe(0);
    expect(pending.stdout).toMatch(/^ORGANIZATION\s+ROLE\s+INVITED BY\s+SENT\s+ID$/m);
    expect(pending.stdout).toMatch(/^platform\s+viewer\s+admin@localhost\s/m);
    const listed = json<{ id: string; org_name: string }[]>(await asViewer('orgs', 'invitations', 'list', '--json'));
    expect(listed).toEqual([expect.objectContaining({ org_id: orgId, org_name: 'platform', role: 'viewer' })]);
    const unknown = await asViewer('orgs', 'invitations', 'accept', 'elsewhere');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no pending invitation to "elsewhere": your pending invitations are to platform');
    const accepted = await asViewer('orgs', 'invitations', 'accept', 'PLATFORM');
    expect(accepted.code).toBe(0);
    expect(accepted.stderr).toContain('You joined platform as viewer');
    expect(json<unknown[]>(await asViewer('orgs', 'invitations', '--json'))).toEqual([]);
    expect((await asViewer('orgs', 'invitations')).stderr).toContain('You have no pending invitation.');

    const invited = json<{ status: string; user_id: string | null }>(
      await asOwner('orgs', 'members', 'add', orgId, 'nobody-yet@example.com', '--role', 'operator', '--json'),
    );
    expect(invited).toMatchObject({ status: 'pending', user_id: null, role: 'operator' });

    const table = await asOwner('orgs', 'members', 'list', 'platform');
    expect(table.stdout).toMatch(/^admin@localhost\s+owner\s+active\s/m);
    expect(table.stdout).toMatch(/^vera@example\.com\s+viewer\s+active\s/m);
    expect(table.stdout).toMatch(/^nobody-yet@example\.com\s+operator\s+pending\s+-\s/m);

    const shown = json<{ name: string; role: string; members: { email: string }[] }>(
      await asOwner('orgs', 'show', 'platform', '--json'),
    );
    expect(shown).toMatchObject({ id: orgId, name: 'platform', role: 'owner' });
    expect(shown.members.map((member) => member.email).sort()).toEqual([
      'admin@localhost',
      'nobody-yet@example.com',
      'vera@example.com',
    ]);

    const badRole = await asOwner('orgs', 'members', 'add', 'platform', 'x@example.com', '--role', 'boss');
    expect(badRole.code).toBe(2);
    const exists = await asOwner('orgs', 'members', 'add', 'platform', 'VERA@example.com', '--role', 'admin');
    expect(exists.code).toBe(1);
    expect(exists.stderr).toContain('[member_exists]');
  });

  it('puts a vineyard and an agent in the organization, and filters the lists with --org', async () => {
    const vineyard = json<{ name: string; owner_id: string }>(
      await asOwner('vineyards', 'create', 'shared-prod', '--org', 'platform', '--json'),
    );
    expect(vineyard).toMatchObject({ name: 'shared-prod', owner_id: orgId });
    expect((await asOwner('vineyards', 'create', 'mine')).code).toBe(0);
    const agent = json<{ worker_id: string }>(
      await asOwner('workers', 'register', '--name', 'pool-1', '--org', 'platform', '--json'),
    );

    const names = async (...args: string[]) =>
      json<{ name: string }[]>(await asOwner('vineyards', 'list', ...args, '--json'))
        .map((entry) => entry.name)
        .sort();
    expect(await names()).toEqual(['mine', 'shared-prod']);
    expect(await names('--org', 'platform')).toEqual(['shared-prod']);
    expect(await names('--org', orgId)).toEqual(['shared-prod']);
    expect(await names('--org', 'personal')).toEqual(['mine']);
    // Without --org the table says whose each vineyard is.
    const table = await asOwner('vineyards', 'list');
    expect(table.stdout).toMatch(/^NAME\s+OWNER\s+VINES\s+CREATED\s+ID$/m);
    expect(table.stdout).toMatch(/^shared-prod\s+platform\s+0\s/m);
    expect(table.stdout).toMatch(/^mine\s+personal\s+0\s/m);
    expect((await asOwner('vineyards', 'list', '--org', 'personal')).stdout).toMatch(/^NAME\s+VINES\s+CREATED\s+ID$/m);

    const workers = json<{ id: string; owner_id: string }[]>(
      await asOwner('workers', 'list', '--org', 'platform', '--json'),
    );
    expect(workers).toEqual([expect.objectContaining({ id: agent.worker_id, owner_id: orgId })]);
    expect(json<unknown[]>(await asOwner('workers', 'list', '--org', 'personal', '--json'))).toEqual([]);
    expect(json<unknown[]>(await asOwner('jobs', 'list', '--org', 'platform', '--json'))).toEqual([]);
    expect(json<unknown[]>(await asOwner('configs', 'list', '--org', 'platform', '--json'))).toEqual([]);

    const unknown = await asOwner('vineyards', 'list', '--org', 'no-such-org');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('you belong to no organization named "no-such-org"');
  });

  it("lets a viewer read the organization, and says in the viewer's terms what the role does not allow", async () => {
    expect(json<{ name: string; role: string }[]>(await asViewer('orgs', 'list', '--json'))).toEqual([
      expect.objectContaining({ id: orgId, role: 'viewer' }),
    ]);
    expect(
      json<{ name: string }[]>(await asViewer('vineyards', 'list', '--org', 'platform', '--json')).map((v) => v.name),
    ).toEqual(['shared-prod']);
    expect((await asViewer('orgs', 'members', 'list', 'platform')).code).toBe(0);

    const create = await asViewer('vineyards', 'create', 'sneaky', '--org', 'platform');
    expect(create.code).toBe(6);
    expect(create.stderr).toContain('your role in platform is viewer; this needs admin');
    expect(create.stderr).toContain('[insufficient_role]');

    const add = await asViewer('orgs', 'members', 'add', 'platform', 'mallory@example.com', '--role', 'viewer');
    expect(add.code).toBe(6);
    expect(add.stderr).toContain('your role in platform is viewer; this needs admin');

    const register = await asViewer('workers', 'register', '--name', 'rogue', '--org', orgId);
    expect(register.code).toBe(6);
    expect(register.stderr).toContain('your role in platform is viewer; this needs admin');

    // A notification's URL is a credential: the viewer sees scheme and host only (issue 23).
    const url = 'https://1.1.1.1/services/T000/B000/secret-part-of-the-url';
    const created = await asOwner(
      'notifications',
      'create',
      '--name',
      'ops',
      '--kind',
      'slack',
      '--url',
      url,
      '--event',
      'job.failed',
      '--org',
      orgId,
      '--json',
    );
    const id = json<{ id: string }>(created).id;
    expect(json<{ url: string }>(await asOwner('notifications', 'show', id, '--json')).url).toBe(url);
    const shown = await asViewer('notifications', 'show', id);
    expect(shown.stdout).toContain('URL:       https://1.1.1.1/… (the rest is shown to admins only)');
    expect(shown.stdout).not.toContain('secret-part');
    expect(json<{ url_masked: boolean }>(await asViewer('notifications', 'show', id, '--json')).url_masked).toBe(true);
    expect((await asViewer('notifications', 'list', '--json')).stdout).not.toContain('secret-part');
    expect((await asOwner('notifications', 'delete', id)).code).toBe(0);
  });

  it('changes a role and removes a member by email or id; the last owner stays', async () => {
    const changed = await asOwner('orgs', 'members', 'set-role', 'platform', 'vera@example.com', 'operator');
    expect(changed.code).toBe(0);
    expect(changed.stderr).toContain('vera@example.com is now operator in platform (was viewer)');
    expect(json<{ role: string }[]>(await asViewer('orgs', 'list', '--json'))).toEqual([
      expect.objectContaining({ role: 'operator' }),
    ]);

    const lastOwner = await asOwner('orgs', 'members', 'set-role', 'platform', 'admin@localhost', 'admin');
    expect(lastOwner.code).toBe(1);
    expect(lastOwner.stderr).toContain('[last_owner]');

    const members = json<{ id: string; email: string }[]>(
      await asOwner('orgs', 'members', 'list', 'platform', '--json'),
    );
    const pending = members.find((member) => member.email === 'nobody-yet@example.com');
    const removedById = await asOwner('orgs', 'members', 'remove', 'platform', pending?.id as string);
    expect(removedById.code).toBe(0);
    expect(removedById.stderr).toContain('Removed nobody-yet@example.com from platform');

    expect((await asOwner('orgs', 'members', 'remove', 'platform', 'vera@example.com')).code).toBe(0);
    const gone = await asOwner('orgs', 'members', 'remove', 'platform', 'vera@example.com');
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('platform has no member vera@example.com');

    // Vera no longer finds the organization, by name or by id, nor its vineyards.
    expect(json<unknown[]>(await asViewer('orgs', 'list', '--json'))).toEqual([]);
    const byName = await asViewer('orgs', 'show', 'platform');
    expect(byName.code).toBe(1);
    expect(byName.stderr).toContain('you belong to no organization named "platform"');
    const byId = await asViewer('orgs', 'show', orgId);
    expect(byId.code).toBe(1);
    expect(byId.stderr).toContain('[org_not_found]');
    expect(json<unknown[]>(await asViewer('vineyards', 'list', '--json'))).toEqual([]);
  });
  let labId: string;
  it('accepts an invitation by its id', async () => {
    labId = (await asOwner('orgs', 'create', 'lab')).stdout.trim();
    expect((await asOwner('orgs', 'members', 'add', 'lab', 'vera@example.com', '--role', 'viewer')).code).toBe(0);
    const invitation = json<{ id: string }[]>(await asViewer('orgs', 'invitations', '--json'))[0]?.id as string;
    expect(
      json<{ id: string; role: string }>(await asViewer('orgs', 'invitations', 'accept', invitation, '--json')),
    ).toMatchObject({
      id: labId,
      role: 'viewer',
    });
  });

  it('renames an organization as its admin; a viewer is refused, and an admin may not delete it', async () => {
    const refused = await asViewer('orgs', 'rename', 'lab', 'vera-lab');
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain('your role in lab is viewer; this needs admin');
    expect(json<{ name: string }>(await asOwner('orgs', 'show', labId, '--json')).name).toBe('lab');

    expect((await asOwner('orgs', 'members', 'set-role', 'lab', 'vera@example.com', 'admin')).code).toBe(0);
    const renamed = await asViewer('orgs', 'rename', 'lab', 'research');
    expect(renamed.code).toBe(0);
    expect(renamed.stderr).toContain('Renamed lab to research');
    expect(
      json<{ id: string; name: string; role: string }>(await asOwner('orgs', 'show', 'research', '--json')),
    ).toMatchObject({ id: labId, name: 'research', role: 'owner' });
    const notOwner = await asViewer('orgs', 'delete', 'research', '--yes');
    expect(notOwner.code).toBe(6);
    expect(notOwner.stderr).toContain('your role in research is admin; this needs owner');
    expect((await asOwner('orgs', 'members', 'set-role', 'research', 'vera@example.com', 'viewer')).code).toBe(0);

    const asJson = json<{ id: string; name: string }>(await asOwner('orgs', 'rename', labId, 'research-2', '--json'));
    expect(asJson).toMatchObject({ id: labId, name: 'research-2' });
    const taken = await asOwner('orgs', 'rename', 'research-2', 'platform');
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('[org_name_taken]');
    // The members see the new name.
    expect(json<{ name: string }[]>(await asViewer('orgs', 'list', '--json')).map((org) => org.name)).toEqual([
      'research-2',
    ]);
  });

  it('declines an invitation: it is gone, and the organization stays out of sight', async () => {
    expect((await asOwner('orgs', 'create', 'spam')).code).toBe(0);
    expect((await asOwner('orgs', 'members', 'add', 'spam', 'vera@example.com', '--role', 'owner')).code).toBe(0);
    const declined = await asViewer('orgs', 'invitations', 'decline', 'spam', '--json');
    expect(json<{ org_name: string; role: string }>(declined)).toMatchObject({ org_name: 'spam', role: 'owner' });
    expect(json<unknown[]>(await asViewer('orgs', 'invitations', '--json'))).toEqual([]);
    expect(json<{ name: string }[]>(await asViewer('orgs', 'list', '--json')).map((org) => org.name)).not.toContain(
      'spam',
    );
    const members = json<{ members: { email: string }[] }>(await asOwner('orgs', 'show', 'spam', '--json')).members;
    expect(members.map((member) => member.email)).toEqual(['admin@localhost']);
    expect((await asOwner('orgs', 'delete', 'spam', '--yes')).code).toBe(0);
  });

  it('shows whether each member has joined', async () => {
    expect(
      (await asOwner('orgs', 'members', 'add', 'research-2', 'later@example.com', '--role', 'operator')).code,
    ).toBe(0);
    const shown = await asOwner('orgs', 'show', 'research-2');
    expect(shown.stdout).toMatch(/^EMAIL\s+ROLE\s+STATUS\s+JOINED\s+ID$/m);
    expect(shown.stdout).toMatch(/^vera@example\.com\s+viewer\s+active\s/m);
    expect(shown.stdout).toMatch(/^later@example\.com\s+operator\s+pending\s+-\s/m);
    const members = json<{ members: { email: string; status: string }[] }>(
      await asOwner('orgs', 'show', 'research-2', '--json'),
    ).members;
    expect(members.map((member) => [member.email, member.status]).sort()).toEqual([
      ['admin@localhost', 'active'],
      ['later@example.com', 'pending'],
      ['vera@example.com', 'active'],
    ]);
  });

  it('lets a member leave, and keeps the last owner', async () => {
    const left = await asViewer('orgs', 'members', 'leave', 'research-2', '--json');
    expect(json<{ email: string; role: string }>(left)).toMatchObject({ email: 'vera@example.com', role: 'viewer' });
    expect(json<unknown[]>(await asViewer('orgs', 'list', '--json'))).toEqual([]);
    const again = await asViewer('orgs', 'members', 'leave', 'research-2');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('you belong to no organization named "research-2"');

    const lastOwner = await asOwner('orgs', 'members', 'leave', 'research-2');
    expect(lastOwner.code).toBe(1);
    expect(lastOwner.stderr).toContain('[last_owner]');
    expect(json<{ role: string }>(await asOwner('orgs', 'show', 'research-2', '--json')).role).toBe('owner');
  });

  it('deletes an organization (owners), refused with org_busy while a job is queued', async () => {
    const org = json<{ id: string }>(await asOwner('orgs', 'show', 'research-2', '--json'));
    const vineyard = json<{ id: string }>(
      await asOwner('vineyards', 'create', 'lab-prod', '--org', 'research-2', '--json'),
    );
    const client = userClient(server, ownerHome);
    const vine = await client.createConfiguration({
      name: 'lab-edge',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': '' } },
    });
    const job = await client.createJob({ job_type: 'PLAN', configuration_id: vine.id });

    // Off a terminal, deleting needs --yes.
    const unconfirmed = await asOwner('orgs', 'delete', 'research-2');
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('pass --yes when not at a terminal');

    const busy = await asOwner('orgs', 'delete', 'research-2', '--yes');
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain('the organization has queued or running jobs; cancel them first [org_busy]');
    expect(busy.stderr).toContain('`trellis jobs list --org research-2 --status QUEUED` (and PROCESSING) shows them');
    const queued = json<{ id: string }[]>(
      await asOwner('jobs', 'list', '--org', 'research-2', '--status', 'QUEUED', '--json'),
    );
    expect(queued.map((entry) => entry.id)).toEqual([job.id]);
    expect((await client.getOrg(org.id)).name).toBe('research-2');

    await client.cancelJob(job.id);
    const deleted = json<{ id: string; name: string; deleted: boolean }>(
      await asOwner('orgs', 'delete', 'research-2', '--yes', '--json'),
    );
    expect(deleted).toEqual({ id: org.id, name: 'research-2', deleted: true });
    expect(json<{ name: string }[]>(await asOwner('orgs', 'list', '--json')).map((entry) => entry.name)).toEqual([
      'platform',
    ]);
    expect(
      json<{ name: string }[]>(await asOwner('vineyards', 'list', '--json')).map((entry) => entry.name),
    ).not.toContain('lab-prod');
    const gone = await asOwner('orgs', 'show', org.id);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('[org_not_found]');
  });
});
