import { type CliLogin, ConflictError, type Stores, systemScope } from '@trellis/core';
import { MemoryUnitOfWork } from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { at, id, jobRecord, OWNER_A, OWNER_B, vineRecord, workerRecord } from './records.js';

/** The other store fakes, held to their ports' doc comments. */
let uow: MemoryUnitOfWork;
const sys = <T>(work: (stores: Stores) => Promise<T>) => uow.run(systemScope, work);
/** Creates a job of `owner` and returns its id (logs and plan artifacts belong to jobs). */
const newJob = async (owner = OWNER_A) => (await sys((s) => s.jobs.create(jobRecord({ owner_id: owner })))).id;

beforeEach(() => {
  uow = new MemoryUnitOfWork();
});

describe('UserStore', () => {
  it('refuses a second user with the same email (email_taken)', async () => {
    await sys((s) => s.users.create({ id: OWNER_A, email: 'a@x.test', name: 'A', created_at: at(0) }));
    await expect(
      sys((s) => s.users.create({ id: OWNER_B, email: 'a@x.test', name: 'B', created_at: at(0) })),
    ).rejects.toMatchObject({ code: 'email_taken', kind: 'conflict' });
    expect(await sys((s) => s.users.findByEmail('a@x.test'))).toMatchObject({ id: OWNER_A });
    expect(await sys((s) => s.users.findByEmail('b@x.test'))).toBeNull();
    expect(await sys((s) => s.users.get(OWNER_B))).toBeNull();
  });
});

describe('IdentityStore', () => {
  it('upsert creates the link, then refreshes token and scopes only', async () => {
    await sys((s) =>
      s.identities.upsert({
        user_id: OWNER_A,
        provider: 'github',
        provider_user_id: '42',
        provider_token: 't1',
        scopes: 'repo',
      }),
    );
    const updated = await sys((s) =>
      s.identities.upsert({
        user_id: OWNER_B,
        provider: 'github',
        provider_user_id: '42',
        provider_token: 't2',
        scopes: 'repo read:org',
      }),
    );
    expect(updated).toEqual({
      user_id: OWNER_A,
      provider: 'github',
      provider_user_id: '42',
      provider_token: 't2',
      scopes: 'repo read:org',
    });
    expect(await sys((s) => s.identities.find('gitlab', '42'))).toBeNull();
    expect(await sys((s) => s.identities.listForUser(OWNER_A))).toHaveLength(1);
    expect(await sys((s) => s.identities.listForUser(OWNER_B))).toEqual([]);
  });
});

describe('CliLoginStore', () => {
  const login = (deviceCode: string): CliLogin => ({
    device_code: deviceCode,
    verification_code: 'BCDFGH',
    profile_id: OWNER_A,
    provider: null,
    created_at: at(0),
    expires_at: at(600),
    attempts: 0,
    consumed_at: null,
  });

  it('refuses a device code that already has a login (device_code_used)', async () => {
    const code = id();
    await sys((s) => s.cliLogins.create(login(code)));
    await expect(sys((s) => s.cliLogins.create(login(code)))).rejects.toMatchObject({ code: 'device_code_used' });
  });

  it('counts wrong attempts and consumes once', async () => {
    const code = id();
    await sys((s) => s.cliLogins.create(login(code)));
    expect(await sys((s) => s.cliLogins.recordFailedAttempt(code))).toBe(1);
    expect(await sys((s) => s.cliLogins.recordFailedAttempt(code))).toBe(2);
    expect(await sys((s) => s.cliLogins.consume(code, at(5)))).toBe(true);
    expect(await sys((s) => s.cliLogins.consume(code, at(6)))).toBe(false);
    expect(await sys((s) => s.cliLogins.findForUpdate(code))).toMatchObject({ attempts: 2, consumed_at: at(5) });
    expect(await sys((s) => s.cliLogins.findForUpdate(id()))).toBeNull();
    expect(await sys((s) => s.cliLogins.consume(id(), at(6)))).toBe(false);
  });
});

describe('RefreshTokenStore', () => {
  it('rotates once and revokes a whole family, keeping earlier revocation times', async () => {
    const family = id();
    const [t1, t2, t3, other] = [id(), id(), id(), id()];
    await sys(async (s) => {
      for (const [tokenId, fam] of [
        [t1, family],
        [t2, family],
        [t3, family],
        [other, id()],
      ] as const) {
        await s.refreshTokens.create({
          id: tokenId,
          user_id: OWNER_A,
          family_id: fam,
          expires_at: at(1000),
          rotated_at: null,
          revoked_at: tokenId === t3 ? at(1) : null,
        });
      }
    });
    expect(await sys((s) => s.refreshTokens.markRotated(t1, at(2)))).toBe(true);
    expect(await sys((s) => s.refreshTokens.markRotated(t1, at(3)))).toBe(false);
    expect(await sys((s) => s.refreshTokens.markRotated(id(), at(3)))).toBe(false);
    await sys((s) => s.refreshTokens.revokeFamily(family, at(4)));
    const read = async (tokenId: string) => sys((s) => s.refreshTokens.get(tokenId));
    expect(await read(t1)).toMatchObject({ rotated_at: at(2), revoked_at: at(4) });
    expect(await read(t2)).toMatchObject({ rotated_at: null, revoked_at: at(4) });
    expect(await read(t3)).toMatchObject({ revoked_at: at(1) });
    expect(await read(other)).toMatchObject({ revoked_at: null });
  });
});

describe('VineyardStore', () => {
  it('names are unique per owner (vineyard_name_taken) and lists are oldest first', async () => {
    const base = { name: 'prod', created_at: at(5) };
    await sys((s) => s.vineyards.create({ id: id(), owner_id: OWNER_A, ...base }));
    await expect(sys((s) => s.vineyards.create({ id: id(), owner_id: OWNER_A, ...base }))).rejects.toMatchObject({
      code: 'vineyard_name_taken',
    });
    await sys((s) => s.vineyards.create({ id: id(), owner_id: OWNER_B, ...base }));
    await sys((s) => s.vineyards.create({ id: id(), owner_id: OWNER_A, name: 'dev', created_at: at(1) }));
    expect((await sys((s) => s.vineyards.list(OWNER_A))).map((v) => v.name)).toEqual(['dev', 'prod']);
    expect((await sys((s) => s.vineyards.list(OWNER_B))).map((v) => v.name)).toEqual(['prod']);
  });
});

describe('VineStore', () => {
  it('names and project names are unique per owner', async () => {
    await sys((s) => s.vines.create(vineRecord({ name: 'web', project_name: 'web-p' })));
    await expect(sys((s) => s.vines.create(vineRecord({ name: 'web', project_name: 'x' })))).rejects.toMatchObject({
      code: 'vine_name_taken',
    });
    await expect(sys((s) => s.vines.create(vineRecord({ name: 'x', project_name: 'web-p' })))).rejects.toMatchObject({
      code: 'project_name_taken',
    });
    await sys((s) => s.vines.create(vineRecord({ owner_id: OWNER_B, name: 'web', project_name: 'web-p' })));
    await expect(sys((s) => s.vines.create(vineRecord({ name: 'web-p', project_name: 'web' })))).resolves.toBeTruthy();
  });

  it('finds by id, name and project name within the owner only; lists oldest first by vineyard', async () => {
    const vineyard = id();
    const a = vineRecord({ name: 'a', project_name: 'pa', vineyard_id: vineyard, created_at: at(2) });
    const b = vineRecord({ name: 'b', project_name: 'pb', created_at: at(1) });
    const c = vineRecord({ name: 'c', project_name: 'pc', vineyard_id: vineyard, created_at: at(3) });
    await sys(async (s) => {
      for (const vine of [a, b, c]) await s.vines.create(vine);
    });
    expect(await sys((s) => s.vines.get(OWNER_A, a.id))).toEqual(a);
    expect(await sys((s) => s.vines.get(OWNER_B, a.id))).toBeNull();
    expect(await sys((s) => s.vines.findByName(OWNER_A, 'b'))).toEqual(b);
    expect(await sys((s) => s.vines.findByName(OWNER_B, 'b'))).toBeNull();
    expect(await sys((s) => s.vines.findByProjectName(OWNER_A, 'pc'))).toEqual(c);
    expect(await sys((s) => s.vines.findByProjectName(OWNER_A, 'c'))).toBeNull();
    expect((await sys((s) => s.vines.list(OWNER_A))).map((v) => v.name)).toEqual(['b', 'a', 'c']);
    expect((await sys((s) => s.vines.list(OWNER_A, { vineyard_id: vineyard }))).map((v) => v.name)).toEqual(['a', 'c']);
  });

  it('updateStatus sets status, message and updated_at; a missing vine is not found', async () => {
    const vine = vineRecord();
    await sys((s) => s.vines.create(vine));
    const updated = await sys((s) => s.vines.updateStatus(OWNER_A, vine.id, 'FAILED', 'boom', at(9)));
    expect(updated).toEqual({ ...vine, status: 'FAILED', status_message: 'boom', updated_at: at(9) });
    await expect(sys((s) => s.vines.updateStatus(OWNER_B, vine.id, 'NEW', null, at(9)))).rejects.toMatchObject({
      kind: 'not_found',
    });
  });

  it('saveComponents replaces the kinds given and keeps the null ones; clear removes all', async () => {
    const vine = vineRecord();
    await sys((s) => s.vines.create(vine));
    expect(await sys((s) => s.vines.getComponents(OWNER_A, vine.id))).toEqual({
      cluster: null,
      argocd: null,
      outputs: null,
    });
    await sys((s) =>
      s.vines.saveComponents(
        OWNER_A,
        vine.id,
        {
          cluster: { name: 'c1', endpoint: 'https://c1', job_id: 'j1' },
          argocd: { url: 'https://argo', job_id: 'j1' },
          outputs: { values: { a: 1 }, job_id: 'j1' },
        },
        at(1),
      ),
    );
    await sys((s) =>
      s.vines.saveComponents(
        OWNER_A,
        vine.id,
        { cluster: null, argocd: null, outputs: { values: { b: 2 }, job_id: 'j2' } },
        at(2),
      ),
    );
    expect(await sys((s) => s.vines.getComponents(OWNER_A, vine.id))).toEqual({
      cluster: { name: 'c1', endpoint: 'https://c1', job_id: 'j1' },
      argocd: { url: 'https://argo', job_id: 'j1' },
      outputs: { values: { b: 2 }, job_id: 'j2' },
    });
    expect(await sys((s) => s.vines.getComponents(OWNER_B, vine.id))).toEqual({
      cluster: null,
      argocd: null,
      outputs: null,
    });
    await sys((s) => s.vines.clearComponents(OWNER_B, vine.id));
    expect((await sys((s) => s.vines.getComponents(OWNER_A, vine.id))).argocd).not.toBeNull();
    await sys((s) => s.vines.clearComponents(OWNER_A, vine.id));
    expect(await sys((s) => s.vines.getComponents(OWNER_A, vine.id))).toEqual({
      cluster: null,
      argocd: null,
      outputs: null,
    });
  });
});

describe('CloudIdentityStore', () => {
  it('reads within the owner only', async () => {
    const identity = {
      id: id(),
      owner_id: OWNER_A,
      kind: 'assume_role' as const,
      provider: 'aws' as const,
      role_arn: 'arn:aws:iam::123456789012:role/x',
      external_id: id(),
    };
    await sys((s) => s.cloudIdentities.create(identity));
    expect(await sys((s) => s.cloudIdentities.get(OWNER_A, identity.id))).toEqual(identity);
    expect(await sys((s) => s.cloudIdentities.get(OWNER_B, identity.id))).toBeNull();
  });
});

describe('LogStore', () => {
  it('gives increasing ids across jobs and lists after `after`, ordered, at most `limit`', async () => {
    const [job1, job2] = [await newJob(), await newJob()];
    const chunks = await sys(async (s) => [
      await s.logs.append(OWNER_A, job1, 'one', 'STDOUT', at(1)),
      await s.logs.append(OWNER_A, job2, 'other', 'STDERR', at(1)),
      await s.logs.append(OWNER_A, job1, 'two', 'STDERR', at(2)),
      await s.logs.append(OWNER_A, job1, 'three', 'SYSTEM', at(3)),
    ]);
    const ids = chunks.map((chunk) => chunk.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(4);
    expect(chunks[0]).toEqual({ id: ids[0], job_id: job1, log_chunk: 'one', stream_type: 'STDOUT', created_at: at(1) });
    const texts = async (after: number, limit: number, owner = OWNER_A) =>
      (await sys((s) => s.logs.list(owner, job1, after, limit))).map((chunk) => chunk.log_chunk);
    expect(await texts(0, 10)).toEqual(['one', 'two', 'three']);
    expect(await texts(ids[0]!, 10)).toEqual(['two', 'three']);
    expect(await texts(0, 2)).toEqual(['one', 'two']);
    expect(await texts(ids[3]!, 10)).toEqual([]);
    expect(await texts(0, 10, OWNER_B)).toEqual([]);
    await expect(sys((s) => s.logs.append(OWNER_B, job1, 'x', 'STDOUT', at(4)))).rejects.toMatchObject({
      kind: 'not_found',
    });
    await expect(sys((s) => s.logs.append(OWNER_A, id(), 'x', 'STDOUT', at(4)))).rejects.toMatchObject({
      kind: 'not_found',
    });
  });

  it('never reuses an id, even one of a rolled-back unit of work', async () => {
    const job = await newJob();
    await sys((s) => s.logs.append(OWNER_A, job, 'x', 'STDOUT', at(1)));
    let rolledBackId = 0;
    await expect(
      sys(async (s) => {
        rolledBackId = (await s.logs.append(OWNER_A, job, 'gone', 'STDOUT', at(2))).id;
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    const next = await sys((s) => s.logs.append(OWNER_A, job, 'kept', 'STDOUT', at(3)));
    expect(next.id).toBeGreaterThan(rolledBackId);
    expect((await sys((s) => s.logs.list(OWNER_A, job, 0, 10))).map((c) => c.log_chunk)).toEqual(['x', 'kept']);
  });
});

describe('WorkerStore', () => {
  it('lists oldest first with destroyed ones, records heartbeats, metadata and destruction', async () => {
    const older = workerRecord({ name: 'older', created_at: at(1) });
    const newer = workerRecord({ name: 'newer', created_at: at(2) });
    const theirs = workerRecord({ owner_id: OWNER_B });
    await sys(async (s) => {
      for (const worker of [newer, older, theirs]) await s.workers.create(worker);
    });
    await sys((s) => s.workers.recordHeartbeat(OWNER_A, older.id, '1.2.3', at(5)));
    await sys((s) => s.workers.markDestroyed(OWNER_A, newer.id, at(6)));
    await sys((s) => s.workers.markDestroyed(OWNER_A, newer.id, at(7)));
    const updated = await sys((s) => s.workers.updateMetadata(OWNER_A, older.id, { region: 'eu' }));
    expect(updated).toMatchObject({ last_heartbeat: at(5), version: '1.2.3', metadata: { region: 'eu' } });
    const list = await sys((s) => s.workers.list(OWNER_A));
    expect(list.map((w) => [w.name, w.destroyed_at])).toEqual([
      ['older', null],
      ['newer', at(6)],
    ]);
    expect(await sys((s) => s.workers.get(OWNER_A, theirs.id))).toBeNull();
    expect(await sys((s) => s.workers.getForAuthentication(theirs.id))).toEqual(theirs);
    await expect(sys((s) => s.workers.updateMetadata(OWNER_A, theirs.id, {}))).rejects.toMatchObject({
      kind: 'not_found',
    });
    await sys((s) => s.workers.recordHeartbeat(OWNER_A, theirs.id, '9', at(9)));
    expect((await sys((s) => s.workers.getForAuthentication(theirs.id)))?.last_heartbeat).toBeNull();
  });
});

describe('ReleaseStore', () => {
  it('publishes a version once and lists newest first', async () => {
    await sys((s) => s.releases.create({ version: '1.0.0', release_notes: 'a', published_at: at(1) }));
    await sys((s) => s.releases.create({ version: '1.1.0', release_notes: 'b', published_at: at(2) }));
    await expect(
      sys((s) => s.releases.create({ version: '1.0.0', release_notes: 'c', published_at: at(3) })),
    ).rejects.toBeInstanceOf(ConflictError);
    await expect(
      sys((s) => s.releases.create({ version: '1.0.0', release_notes: 'c', published_at: at(3) })),
    ).rejects.toMatchObject({ code: 'release_exists' });
    expect((await sys((s) => s.releases.list())).map((r) => r.version)).toEqual(['1.1.0', '1.0.0']);
    expect(await sys((s) => s.releases.get('1.0.0'))).toMatchObject({ release_notes: 'a' });
    expect(await sys((s) => s.releases.get('2.0.0'))).toBeNull();
  });
});

describe('PlanArtifactStore', () => {
  it('replaces an earlier upload of the job and reads within the owner only', async () => {
    const job = await newJob();
    const base = { job_id: job, owner_id: OWNER_A, storage_key: 'k', created_at: at(1) };
    await sys((s) => s.planArtifacts.save({ ...base, size: 1, sha256: 'a' }));
    await sys((s) => s.planArtifacts.save({ ...base, size: 2, sha256: 'b' }));
    expect(await sys((s) => s.planArtifacts.get(OWNER_A, job))).toMatchObject({ size: 2, sha256: 'b' });
    expect(await sys((s) => s.planArtifacts.get(OWNER_B, job))).toBeNull();
    await expect(
      sys((s) => s.planArtifacts.save({ ...base, owner_id: OWNER_B, size: 3, sha256: 'evil' })),
    ).rejects.toMatchObject({ kind: 'not_found' });
    expect(await sys((s) => s.planArtifacts.get(OWNER_A, job))).toMatchObject({ sha256: 'b' });
  });
});
