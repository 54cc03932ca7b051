import { isUuid } from '@trellis/core';
import { DEFAULT_FAKE_TIME, FakeClock, FakeRandom, SequenceRandom, uuidFromBytes } from '@trellis/testkit/memory';
import { describe, expect, it } from 'vitest';

describe('FakeClock', () => {
  it('starts at the given time and moves only when told', () => {
    expect(new FakeClock().now().toISOString()).toBe(DEFAULT_FAKE_TIME);
    const clock = new FakeClock('2026-05-01T00:00:00.000Z');
    expect(clock.now().toISOString()).toBe('2026-05-01T00:00:00.000Z');
    clock.advance(1500);
    expect(clock.now().toISOString()).toBe('2026-05-01T00:00:01.500Z');
    clock.advance({ seconds: 61 });
    expect(clock.now().toISOString()).toBe('2026-05-01T00:01:02.500Z');
    clock.advance({ minutes: 1, hours: 1, days: 1, ms: 500 });
    expect(clock.now().toISOString()).toBe('2026-05-02T01:02:03.000Z');
    clock.set(new Date('2030-01-01T00:00:00Z'));
    expect(clock.now().toISOString()).toBe('2030-01-01T00:00:00.000Z');
  });

  it('hands out copies of its time and refuses to go back', () => {
    const clock = new FakeClock();
    clock.now().setFullYear(1999);
    expect(clock.now().toISOString()).toBe(DEFAULT_FAKE_TIME);
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(() => clock.set('not a date')).toThrow(RangeError);
  });
});

describe('FakeRandom', () => {
  it('is deterministic per seed and differs between seeds', () => {
    expect(new FakeRandom('s').bytes(40)).toEqual(new FakeRandom('s').bytes(40));
    expect(new FakeRandom('s').uuid()).toBe(new FakeRandom('s').uuid());
    expect(new FakeRandom('s').bytes(16)).not.toEqual(new FakeRandom('t').bytes(16));
  });

  it('never repeats itself within a run', () => {
    const random = new FakeRandom();
    const uuids = new Set(Array.from({ length: 1000 }, () => random.uuid()));
    expect(uuids.size).toBe(1000);
    expect(random.bytes(32)).not.toEqual(random.bytes(32));
  });

  it('makes valid version 4 UUIDs', () => {
    const random = new FakeRandom(7);
    for (let i = 0; i < 200; i++) {
      const uuid = random.uuid();
      expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(isUuid(uuid)).toBe(true);
    }
    expect(uuidFromBytes(new Uint8Array(16).fill(0xff))).toBe('ffffffff-ffff-4fff-bfff-ffffffffffff');
  });

  it('counts its calls', () => {
    const random = new FakeRandom();
    random.bytes(3);
    random.uuid();
    random.uuid();
    expect(random.calls).toEqual({ bytes: 1, uuid: 2 });
  });
});

describe('SequenceRandom', () => {
  it('hands out the scripted bytes, then zeros, and counting UUIDs', () => {
    const random = new SequenceRandom([1, 2, 3]);
    expect([...random.bytes(2)]).toEqual([1, 2]);
    expect([...random.bytes(3)]).toEqual([3, 0, 0]);
    expect(random.consumed).toBe(3);
    expect(random.uuid()).toBe('00000000-0000-4000-8000-000000000001');
    expect(random.uuid()).toBe('00000000-0000-4000-8000-000000000002');
    expect(isUuid(random.uuid())).toBe(true);
  });
});
