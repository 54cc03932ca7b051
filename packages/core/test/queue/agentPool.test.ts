import { agentPoolOf, describeAgentPool, type OwnerAgents, whyQueuedJobWaits, type Worker } from '@trellis/core';
import { describe, expect, it } from 'vitest';

const NOW = new Date('2026-01-01T12:00:00.000Z');
const TIMEOUT_S = 60;
const OWNER = '11111111-1111-4111-8111-111111111111';

function worker(name: string, state: 'online' | 'offline' | 'destroyed'): Worker {
  return {
    id: `00000000-0000-4000-8000-${name.padStart(12, '0')}`,
    owner_id: OWNER,
    name,
    mode: 'self-hosted',
    token_hash: 'a'.repeat(64),
    last_heartbeat: state === 'offline' ? '2026-01-01T11:00:00.000Z' : '2026-01-01T11:59:50.000Z',
    version: '1.0.0',
    metadata: {},
    created_at: '2026-01-01T10:00:00.000Z',
    destroyed_at: state === 'destroyed' ? '2026-01-01T11:30:00.000Z' : null,
  };
}

const job = (overrides: { assigned_worker_id?: string | null; target_worker_id?: string | null } = {}) => ({
  owner_id: OWNER,
  assigned_worker_id: null,
  target_worker_id: null,
  ...overrides,
});

describe('agentPoolOf and whyQueuedJobWaits (issue 29)', () => {
  const a = worker('a', 'online');
  const b = worker('b', 'online');
  const c = worker('c', 'offline');
  const gone = worker('gone', 'destroyed');
  const owner = (busy: Worker[] = [], org: OwnerAgents['org'] = null): OwnerAgents => ({
    ownerId: OWNER,
    org,
    workers: [a, b, c, gone],
    busyWorkerIds: busy.map((w) => w.id),
  });

  it("counts the owner's agents that may take the job: idle, online (busy or not), not destroyed", () => {
    const pool = agentPoolOf(job(), owner([a]), NOW, TIMEOUT_S);
    expect(pool).toEqual({
      kind: 'personal',
      owner_id: OWNER,
      org_name: null,
      assigned_worker: null,
      excluded_worker: null,
      agents: { total: 3, online: 2, idle: 1 },
    });
    expect(describeAgentPool(pool)).toBe('your agents');
    expect(whyQueuedJobWaits(null, pool)).toBeNull();
    expect(whyQueuedJobWaits(null, agentPoolOf(job(), owner([a, b]), NOW, TIMEOUT_S))).toMatchObject({
      reason: 'agents_busy',
    });
  });

  it('an assigned job counts its agent only; a DESTROY_WORKER job every agent but its target', () => {
    const assigned = agentPoolOf(job({ assigned_worker_id: c.id }), owner(), NOW, TIMEOUT_S);
    expect(assigned.agents).toEqual({ total: 1, online: 0, idle: 0 });
    expect(describeAgentPool(assigned)).toBe('agent c only (your agents)');
    expect(whyQueuedJobWaits(null, assigned)?.message).toContain('the agent it is assigned to (c) is not online');

    // The only idle agent is the one the job destroys: it can never take it.
    const destroying = agentPoolOf(job({ target_worker_id: a.id }), owner([b]), NOW, TIMEOUT_S);
    expect(destroying.agents).toEqual({ total: 2, online: 1, idle: 0 });
    expect(describeAgentPool(destroying)).toBe('your agents but a (the agent it destroys)');
    expect(whyQueuedJobWaits(null, destroying)).toMatchObject({ reason: 'agents_busy' });
    const alone = agentPoolOf(job({ target_worker_id: a.id }), { ...owner(), workers: [a] }, NOW, TIMEOUT_S);
    expect(whyQueuedJobWaits(null, alone)?.message).toContain('none of your agents other than a');
  });

  it("an organization's pool is named, and its configuration's turn comes before its agents", () => {
    const pool = agentPoolOf(job(), { ...owner(), workers: [], org: { id: OWNER, name: 'acme' } }, NOW, TIMEOUT_S);
    expect(describeAgentPool(pool)).toBe('agents of acme');
    expect(whyQueuedJobWaits(null, pool)?.message).toContain('no agent of the organization acme is online');
    const running = { id: '22222222-2222-4222-8222-222222222222', job_type: 'DEPLOY' as const };
    expect(whyQueuedJobWaits({ running, first: null }, pool)).toMatchObject({
      reason: 'vine_busy',
      job_id: running.id,
    });
    expect(whyQueuedJobWaits({ running: null, first: running }, pool)?.message).toContain(
      'was queued on the configuration before this one',
    );
  });
});
