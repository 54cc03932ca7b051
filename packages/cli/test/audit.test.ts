/**
 * `trellis audit`, the built binary against the real control plane (issue 14): a person's own
 * log after they sign in, log the CLI in and make a vineyard; an organization's log for its owner
 * with `--org` and filters; pages with `--limit` and `--cursor`; `--json`; a viewer of the
 * organization told, with exit code 6, that their role is too low.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, runTrellis, startWithSecondPerson, TempHome, TestServer } from './harness.js';

interface Entry {
  id: string;
  action: string;
  actor: { type: string; email?: string };
  target: { type: string; id: string };
  owner_id: string;
  request_id: string | null;
  ip: string | null;
}

describe('trellis audit', () => {
  const server = new TestServer();
  const ownerHome = new TempHome();
  const viewerHome = new TempHome();
  let viewerToken: string;

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

  it("shows a person's own log, newest first, as a table and as JSON", async () => {
    expect((await asOwner('vineyards', 'create', 'prod')).code).toBe(0);
    const table = await asOwner('audit');
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^WHEN\s+ACTOR\s+ACTION\s+TARGET\s+IP\s+REQUEST$/m);
    const rows = table.stdout.trim().split('\n').slice(1);
    expect(rows[0]).toMatch(/admin@localhost\s+vineyard\.create\s+vineyard [0-9a-f-]{36}\s+\S+\s+\S+/);
    expect(rows.at(-1)).toMatch(/admin@localhost\s+session\.sign_in\s+user /);

    const entries = json<Entry[]>(await asOwner('audit', '--json'));
    expect(entries.map((entry) => entry.action)).toEqual(['vineyard.create', 'cli_login.approve', 'session.sign_in']);
    expect(entries[0]).toMatchObject({ actor: { type: 'user', email: 'admin@localhost' }, ip: expect.any(String) });
    expect(entries[0]?.request_id).toMatch(/.+/);
    expect(json<Entry[]>(await asOwner('audit', '--action', 'session.sign_in', '--json'))).toHaveLength(1);
    const target = entries[0]?.target.id as string;
    expect(json<Entry[]>(await asOwner('audit', '--target', target, '--json')).map((entry) => entry.id)).toEqual([
      entries[0]?.id,
    ]);

    // One entry a page: stderr says how to see the older ones.
    const first = await asOwner('audit', '--limit', '1', '--json');
    expect(JSON.parse(first.stdout)).toEqual([entries[0]]);
    const cursor = /trellis audit --limit 1 --cursor (\S+)/.exec(first.stderr)?.[1];
    expect(cursor).toBeDefined();
    const second = await asOwner('audit', '--limit', '1', '--cursor', cursor as string, '--json');
    expect(JSON.parse(second.stdout)).toEqual([entries[1]]);
    expect(json<Entry[]>(await asOwner('audit', '--all', '--limit', '1', '--json'))).toEqual(entries);

    const badAction = await asOwner('audit', '--action', 'nonsense');
    expect(badAction.code).toBe(2);
  });

  it("shows an organization's log to its owner, and refuses it to a viewer", async () => {
    expect((await asOwner('orgs', 'create', 'platform')).code).toBe(0);
    expect((await asOwner('orgs', 'members', 'add', 'platform', 'vera@example.com', '--role', 'viewer')).code).toBe(0);
    // Vera joins by accepting the invitation (issue 23); both steps are in the organization's log.
    expect((await asViewer('orgs', 'invitations', 'accept', 'platform')).code).toBe(0);
    const ofOrg = json<Entry[]>(await asOwner('audit', '--org', 'platform', '--json'));
    expect(ofOrg.map((entry) => entry.action)).toEqual(['member.accept', 'member.add', 'org.create']);
    expect(
      json<Entry[]>(await asOwner('audit', '--org', 'platform', '--actor', 'admin@localhost', '--json')),
    ).toHaveLength(2);
    expect(
      json<Entry[]>(await asOwner('audit', '--org', 'platform', '--actor', 'vera@example.com', '--json')).map(
        (entry) => entry.action,
      ),
    ).toEqual(['member.accept']);

    const refused = await asViewer('audit', '--org', 'platform');
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain('[insufficient_role]');
    expect(refused.stderr).toContain('this needs admin');
  });
});
