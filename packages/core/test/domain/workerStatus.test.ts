import { deriveWorkerStatus } from '@trellis/core';
import { describe, expect, it } from 'vitest';

describe('deriveWorkerStatus', () => {
  const now = new Date('2026-01-01T12:00:00.000Z');
  const secondsAgo = (s: number) => new Date(now.getTime() - s * 1000).toISOString();
  const alive = (s: number) => ({ last_heartbeat: secondsAgo(s), destroyed_at: null });

  it('is ONLINE right after a heartbeat and up to 60 s of silence', () => {
    expect(deriveWorkerStatus(alive(0), false, now, 60)).toBe('ONLINE');
    expect(deriveWorkerStatus(alive(30), false, now, 60)).toBe('ONLINE');
    expect(deriveWorkerStatus(alive(60), false, now, 60)).toBe('ONLINE');
  });

  it('is OFFLINE once the silence passes 60 s', () => {
    expect(deriveWorkerStatus(alive(60.001), false, now, 60)).toBe('OFFLINE');
    expect(deriveWorkerStatus(alive(61), false, now, 60)).toBe('OFFLINE');
  });

  it('follows the configured timeout', () => {
    expect(deriveWorkerStatus(alive(90), false, now, 120)).toBe('ONLINE');
    expect(deriveWorkerStatus(alive(90), false, now, 60)).toBe('OFFLINE');
  });

  it('is OFFLINE before its first heartbeat', () => {
    expect(deriveWorkerStatus({ last_heartbeat: null, destroyed_at: null }, false, now, 60)).toBe('OFFLINE');
  });

  it('is BUSY with a PROCESSING job while heard from', () => {
    expect(deriveWorkerStatus(alive(10), true, now, 60)).toBe('BUSY');
  });

  it('silence wins over a PROCESSING job', () => {
    expect(deriveWorkerStatus(alive(61), true, now, 60)).toBe('OFFLINE');
  });

  it('is DESTROYED once destroyed, whatever else holds', () => {
    const destroyed = { last_heartbeat: secondsAgo(1), destroyed_at: secondsAgo(0) };
    expect(deriveWorkerStatus(destroyed, true, now, 60)).toBe('DESTROYED');
    expect(deriveWorkerStatus({ last_heartbeat: null, destroyed_at: secondsAgo(0) }, false, now, 60)).toBe('DESTROYED');
  });
});
