/**
 * The status of a remote run (issue 27) as a table: each row is the plan job, its apply, the
 * run's own record and the deploy gate's answer, and the TFE status, actions and timestamps it
 * reads as (docs/terraform-cloud.md has the same table).
 */
import {
  type Job,
  type JobAction,
  type PolicyResult,
  type RunFacts,
  runActions,
  runStatus,
  runStatusTimestamps,
  type TfeRunStatus,
} from '@trellis/core';
import { describe, expect, it } from 'vitest';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:01:00.000Z';
const T2 = '2026-01-01T00:02:00.000Z';
const T3 = '2026-01-01T00:03:00.000Z';
const T4 = '2026-01-01T00:04:00.000Z';

const FAILED: PolicyResult = {
  policy_id: '00000000-0000-4000-8000-00000000a001',
  version: 1,
  name: 'no-public-buckets',
  enforcement: 'mandatory',
  passed: false,
  messages: ['public'],
};
const CLAIMED = [{ policy_id: FAILED.policy_id, version: 1, name: FAILED.name, enforcement: 'mandatory' as const }];

const allowed: JobAction = { allowed: true };
const needsApproval: JobAction = { allowed: false, code: 'approval_required', reason: 'approve first' };
const stale: JobAction = { allowed: false, code: 'plan_stale', reason: 'plan again' };

type Plan = RunFacts['plan'];
const plan = (overrides: Partial<Plan> = {}): Plan => ({
  status: 'SUCCESS',
  execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 } },
  approval: null,
  policy_override: null,
  claimed_policies: null,
  created_at: T0,
  claimed_at: T1,
  finished_at: T2,
  ...overrides,
});
const apply = (status: Job['status']): RunFacts['apply'] => ({
  status,
  created_at: T3,
  claimed_at: status === 'QUEUED' ? null : T3,
  finished_at: status === 'QUEUED' || status === 'PROCESSING' ? null : T4,
});
const facts = (overrides: Partial<RunFacts> & { run?: Partial<RunFacts['run']> } = {}): RunFacts => ({
  plan: plan(),
  apply: null,
  approvalRequired: false,
  applyAction: allowed,
  ...overrides,
  run: { plan_only: false, auto_apply: false, confirmed_at: null, discarded_at: null, ...overrides.run },
});

const approvedBy = { user_id: 'u', email: null, at: T3, comment: null };

const TABLE: [string, RunFacts, TfeRunStatus, Partial<Record<string, boolean>>][] = [
  [
    'a queued plan',
    facts({ plan: plan({ status: 'QUEUED', claimed_at: null, finished_at: null }) }),
    'pending',
    {
      'is-cancelable': true,
      'is-confirmable': false,
    },
  ],
  [
    'a running plan',
    facts({ plan: plan({ status: 'PROCESSING', finished_at: null }) }),
    'planning',
    {
      'is-cancelable': true,
    },
  ],
  ['a failed plan', facts({ plan: plan({ status: 'FAILED' }) }), 'errored', { 'is-cancelable': false }],
  ['a cancelled plan', facts({ plan: plan({ status: 'CANCELLED' }) }), 'canceled', { 'is-discardable': false }],
  ['a plan with changes, no policies', facts(), 'planned', { 'is-confirmable': true, 'is-discardable': true }],
  [
    'a plan with changes and passed policies',
    facts({ plan: plan({ claimed_policies: CLAIMED }) }),
    'policy_checked',
    {
      'is-confirmable': true,
    },
  ],
  [
    'a plan that failed a mandatory policy',
    facts({
      plan: plan({
        claimed_policies: CLAIMED,
        execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 }, policy_results: [FAILED] },
      }),
      applyAction: { allowed: false, code: 'policy_failed', reason: 'failed' },
    }),
    'policy_override',
    { 'is-confirmable': false, 'is-discardable': true },
  ],
  [
    'an overridden plan',
    facts({
      plan: plan({
        claimed_policies: CLAIMED,
        execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 }, policy_results: [FAILED] },
        policy_override: { user_id: 'u', email: null, at: T3, reason: 'ok' },
      }),
    }),
    'policy_overridden',
    { 'is-confirmable': true },
  ],
  [
    'a plan of no changes',
    facts({ plan: plan({ execution_metadata: { plan_summary: { add: 0, change: 0, destroy: 0 } } }) }),
    'planned_and_finished',
    {
      'is-confirmable': false,
      'is-discardable': false,
    },
  ],
  ['a plan-only run', facts({ run: { plan_only: true } }), 'planned_and_finished', { 'is-confirmable': false }],
  [
    'a plan waiting for its approval',
    facts({ approvalRequired: true, applyAction: needsApproval }),
    'post_plan_awaiting_decision',
    { 'is-confirmable': true, 'is-discardable': true },
  ],
  [
    'a confirmed plan waiting for its approval',
    facts({ approvalRequired: true, applyAction: needsApproval, run: { confirmed_at: T3 } }),
    'confirmed',
    { 'is-confirmable': false, 'is-discardable': true },
  ],
  [
    'an auto-apply plan waiting for its approval',
    facts({ approvalRequired: true, applyAction: needsApproval, run: { auto_apply: true } }),
    'confirmed',
    { 'is-confirmable': false },
  ],
  [
    'an approved plan',
    facts({ approvalRequired: true, plan: plan({ approval: { ...approvedBy, decision: 'approved' } }) }),
    'planned',
    { 'is-confirmable': true },
  ],
  [
    'a rejected plan',
    facts({ approvalRequired: true, plan: plan({ approval: { ...approvedBy, decision: 'rejected' } }) }),
    'discarded',
    { 'is-confirmable': false, 'is-discardable': false },
  ],
  ['a stale plan', facts({ applyAction: stale }), 'planned', { 'is-confirmable': false, 'is-discardable': true }],
  ['a discarded run', facts({ run: { discarded_at: T3 } }), 'discarded', { 'is-confirmable': false }],
  [
    'a queued apply',
    facts({ apply: apply('QUEUED') }),
    'apply_queued',
    { 'is-cancelable': true, 'is-confirmable': false },
  ],
  ['a running apply', facts({ apply: apply('PROCESSING') }), 'applying', { 'is-cancelable': true }],
  ['a finished apply', facts({ apply: apply('SUCCESS') }), 'applied', { 'is-cancelable': false }],
  ['a failed apply', facts({ apply: apply('FAILED') }), 'errored', { 'is-discardable': false }],
  ['a cancelled apply', facts({ apply: apply('CANCELLED') }), 'canceled', { 'is-cancelable': false }],
];

describe('the status of a remote run', () => {
  it.each(TABLE)('%s reads as %s', (_name, given, status, actions) => {
    expect(runStatus(given)).toBe(status);
    expect(runActions(given)).toMatchObject({ ...actions, 'is-force-cancelable': false });
  });

  it('is not confirmable where the gate refuses, whatever the status', () => {
    expect(runActions(facts({ applyAction: null }))['is-confirmable']).toBe(false);
    expect(runActions(facts({ applyAction: { allowed: false, code: 'insufficient_role' } }))['is-confirmable']).toBe(
      false,
    );
  });

  it('stamps each status it went through', () => {
    expect(runStatusTimestamps(facts({ apply: apply('SUCCESS') }))).toEqual({
      'plan-queueable-at': T0,
      'plan-queued-at': T0,
      'planning-at': T1,
      'planned-at': T2,
      'confirmed-at': T3,
      'apply-queued-at': T3,
      'applying-at': T3,
      'applied-at': T4,
    });
    expect(runStatusTimestamps(facts({ run: { discarded_at: T3 } }))).toMatchObject({ 'discarded-at': T3 });
    expect(runStatusTimestamps(facts({ plan: plan({ status: 'FAILED' }) }))).toMatchObject({ 'errored-at': T2 });
    expect(
      runStatusTimestamps(
        facts({ plan: plan({ execution_metadata: { plan_summary: { add: 0, change: 0, destroy: 0 } } }) }),
      ),
    ).toMatchObject({ 'planned-and-finished-at': T2 });
    expect(runStatusTimestamps(facts({ apply: apply('CANCELLED') }))).toMatchObject({ 'canceled-at': T4 });
  });
});
