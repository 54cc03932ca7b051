/** Jobs run by a test agent over HTTP, so pages have real records to show. */
import type { TrellisClient } from '@trellis/client';
import type { Job, JsonObject, PlanChanges, StreamType } from '@trellis/core';
import { expect } from 'vitest';
import type { AgentClient } from './webServer.js';

export interface JobScript {
  logs?: [string, StreamType][];
  /** Upload a plan file (a `PLAN` job that a deploy can apply). */
  artifact?: boolean;
  /** With `artifact`: the plan's change document, as the agent stores it after the plan file. */
  changes?: PlanChanges;
  status: 'SUCCESS' | 'FAILED';
  execution_metadata?: JsonObject;
  error_message?: string;
}

/** Queues a job, has `agent` claim it and play `script`; returns the finished job. */
export async function runJob(
  user: TrellisClient,
  agent: AgentClient,
  input: Parameters<TrellisClient['createJob']>[0],
  script: JobScript,
): Promise<Job> {
  const job = await user.createJob(input);
  const claimed = await agent.claimJob();
  expect(claimed?.job.id).toBe(job.id);
  for (const [text, stream] of script.logs ?? []) await agent.appendLog(job.id, text, stream);
  if (script.artifact) {
    const plan = new TextEncoder().encode(`plan of ${job.id}`);
    await agent.uploadPlanArtifact(job.id, plan, plan.length);
    if (script.changes) await agent.uploadPlanChanges(job.id, script.changes);
  }
  return agent.reportStatus(job.id, {
    status: script.status,
    ...(script.execution_metadata ? { execution_metadata: script.execution_metadata } : {}),
    ...(script.error_message ? { error_message: script.error_message } : {}),
  });
}

export const PLAN_LOG: [string, StreamType][] = [
  ['agent trellis-agent 1.4.2 on build-01: running PLAN\n', 'SYSTEM'],
  ['Initializing the backend...\nInitializing provider plugins...\n', 'STDOUT'],
  ['Warning: Argument is deprecated\n', 'STDERR'],
  [
    '  + resource "aws_eks_cluster" "main"\n  + resource "aws_iam_role" "nodes"\n  + resource "aws_s3_bucket" "logs"\n',
    'STDOUT',
  ],
  ['Plan: 3 to add, 0 to change, 0 to destroy.\n', 'STDOUT'],
  ['uploading the plan (14.2 KiB)\n', 'SYSTEM'],
];
