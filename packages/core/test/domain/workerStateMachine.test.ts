import {
  ConflictError,
  deriveWorkerStatus,
  transitionWorker,
  WORKER_STATUSES,
  WORKER_TRANSITIONS,
  type WorkerEvent,
  type WorkerStatus,
} from '@trellis/core';
import { describe, expect, it } from 'vitest';

const EVENTS: WorkerEvent[] = ['heartbeat', 'job_claimed', 'job_finished', 'silence', 'destroyed'];

const EXPECTED: Record<WorkerStatus, Partial<Record<WorkerEvent, WorkerStatus>>> = {
  OFFLINE: { heartbeat: 'ONLINE', job_claimed: 'BUSY', destroyed: 'DESTROYED' },
  ONLINE: { heartbeat: 'ONLINE', job_claimed: 'BUSY', silence: 'OFFLINE', destroyed: 'DESTROYED' },
  BUSY: { heartbeat: 'BUSY', job_finished: 'ONLINE', silence: 'OFFLINE', destroyed: 'DESTROYED' },
  DESTROYED: {},
};

const cases = WORKER_STATUSES.flatMap((from) => EVENTS.map((event) => ({ from, event, to: EXPECTED[from][event] })));

describe('worker state machine', () => {
  it.each(cases.filter((c) => c.to !== undefined))('$from --$event--> $to', ({ from, event, to }) => {
    expect(transitionWorker(from, event)).toBe(to);
  });

  it.each(cases.filter((c) => c.to === undefined))('$from refuses $event', ({ from, event }) => {
    expect(() => transitionWorker(from, event)).toThrow(ConflictError);
    expect(() => transitionWorker(from, event)).toThrow(expect.objectContaining({ code: 'invalid_transition' }));
  });

  it('the table is exactly the expected one (DESTROYED is final)', () => {
    expect(WORKER_TRANSITIONS).toEqual(EXPECTED);
  });
});

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
