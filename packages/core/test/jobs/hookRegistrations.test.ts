/**
 * The hooks on the job lifecycle, in the order they run, with the moments each reacts to: the one
 * list (`jobHooks`) as docs/architecture.md shows it.
 */
import { readFileSync } from 'node:fs';
import { END_REASONS, jobHooks } from '@trellis/core';
import { describe, expect, it } from 'vitest';

const EVERY_END = [...END_REASONS];
const ALL_BUT_GIVING_WAY = EVERY_END.filter((reason) => reason !== 'gave_way');

const REGISTERED: [string, string[]][] = [
  ['deployments.finalize', ['reported']],
  ['deployments.clearComponents', ['reported']],
  ['notifications.jobEnded', ALL_BUT_GIVING_WAY],
  ['approvals.planNeedsApproval', ['reported']],
  ['vcs.jobQueued', ['queued']],
  ['vcs.jobEnded', ALL_BUT_GIVING_WAY],
  [
    'drift.result',
    [
      'reported',
      'start_failed',
      'needs_reconnect',
      'source_unavailable',
      'agent_outdated',
      'agent_lost',
      'agent_restarted',
      'agent_destroyed',
    ],
  ],
  ['fleet.planPolicy', ['reported']],
  ['workers.destroyTarget', ['reported']],
  ['tfe.autoApply', ['reported']],
  ['vcs.autoDeploy', ['reported']],
  ['triggers.downstream', ['reported']],
  ['live.jobQueued', ['queued', 'requeued']],
  ['live.jobEnded', EVERY_END],
];

describe('the job lifecycle hooks', () => {
  it('are registered from one list, in this order, each for these moments', () => {
    expect(jobHooks().map((hook) => [hook.name, [...hook.on].sort()])).toEqual(
      REGISTERED.map(([name, on]) => [name, [...on].sort()]),
    );
  });

  it('are each named in docs/architecture.md', () => {
    const doc = readFileSync(new URL('../../../../docs/architecture.md', import.meta.url), 'utf8');
    expect(REGISTERED.map(([name]) => name).filter((name) => !doc.includes(name))).toEqual([]);
  });
});
