import { ConflictError, ValidationError } from '@trellis/core';
import { createTestCore, type TestCore } from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure } from './helpers.js';

let core: TestCore;
beforeEach(() => {
  core = createTestCore();
});

describe('worker releases', () => {
  it('publishes a semantic version with its notes', async () => {
    const release = await core.useCases.releases.publish({ version: '1.4.0', release_notes: 'Faster claims' });
    expect(release).toEqual({
      version: '1.4.0',
      release_notes: 'Faster claims',
      published_at: core.clock.now().toISOString(),
    });
    expect((await core.useCases.releases.list()).items).toEqual([release]);
  });

  it('409s a version published already, keeping the first notes', async () => {
    await core.useCases.releases.publish({ version: '1.4.0', release_notes: 'first' });
    await expectFailure(
      core.useCases.releases.publish({ version: '1.4.0', release_notes: 'second' }),
      ConflictError,
      'release_exists',
    );
    expect((await core.useCases.releases.list()).items.map((r) => r.release_notes)).toEqual(['first']);
  });

  it.each(['1.4', 'v1.4.0', '1.4.0.1', '', undefined, 140])('400s the version %j', async (version) => {
    const error = await expectFailure(core.useCases.releases.publish({ version, release_notes: '' }), ValidationError);
    expect(error.fields[0]?.path).toBe('version');
  });

  it('takes pre-release and build versions, and no notes', async () => {
    await expect(
      core.useCases.releases.publish({ version: '2.0.0-rc.1+build.7', release_notes: undefined }),
    ).resolves.toMatchObject({ release_notes: '' });
  });

  it('400s notes that are not a string or over 64 KiB', async () => {
    await expectFailure(core.useCases.releases.publish({ version: '1.0.0', release_notes: 5 }), ValidationError);
    await expectFailure(
      core.useCases.releases.publish({ version: '1.0.0', release_notes: 'x'.repeat(64 * 1024 + 1) }),
      ValidationError,
    );
    await expect(
      core.useCases.releases.publish({ version: '1.0.0', release_notes: 'x'.repeat(64 * 1024) }),
    ).resolves.toBeTruthy();
  });

  it('lists newest first', async () => {
    await core.useCases.releases.publish({ version: '1.0.0', release_notes: '' });
    core.clock.advance({ days: 1 });
    await core.useCases.releases.publish({ version: '1.1.0', release_notes: '' });
    core.clock.advance({ days: 1 });
    await core.useCases.releases.publish({ version: '1.0.1', release_notes: '' });
    expect((await core.useCases.releases.list()).items.map((r) => r.version)).toEqual(['1.0.1', '1.1.0', '1.0.0']);
  });
});
