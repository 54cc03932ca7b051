/**
 * What the stock CLI polls while a run waits (issue 31): a workspace by its organization and name,
 * a workspace's runs by its id. Each is found, authorized and read in one unit of work, as an API
 * token's request makes it (the memberships come with the token). Unknown and unseen workspaces
 * are still `404`.
 */
import { NotFoundError, personalNamespace, type UserActor, workspaceId } from '@trellis/core';
import { createTestCore, seedUser, type TestCore } from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure } from '../usecases/helpers.js';

let core: TestCore;
/** As an API token authenticates a person: their memberships carried by the actor. */
let ada: UserActor;
let stranger: UserActor;
let vineId: string;

beforeEach(async () => {
  core = createTestCore();
  ada = { ...(await seedUser(core, { email: 'ada@example.test' })), memberships: [] };
  stranger = { ...(await seedUser(core, { email: 'sam@example.test' })), memberships: [] };
  const created = await core.useCases.tfe.workspaces.create(ada, personalNamespace(ada.userId), { name: 'web' });
  vineId = created.vine.id;
});

/** The units of work `work` took: read-only ones and committed ones. */
async function unitsOf(work: () => Promise<unknown>): Promise<{ reads: number; writes: number }> {
  const reads = core.uow.readCount;
  const writes = core.uow.stats.committed;
  await work();
  return { reads: core.uow.readCount - reads, writes: core.uow.stats.committed - writes };
}

describe('the stock CLI polls', () => {
  it('reads a workspace by its organization and name in one unit of work', async () => {
    const ref = { organization: personalNamespace(ada.userId), name: 'web' };
    let read: Awaited<ReturnType<typeof core.useCases.tfe.workspaces.read>> | undefined;
    expect(
      await unitsOf(async () => {
        read = await core.useCases.tfe.workspaces.read(ada, ref);
      }),
    ).toEqual({ reads: 1, writes: 0 });
    expect(read?.vine.id).toBe(vineId);
    expect(read?.organization).toBe(personalNamespace(ada.userId));
  });

  it('reads a workspace by its id, and its runs, in one unit of work each', async () => {
    let organization: string | undefined;
    expect(
      await unitsOf(async () => {
        organization = (await core.useCases.tfe.workspaces.read(ada, { id: workspaceId(vineId) })).organization;
      }),
    ).toEqual({ reads: 1, writes: 0 });
    expect(organization).toBe(personalNamespace(ada.userId));
    expect(
      await unitsOf(async () => {
        expect(await core.useCases.tfe.runs.listOfWorkspace(ada, workspaceId(vineId))).toEqual([]);
      }),
    ).toEqual({ reads: 1, writes: 0 });
  });

  it('still answers 404 for a workspace that is not there or not theirs', async () => {
    const workspaces = core.useCases.tfe.workspaces;
    await expectFailure(
      workspaces.read(ada, { organization: personalNamespace(ada.userId), name: 'nope' }),
      NotFoundError,
    );
    await expectFailure(workspaces.read(ada, { id: 'ws-nope' }), NotFoundError);
    await expectFailure(workspaces.read(stranger, { id: workspaceId(vineId) }), NotFoundError);
    await expectFailure(
      workspaces.read(stranger, { organization: personalNamespace(ada.userId), name: 'web' }),
      NotFoundError,
    );
    await expectFailure(core.useCases.tfe.runs.listOfWorkspace(stranger, workspaceId(vineId)), NotFoundError);
  });
});
