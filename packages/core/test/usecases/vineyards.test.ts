import { ConflictError, NotFoundError, ValidationError } from '@trellis/core';
import { createTestCore, seedUser, seedVine, type TestCore, type TestUser } from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure, UNKNOWN_ID } from './helpers.js';

let core: TestCore;
let ada: TestUser;
beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core);
});

describe('vineyards', () => {
  it('creates a vineyard owned by the user, with no vines yet', async () => {
    const vineyard = await core.useCases.vineyards.create(ada, { name: 'prod' });
    expect(vineyard).toEqual({
      id: expect.any(String),
      owner_id: ada.userId,
      name: 'prod',
      created_at: core.clock.now().toISOString(),
      vines: [],
    });
    expect(await core.useCases.vineyards.get(ada, vineyard.id)).toEqual(vineyard);
  });

  it.each(['', ' prod', 'a/b', '-x', 'x'.repeat(101), 7, undefined])('refuses the name %j', async (name) => {
    const error = await expectFailure(
      core.useCases.vineyards.create(ada, { name }),
      ValidationError,
      'validation_failed',
    );
    expect(error.fields).toEqual([expect.objectContaining({ path: 'name' })]);
    expect((await core.useCases.vineyards.list(ada)).items).toEqual([]);
  });

  it('refuses a second vineyard of the same name for one owner (409), not for another owner', async () => {
    await core.useCases.vineyards.create(ada, { name: 'prod' });
    await expectFailure(core.useCases.vineyards.create(ada, { name: 'prod' }), ConflictError, 'vineyard_name_taken');
    const bob = await seedUser(core);
    await expect(core.useCases.vineyards.create(bob, { name: 'prod' })).resolves.toMatchObject({ name: 'prod' });
    expect((await core.useCases.vineyards.list(ada)).items).toHaveLength(1);
  });

  it('lists the owner’s vineyards newest first, each with its vines as summaries (no variables)', async () => {
    const first = await core.useCases.vineyards.create(ada, { name: 'b-first' });
    core.clock.advance({ seconds: 1 });
    const second = await core.useCases.vineyards.create(ada, { name: 'a-second' });
    const vine = await seedVine(core, ada, {
      vineyard_id: first.id,
      variables: { token: { value: 's3cret', sensitive: true }, region: 'eu' },
    });
    const list = (await core.useCases.vineyards.list(ada)).items;
    expect(list.map((v) => v.name)).toEqual(['a-second', 'b-first']);
    expect(list[1]!.vines.map((v) => v.id)).toEqual([vine.id]);
    expect(list[0]!.vines).toEqual([]);
    expect(list[1]!.vines[0]).not.toHaveProperty('variables');
    expect(JSON.stringify(list)).not.toContain('s3cret');
    const one = await core.useCases.vineyards.get(ada, first.id);
    expect(JSON.stringify(one)).not.toContain('s3cret');
    expect(second.vines).toEqual([]);
  });

  it('hides other owners’ vineyards: 404 and absent from lists', async () => {
    const bob = await seedUser(core);
    const theirs = await core.useCases.vineyards.create(bob, { name: 'theirs' });
    await expectFailure(core.useCases.vineyards.get(ada, theirs.id), NotFoundError, 'vineyard_not_found');
    expect((await core.useCases.vineyards.list(ada)).items).toEqual([]);
    await expectFailure(core.useCases.vineyards.get(ada, UNKNOWN_ID), NotFoundError);
    await expectFailure(core.useCases.vineyards.get(ada, 'not-a-uuid'), ValidationError);
  });
});
