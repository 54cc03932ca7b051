import { ForbiddenError, TooLargeError, UnavailableError, ValidationError, type VineView } from '@trellis/core';
import {
  createTestCore,
  readAll,
  seedRunningJob,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
  type TestWorker,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure } from './helpers.js';

const LIMIT = 4096;
let core: TestCore;
let ada: TestUser;
let worker: TestWorker;
let vine: VineView;

beforeEach(async () => {
  core = createTestCore({ settings: { maxStateBytes: LIMIT, stateVersionsKept: 2 } });
  ada = await seedUser(core);
  worker = await seedWorker(core, ada, { heartbeat: true });
  vine = await seedVine(core, ada);
});

/** The text one byte per chunk, so every token of the state is split across chunks. */
async function* byteByByte(text: string): AsyncIterable<Uint8Array> {
  for (const byte of Buffer.from(text)) yield Uint8Array.of(byte);
}

/** A body that records whether anything ever pulled from it. */
function untouchedBody(): { body: AsyncIterable<Uint8Array>; pulled: () => boolean } {
  let pulled = false;
  return {
    body: {
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          pulled = true;
          return { done: false, value: Buffer.alloc(1024, 0x20) };
        },
      }),
    },
    pulled: () => pulled,
  };
}

describe('state writes', () => {
  it('reads serial and lineage as the bytes stream past, whatever their order, escapes and decoys', async () => {
    await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    const state =
      '{ "version": 4, "outputs": {"serial": 99, "lineage": "decoy"}, "resources": [{"a": "}\\"]"}],\n' +
      ' "lineage" : "lin-\\u00e9\\"x", "serial": 12, "check_results": null }\n';
    const version = await core.useCases.states.write(worker, vine.id, null, byteByByte(state));
    expect([version.serial, version.lineage]).toEqual([12, 'lin-é"x']);
    expect(version.size).toBe(Buffer.byteLength(state));
  });

  it('reads the newest version back checked against its recorded sha256', async () => {
    await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    const state = '{"serial": 3, "lineage": "l-1"}';
    const version = await core.useCases.states.write(worker, vine.id, null, byteByByte(state));
    expect((await readAll((await core.useCases.states.read(worker, vine.id))!.body)).toString()).toBe(state);
    core.artifacts.tamper(version.storage_key, Buffer.from('{"serial": 4, "lineage": "l-1"}'));
    const altered = await core.useCases.states.read(worker, vine.id);
    await expectFailure(readAll(altered!.body), UnavailableError, 'artifact_digest_mismatch');
  });

  it.each([
    ['not JSON at all', 'hello'],
    ['an array', '[{"serial": 1, "lineage": "l"}]'],
    ['no lineage', '{"serial": 1}'],
    ['a fractional serial', '{"serial": 1.5, "lineage": "l"}'],
    ['a serial only in a nested object', '{"lineage": "l", "outputs": {"serial": 1}}'],
    ['something after the object', '{"serial": 1, "lineage": "l"} x'],
    ['an unfinished object', '{"serial": 1, "lineage": "l"'],
  ])('refuses %s (400 invalid_state) and keeps none of its bytes', async (_name, text) => {
    await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    await expectFailure(
      core.useCases.states.write(worker, vine.id, null, byteByByte(text)),
      ValidationError,
      'invalid_state_file',
    );
    expect(core.artifacts.keys()).toEqual([]);
  });

  it('never reads the body of a writer that runs no job of the vine', async () => {
    const { body, pulled } = untouchedBody();
    await expectFailure(core.useCases.states.write(worker, vine.id, null, body, 60 * 1024 * 1024), ForbiddenError);
    expect(pulled()).toBe(false);
  });

  it('refuses a declared size over the limit without reading the body, and an undeclared one at the limit', async () => {
    await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    const declared = untouchedBody();
    await expectFailure(
      core.useCases.states.write(worker, vine.id, null, declared.body, LIMIT + 1),
      TooLargeError,
      'state_too_large',
    );
    expect(declared.pulled()).toBe(false);
    const endless = untouchedBody();
    await expectFailure(
      core.useCases.states.write(worker, vine.id, null, endless.body),
      TooLargeError,
      'state_too_large',
    );
    expect(core.artifacts.keys()).toEqual([]);
  });

  it('keeps the newest versions the setting asks for, with their bytes only', async () => {
    await seedRunningJob(core, ada, worker, vine, 'DEPLOY');
    for (const serial of [1, 2, 3]) {
      await core.useCases.states.write(worker, vine.id, null, byteByByte(`{"serial":${serial},"lineage":"l"}`));
    }
    const versions = await core.useCases.states.versions(ada.user.id, vine.id);
    expect(versions.map((version) => version.serial)).toEqual([3, 2]);
    expect(core.artifacts.keys().sort()).toEqual(versions.map((version) => version.storage_key).sort());
  });
});
