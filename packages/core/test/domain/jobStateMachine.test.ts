import {
  ConflictError,
  isTerminalJobStatus,
  JOB_CLAIM,
  JOB_STATUSES,
  JOB_TRANSITIONS,
  type JobEvent,
  type JobStatus,
  PLAN_HOLDING_DEPLOY_STATUSES,
  SPECULATIVE_TRIGGER_TYPES,
  TERMINAL_JOB_STATUSES,
  transitionJob,
  VINE_JOB_STARTS,
} from '@trellis/core';
import { describe, expect, it } from 'vitest';

const EVENTS: JobEvent[] = [
  'claim',
  'report_processing',
  'report_success',
  'report_failed',
  'report_cancelled',
  'cancel',
  'agent_lost',
  'start_failed',
  'unclaim',
];

/**
 * DESIGN §3, written out independently of the table under test, with issue 30's `unclaim`: a
 * claim whose answer never reached its agent is undone.
 */
const EXPECTED: Record<JobStatus, Partial<Record<JobEvent, JobStatus>>> = {
  QUEUED: { claim: 'PROCESSING', cancel: 'CANCELLED' },
  PROCESSING: {
    report_processing: 'PROCESSING',
    report_success: 'SUCCESS',
    report_failed: 'FAILED',
    report_cancelled: 'CANCELLED',
    cancel: 'CANCELLED',
    agent_lost: 'FAILED',
    start_failed: 'FAILED',
    unclaim: 'QUEUED',
  },
  SUCCESS: {},
  FAILED: {},
  CANCELLED: {},
};

const cases = JOB_STATUSES.flatMap((from) => EVENTS.map((event) => ({ from, event, to: EXPECTED[from][event] })));

describe('job state machine', () => {
  it.each(cases.filter((c) => c.to !== undefined))('$from --$event--> $to', ({ from, event, to }) => {
    expect(transitionJob(from, event)).toBe(to);
  });

  it.each(cases.filter((c) => c.to === undefined))(
    '$from refuses $event with 409 invalid_transition',
    ({ from, event }) => {
      let thrown: unknown;
      try {
        transitionJob(from, event);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ConflictError);
      expect(thrown).toMatchObject({ code: 'invalid_transition', kind: 'conflict' });
      expect((thrown as Error).message).toContain(from);
    },
  );

  it('the table holds exactly the transitions of DESIGN §3', () => {
    expect(JOB_TRANSITIONS).toEqual(EXPECTED);
  });

  it('terminal states are SUCCESS, FAILED and CANCELLED, and accept no event', () => {
    for (const status of JOB_STATUSES) {
      const terminal = ['SUCCESS', 'FAILED', 'CANCELLED'].includes(status);
      expect(isTerminalJobStatus(status), status).toBe(terminal);
      expect(TERMINAL_JOB_STATUSES.includes(status), status).toBe(terminal);
    }
  });

  it('only an undone claim moves a job back to QUEUED: no report and no person does', () => {
    for (const from of JOB_STATUSES) {
      for (const event of EVENTS) {
        const to = JOB_TRANSITIONS[from][event];
        if (to === 'QUEUED') expect([from, event]).toEqual(['PROCESSING', 'unclaim']);
      }
    }
  });
});

describe('rules the stores receive', () => {
  it('the claim is the `claim` move of the table', () => {
    expect(JOB_CLAIM).toMatchObject({ from: 'QUEUED', to: JOB_TRANSITIONS.QUEUED.claim });
    // The vine moves as the vine state machine's `job_started` says; speculative plans leave it be.
    expect(JOB_CLAIM.vine).toBe(VINE_JOB_STARTS);
    expect(JOB_CLAIM.vineKeptBy).toBe(SPECULATIVE_TRIGGER_TYPES);
    expect(transitionJob(JOB_CLAIM.from, 'claim')).toBe(JOB_CLAIM.to);
  });

  it('a deploy holds its plan while queued, running or done, not once failed or cancelled', () => {
    expect([...PLAN_HOLDING_DEPLOY_STATUSES].sort()).toEqual(['PROCESSING', 'QUEUED', 'SUCCESS']);
  });
});
