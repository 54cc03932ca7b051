import {
  ConflictError,
  transitionVine,
  VINE_STATUSES,
  VINE_TRANSITIONS,
  type VineEvent,
  type VineJobType,
  type VineStatus,
} from '@trellis/core';
import { describe, expect, it } from 'vitest';

const SETTLED: VineStatus[] = ['NEW', 'PLANNED', 'DEPLOYED', 'DESTROYED', 'FAILED'];
const IN_PROGRESS: Record<VineJobType, VineStatus> = { PLAN: 'PLANNING', DEPLOY: 'DEPLOYING', DESTROY: 'DESTROYING' };
const DONE: Record<VineJobType, VineStatus> = { PLAN: 'PLANNED', DEPLOY: 'DEPLOYED', DESTROY: 'DESTROYED' };
const JOB_TYPES: VineJobType[] = ['PLAN', 'DEPLOY', 'DESTROY'];

function refused(from: VineStatus, event: VineEvent): void {
  expect(() => transitionVine(from, event)).toThrow(ConflictError);
  try {
    transitionVine(from, event);
  } catch (error) {
    expect(error).toMatchObject({ code: 'invalid_transition' });
  }
}

describe('vine state machine', () => {
  it('lists every status', () => {
    expect(Object.keys(VINE_TRANSITIONS).sort()).toEqual([...VINE_STATUSES].sort());
  });

  describe('a job starts only from a settled status', () => {
    for (const from of VINE_STATUSES) {
      for (const jobType of JOB_TYPES) {
        if (SETTLED.includes(from)) {
          it(`${from} + ${jobType} started -> ${IN_PROGRESS[jobType]}`, () => {
            expect(transitionVine(from, { type: 'job_started', jobType })).toBe(IN_PROGRESS[jobType]);
          });
        } else {
          it(`${from} refuses a ${jobType} start`, () => refused(from, { type: 'job_started', jobType }));
        }
      }
    }
  });

  describe('a job finishes only from the in-progress status of its type', () => {
    for (const from of VINE_STATUSES) {
      for (const jobType of JOB_TYPES) {
        if (IN_PROGRESS[jobType] === from) {
          it(`${from} + ${jobType} succeeded -> ${DONE[jobType]}`, () => {
            expect(transitionVine(from, { type: 'job_succeeded', jobType })).toBe(DONE[jobType]);
          });
        } else {
          it(`${from} refuses a ${jobType} success`, () => refused(from, { type: 'job_succeeded', jobType }));
        }
      }
    }
  });

  describe('failure', () => {
    for (const from of VINE_STATUSES) {
      if (Object.values(IN_PROGRESS).includes(from)) {
        it(`${from} + failed -> FAILED`, () => expect(transitionVine(from, { type: 'job_failed' })).toBe('FAILED'));
      } else {
        it(`${from} refuses a failure (no job is running)`, () => refused(from, { type: 'job_failed' }));
      }
    }
  });

  describe('cancel restores the status the vine had before the job', () => {
    for (const from of Object.values(IN_PROGRESS)) {
      for (const restore of SETTLED) {
        it(`${from} cancelled, was ${restore} -> ${restore}`, () => {
          expect(transitionVine(from, { type: 'job_cancelled', restore })).toBe(restore);
        });
      }
      it(`${from} cancelled with an in-progress status to restore -> NEW`, () => {
        expect(transitionVine(from, { type: 'job_cancelled', restore: 'DEPLOYING' })).toBe('NEW');
      });
    }
    for (const from of SETTLED) {
      it(`${from} refuses a cancel`, () => refused(from, { type: 'job_cancelled', restore: 'NEW' }));
    }
  });
});
