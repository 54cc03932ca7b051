/**
 * A configuration's tags and run triggers set by Trellis's own API (issue 29): at creation and by
 * a change, under the one rule the Terraform Cloud protocol's workspace tags follow.
 */
import { parseTags, systemScope, ValidationError } from '@trellis/core';
import { createTestCore, seedUser, seedVineyard, type TestCore, type TestUser } from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure, expectThrown } from './helpers.js';

const inline = { type: 'inline', files: { 'main.tf': 'terraform {}' } };

let core: TestCore;
let ada: TestUser;
let vineyardId: string;

beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core);
  vineyardId = (await seedVineyard(core, ada, 'prod')).id;
});

const create = (input: Record<string, unknown> = {}) =>
  core.useCases.vines.create(ada, { name: 'web', vineyard_id: vineyardId, source: inline, ...input });

describe('the tag rule', () => {
  it('keeps tags unique, lower case and sorted', () => {
    expect(parseTags(['Team:Web', 'prod', 'team:web', 'a.b_c-1'])).toEqual(['a.b_c-1', 'prod', 'team:web']);
  });

  it('refuses a tag that is not letters, digits, ":", "_", "." and "-", naming it', () => {
    for (const bad of ['', '-lead', 'has space', 'x/y', 'a'.repeat(256), 7]) {
      const error = expectThrown(() => parseTags([bad]), ValidationError);
      expect(error.fields).toEqual([
        {
          path: 'tags',
          message: `${JSON.stringify(bad)} is not a tag: tags are letters, digits, ":", "_", "." and "-", starting with a letter or digit`,
        },
      ]);
    }
    expect(parseTags(['a'.repeat(255)])).toHaveLength(1);
  });

  it('refuses anything but a list of at most 100', () => {
    expectThrown(() => parseTags('prod'), ValidationError);
    expectThrown(() => parseTags(Array.from({ length: 101 }, (_, index) => `t${index}`)), ValidationError);
    expect(parseTags(Array.from({ length: 100 }, (_, index) => `t${index}`))).toHaveLength(100);
  });
});

describe('tags of a configuration', () => {
  it('are set at creation, audited, and found by the fleet filter', async () => {
    const vine = await create({ tags: ['Prod', 'team:web'] });
    expect(vine.tags).toEqual(['prod', 'team:web']);
    await create({ name: 'db' });
    const page = await core.useCases.vines.list(ada, { tag: 'prod' });
    expect(page.items.map((item) => item.name)).toEqual(['web']);
    const audit = [...core.uow.snapshot().audit.values()].find((entry) => entry.action === 'vine.create');
    expect(audit?.details).toMatchObject({ tags: 'prod,team:web' });
  });

  it('are none when left out', async () => {
    expect((await create()).tags).toEqual([]);
  });

  it('refuse a bad tag with the other bad fields at once; nothing is created', async () => {
    const error = await expectFailure(create({ tags: ['ok', 'not ok'], engine: 'pulumi' }), ValidationError);
    expect(error.fields.map((issue) => issue.path)).toEqual(['engine.name', 'tags']);
    const none = await core.deps.uow.read(systemScope, (stores) => stores.vines.findByName(ada.userId, 'web'));
    expect(none).toBeNull();
  });

  it('are replaced by a change, audited with what they were, and removed by an empty list', async () => {
    const vine = await create({ tags: ['prod'] });
    const changed = await core.useCases.vineEdits.update(ada, 'web', { tags: ['prod', 'EU'] });
    expect(changed.tags).toEqual(['eu', 'prod']);
    const entries = [...core.uow.snapshot().audit.values()].filter(
      (entry) => entry.action === 'vine.update' && entry.target.id === vine.id,
    );
    expect(entries.map((entry) => entry.details)).toEqual([
      { name: 'web', changed: 'tags', tags: 'eu,prod', previous_tags: 'prod', config_hash_changed: false },
    ]);
    expect((await core.useCases.vineEdits.update(ada, vine.id, { tags: [] })).tags).toEqual([]);
    const error = await expectFailure(core.useCases.vineEdits.update(ada, vine.id, { tags: ['a b'] }), ValidationError);
    expect(error.fields[0]?.path).toBe('tags');
    expect((await core.useCases.vines.get(ada, vine.id)).tags).toEqual([]);
  });
});

describe('run triggers at creation', () => {
  it('run a new configuration after configurations of the same owner', async () => {
    const network = await create({ name: 'network' });
    const vine = await create({ triggers: { after: [network.id.toUpperCase()] } });
    expect(vine.triggers).toEqual({ after: [network.id] });
  });

  it('refuse a configuration of another owner, and anything but a list of ids', async () => {
    const bo = await seedUser(core, { email: 'bo@example.com' });
    const hers = await core.useCases.vines.create(bo, {
      name: 'hers',
      vineyard_id: (await seedVineyard(core, bo, 'bo-prod')).id,
      source: inline,
    });
    const foreign = await expectFailure(create({ triggers: { after: [hers.id] } }), ValidationError);
    expect(foreign.fields).toEqual([
      { path: 'triggers.after.0', message: 'no configuration of the same owner has this id' },
    ]);
    const shape = await expectFailure(create({ triggers: { after: ['web'] } }), ValidationError);
    expect(shape.fields.map((issue) => issue.path)).toEqual(['triggers.after']);
    const none = await core.deps.uow.read(systemScope, (stores) => stores.vines.findByName(ada.userId, 'web'));
    expect(none).toBeNull();
  });
});
