/**
 * The agent's known results (issue 24): one shape, judged when the status is reported. The
 * contract's schema (the request, the answer, OpenAPI) and core's `parseExecutionMetadata` (the
 * judge of every caller of the use case) accept and refuse the same reports; through HTTP a
 * malformed known field is `400 validation_failed` naming it, and other fields are kept.
 */
import { type Json, parseExecutionMetadata, ValidationError } from '@trellis/core';
import { ExecutionMetadataSchema } from '@trellis/contract';
import { seedRunningJob, seedVine, seedWorker } from '@trellis/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ApiHarness, cliTokens, startApi } from './harness.js';

const POLICY = {
  policy_id: '00000000-0000-4000-8000-00000000a001',
  version: 3,
  name: 'no-public-buckets',
  enforcement: 'mandatory',
  passed: false,
  messages: ['bucket logs is public'],
};

/** Reports and the known fields each gets wrong (none: it is accepted). */
const REPORTS: [string, Record<string, Json>, string[]][] = [
  ['nothing', {}, []],
  ['only fields of its own', { step: 'plan', timings: { init: 1.5 } }, []],
  [
    'every result, well formed',
    {
      plan_summary: { add: 1, change: 0, destroy: 2 },
      resource_changes: [{ address: 'aws_s3_bucket.logs', actions: ['delete', 'create'] }],
      resource_changes_omitted: 0,
      policy_results: [POLICY],
      outputs: { url: { value: 'https://x.example.test', type: 'string', sensitive: false }, plain: 1 },
      sensitive_outputs: ['password'],
      cluster_name: 'eks-prod',
      cluster_endpoint: 'https://eks.example.test',
      argocd_url: null,
    },
    [],
  ],
  ['a summary with a negative count', { plan_summary: { add: -1, change: 0, destroy: 0 } }, ['plan_summary']],
  ['a summary with a count as text', { plan_summary: { add: '1', change: 0, destroy: 0 } }, ['plan_summary']],
  ['a summary missing a count', { plan_summary: { add: 1, change: 0 } }, ['plan_summary']],
  ['a summary that is a list', { plan_summary: [1, 0, 0] }, ['plan_summary']],
  ['a fractional count', { plan_summary: { add: 0.5, change: 0, destroy: 0 } }, ['plan_summary']],
  ['changes without actions', { resource_changes: [{ address: 'a' }] }, ['resource_changes']],
  ['changes that are not a list', { resource_changes: { address: 'a', actions: [] } }, ['resource_changes']],
  ['a policy result without a verdict', { policy_results: [{ ...POLICY, passed: 'no' }] }, ['policy_results']],
  [
    'a policy result of an unknown enforcement',
    { policy_results: [{ ...POLICY, enforcement: 'strict' }] },
    ['policy_results'],
  ],
  ['outputs as a list', { outputs: [1] }, ['outputs']],
  ['an endpoint that is not a URL', { cluster_endpoint: 'eks.internal' }, ['cluster_endpoint']],
  ['a cluster name as a number', { cluster_name: 7 }, ['cluster_name']],
  [
    'two bad fields at once',
    { plan_summary: { add: 1 }, sensitive_outputs: 'password', step: 'kept' },
    ['plan_summary', 'sensitive_outputs'],
  ],
];

/** The known fields a judge refused, by the field's name. */
function refusedByCore(metadata: Record<string, Json>): string[] {
  try {
    parseExecutionMetadata(metadata);
    return [];
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return [...new Set(error.fields.map((field) => field.path.split('.')[1] as string))].sort();
  }
}

function refusedByContract(metadata: Record<string, Json>): string[] {
  const result = ExecutionMetadataSchema.safeParse(metadata);
  return result.success ? [] : [...new Set(result.error.issues.map((issue) => String(issue.path[0])))].sort();
}

describe('the two judges of execution_metadata agree', () => {
  it.each(REPORTS)('%s', (_name, metadata, refused) => {
    expect(refusedByCore(metadata)).toEqual(refused);
    expect(refusedByContract(metadata)).toEqual(refused);
  });

  it('keep the fields of its own as they are, and the results in their shape', () => {
    const metadata = { step: 'plan', plan_summary: { add: 1, change: 2, destroy: 3 }, nested: { a: [1, null] } };
    expect(parseExecutionMetadata(metadata)).toEqual(metadata);
    expect(ExecutionMetadataSchema.parse(metadata)).toEqual(metadata);
  });
});

describe('PUT /api/jobs/{id}/status', () => {
  let api: ApiHarness;
  beforeEach(async () => {
    api = await startApi();
  });
  afterEach(async () => {
    await api.close();
  });

  async function runningJob() {
    const { access_token } = await cliTokens(api);
    const user = api.useCases.auth.authenticateAccessToken(access_token);
    const vine = await seedVine(api.core, user);
    const worker = await seedWorker(api.core, user, { heartbeat: true });
    const job = await seedRunningJob(api.core, user, worker, vine);
    const put = (body: unknown) =>
      fetch(`${api.url}/api/jobs/${job.id}/status`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'x-worker-id': worker.workerId, 'x-worker-token': worker.token },
        body: JSON.stringify(body),
      });
    return { job, put };
  }

  it('refuses a malformed known result with 400 validation_failed naming it, and changes nothing', async () => {
    const { job, put } = await runningJob();
    const response = await put({ status: 'SUCCESS', execution_metadata: { plan_summary: { add: 'one' } } });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.code).toBe('validation_failed');
    expect(body.errors.map((error: { path: string }) => error.path)).toContain(
      'body.execution_metadata.plan_summary.add',
    );
    expect(api.core.uow.snapshot().jobs.get(job.id)?.status).toBe('PROCESSING');
  });

  it('stores the results typed and the other fields as given, and answers with them', async () => {
    const { job, put } = await runningJob();
    const metadata = { plan_summary: { add: 2, change: 0, destroy: 1 }, engine_version: '1.9.0' };
    const response = await put({ status: 'SUCCESS', execution_metadata: metadata });
    expect(response.status).toBe(200);
    expect((await response.json()).execution_metadata).toEqual(metadata);
    expect(api.core.uow.snapshot().jobs.get(job.id)?.execution_metadata).toEqual(metadata);
  });
});
