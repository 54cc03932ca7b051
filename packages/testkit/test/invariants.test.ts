/**
 * The fault scenarios' invariant checker must be able to fail: each promise it checks is broken
 * here on crafted records, and a clean history passes.
 */
import { describe, expect, it } from 'vitest';
import {
  checkInvariants,
  type FaultRecords,
  type InvariantName,
  parseLedger,
  resourceIds,
} from '../src/faults/index.js';

const VINE = 'vine-1';
const T = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
const MS = (second: number) => Date.UTC(2026, 0, 1, 0, 0, second);

/** One vine, two DEPLOYs one after the other, each creating one resource; the second replaced the first. */
function clean(): FaultRecords {
  return {
    vines: [{ id: VINE }],
    jobs: [
      {
        id: 'job-1',
        vine_id: VINE,
        job_type: 'DEPLOY',
        status: 'SUCCESS',
        error_message: null,
        claimed_at: T(0),
        finished_at: T(10),
      },
      {
        id: 'job-2',
        vine_id: VINE,
        job_type: 'DEPLOY',
        status: 'FAILED',
        error_message: 'the agent running this job was lost',
        claimed_at: T(20),
        finished_at: T(30),
      },
    ],
    audits: [
      { action: 'vine.create', target_type: 'vine', target_id: VINE },
      { action: 'job.create', target_type: 'job', target_id: 'job-1' },
      { action: 'job.create', target_type: 'job', target_id: 'job-2' },
      { action: 'job.fail', target_type: 'job', target_id: 'job-2' },
    ],
    outbox: [
      { event: 'job.succeeded', job_id: 'job-1' },
      { event: 'job.failed', job_id: 'job-2' },
    ],
    logChunks: [
      { job_id: 'job-1', id: 1, seq: 1 },
      { job_id: 'job-1', id: 2, seq: null },
      { job_id: 'job-1', id: 3, seq: 2 },
      { job_id: 'job-2', id: 4, seq: 1 },
    ],
    stateVersions: [
      {
        vine_id: VINE,
        id: 1,
        job_id: 'job-1',
        serial: 1,
        lineage: 'L',
        rejected: false,
        after_lost: false,
        reviewed: false,
        resource_ids: ['r1'],
      },
      {
        vine_id: VINE,
        id: 2,
        job_id: 'job-2',
        serial: 3,
        lineage: 'L',
        rejected: false,
        after_lost: true,
        reviewed: false,
        resource_ids: ['r2'],
      },
    ],
    planArtifacts: [{ job_id: 'job-1', size: 3, sha256: 'abc', stored: { size: 3, sha256: 'abc' } }],
    ledgers: {
      [VINE]: [
        { event: 'begin', resource_id: 'r1', at_ms: MS(2) },
        { event: 'end', resource_id: 'r1', at_ms: MS(8) },
        { event: 'destroyed', resource_id: 'r1', at_ms: MS(21) },
        { event: 'begin', resource_id: 'r2', at_ms: MS(22) },
        // The lost job's engine went on after its job was failed (30 s): no later apply.
        { event: 'end', resource_id: 'r2', at_ms: MS(40) },
      ],
    },
    agentLogs: [
      '{"level":"info","msg":"job started","job_id":"job-1"}\nnot json\n{"level":"info","msg":"job started","job_id":"job-2"}',
    ],
    serverLogs: [
      '{"level":"warn","msg":"request failed while the server stops","path":"/api/v1/jobs/claim"}\nnot json',
    ],
  };
}

function broken(records: FaultRecords): InvariantName[] {
  return checkInvariants(records, { announcedEnds: true }).map((violation) => violation.invariant);
}

describe('the invariant checker', () => {
  it('finds nothing in a clean history', () => {
    expect(checkInvariants(clean(), { announcedEnds: true })).toEqual([]);
  });

  it('finds a job that never ended', () => {
    const records = clean();
    Object.assign(records.jobs[1] as object, { status: 'PROCESSING', finished_at: null });
    expect(broken(records)).toContain('job_ended');
  });

  it('finds a job whose end was announced twice, or as another status', () => {
    const twice = clean();
    twice.outbox.push({ event: 'job.succeeded', job_id: 'job-1' });
    expect(broken(twice)).toEqual(['job_ended_once']);
    const other = clean();
    (other.outbox[0] as { event: string }).event = 'job.failed';
    expect(broken(other)).toEqual(['job_ended_once']);
  });

  it('finds a job two agents started', () => {
    const records = clean();
    records.agentLogs.push('{"level":"info","msg":"job started","job_id":"job-1"}');
    expect(broken(records)).toEqual(['job_ran_once']);
  });

  it('finds two applies of one vine at once, on the control plane or by the engine’s own account', () => {
    const claimed = clean();
    (claimed.jobs[1] as { claimed_at: string }).claimed_at = T(5);
    expect(broken(claimed)).toContain('applies_do_not_overlap');

    // A third apply claimed after the lost job ended, while its engine was still applying (until 40 s).
    const engine = clean();
    engine.jobs.push({
      id: 'job-3',
      vine_id: VINE,
      job_type: 'DESTROY',
      status: 'SUCCESS',
      error_message: null,
      claimed_at: T(35),
      finished_at: T(50),
    });
    engine.audits.push({ action: 'job.create', target_type: 'job', target_id: 'job-3' });
    engine.outbox.push({ event: 'job.succeeded', job_id: 'job-3' });
    expect(broken(engine)).toEqual(['applies_do_not_overlap']);
  });

  it('finds a resource the engine created that no current state holds (orphaned), and one it never created', () => {
    const orphaned = clean();
    (orphaned.stateVersions[1] as { rejected: boolean }).rejected = true;
    const found = checkInvariants(orphaned).filter((v) => v.invariant === 'created_resources_in_state');
    expect(found.map((v) => v.detail)).toEqual([
      'vine vine-1: resource r2, created by the engine, is not in the current state (orphaned)',
      'vine vine-1: the current state holds resource r1, which the engine destroyed',
    ]);
    const invented = clean();
    (invented.stateVersions[1] as { resource_ids: string[] }).resource_ids = ['r2', 'r9'];
    expect(broken(invented)).toEqual(['created_resources_in_state']);
  });

  it('finds a state history that goes back or changes lineage', () => {
    const back = clean();
    (back.stateVersions[1] as { serial: number }).serial = 0;
    expect(broken(back)).toEqual(['state_history_continues']);
    const lineage = clean();
    (lineage.stateVersions[1] as { lineage: string }).lineage = 'other';
    expect(broken(lineage)).toEqual(['state_history_continues']);
  });

  it('finds log chunks stored twice, out of order or with a gap', () => {
    for (const chunks of [
      [1, 1, 2],
      [2, 1],
      [1, 3],
    ]) {
      const records = clean();
      records.logChunks = chunks.map((seq, index) => ({ job_id: 'job-1', id: index + 1, seq }));
      expect(broken(records)).toEqual(['log_chunks_once_in_order']);
    }
  });

  it('finds a change without its audit entry, and an end audited twice', () => {
    const missing = clean();
    missing.audits = missing.audits.filter((entry) => entry.action !== 'job.fail');
    expect(broken(missing)).toEqual(['audited']);
    const twice = clean();
    twice.audits.push({ action: 'job.cancel', target_type: 'job', target_id: 'job-1' });
    twice.audits.push({ action: 'job.cancel', target_type: 'job', target_id: 'job-1' });
    expect(broken(twice)).toEqual(['audited']);
    const acknowledged = clean();
    (acknowledged.stateVersions[1] as { reviewed: boolean }).reviewed = true;
    expect(broken(acknowledged)).toEqual(['audited']);
  });

  it('finds a plan file recorded but missing from the store, or stored other than recorded (half-written)', () => {
    const records = clean();
    records.planArtifacts.push(
      { job_id: 'job-2', size: 10, sha256: 'def', stored: null },
      { job_id: 'job-3', size: 10, sha256: 'def', stored: { size: 4, sha256: '0a1' } },
    );
    expect(broken(records)).toEqual(['plan_artifacts_whole', 'plan_artifacts_whole']);
  });

  it('finds an answer 500 an agent saw', () => {
    const records = clean();
    records.agentLogs.push(
      '{"level":"warn","msg":"log post failed; retrying","error":"an internal error occurred (internal_error)"}',
    );
    expect(broken(records)).toEqual(['no_internal_errors']);
  });

  it('finds an unhandled error a replica logged, with its cause', () => {
    const records = clean();
    records.serverLogs.push(
      '{"level":"error","msg":"unhandled error","path":"/api/v1/jobs/claim","err":{"message":"boom"}}',
    );
    const found = checkInvariants(records, { announcedEnds: true });
    expect(found.map((violation) => violation.invariant)).toEqual(['no_internal_errors']);
    expect(found[0]?.detail).toContain('"message":"boom"');
  });

  it('reads ledgers and state files', () => {
    expect(parseLedger('begin a 1\nnoise\nend a 2\ndestroyed a 3\n')).toEqual([
      { event: 'begin', resource_id: 'a', at_ms: 1 },
      { event: 'end', resource_id: 'a', at_ms: 2 },
      { event: 'destroyed', resource_id: 'a', at_ms: 3 },
    ]);
    const state = {
      version: 4,
      resources: [
        {
          mode: 'managed',
          type: 'terraform_data',
          name: 'step',
          instances: [{ status: 'tainted', attributes: { id: 'x' } }],
        },
        { mode: 'data', type: 'terraform_remote_state', name: 'slow', instances: [{ attributes: { id: 'y' } }] },
      ],
    };
    expect(resourceIds(JSON.stringify(state))).toEqual(['x']);
  });
});
