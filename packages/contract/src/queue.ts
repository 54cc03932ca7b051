/** The job queue (issue 29): queued jobs in the order agents claim them, with their agent pools. */
import { z } from 'zod';
import { uuid } from './common.js';
import { OrgFilter } from './orgs.js';
import { JobSummary, WaitingFor } from './records.js';

export const QueueQuery = z.object({
  org_id: OrgFilter,
  limit: z.coerce
    .number()
    .int()
    .optional()
    .describe('how many jobs from the head of the queue: 1 to 200, default 50 (the bounds of paged lists)'),
});

const PoolAgent = z.object({
  id: uuid,
  name: z.string().nullable().describe('null when the agent no longer exists'),
});

export const AgentPool = z
  .object({
    kind: z
      .enum(['personal', 'organization'])
      .describe(
        "`personal`: the owner's own agents; `organization`: the organization's pool (never a person's agents)",
      ),
    owner_id: uuid,
    org_name: z.string().nullable().describe("the organization's name; null for a person's own agents"),
    assigned_worker: PoolAgent.nullable().describe('the one agent that may take the job (`assigned_worker_id`)'),
    excluded_worker: PoolAgent.nullable().describe('the agent that may not: the one a DESTROY_WORKER job destroys'),
    agents: z
      .object({
        total: z.number().int().describe('agents of the pool that may take the job (not destroyed)'),
        online: z.number().int().describe('of them, online (heartbeat within the timeout), busy or not'),
        idle: z.number().int().describe('of them, online and running no job: one takes the job at its next claim'),
      })
      .describe('the agents that may take the job, by what they do now'),
  })
  .describe('which agents can take a queued job (an agent claims only its owner’s jobs)');

export const QueueEntry = z.object({
  position: z
    .number()
    .int()
    .min(1)
    .describe(
      "1-based place in its owner's queue: the order the owner's agents claim its queued jobs in (the claim's own order)",
    ),
  job: JobSummary,
  waited_seconds: z.number().int().min(0).describe('seconds since it was queued'),
  vine: z.object({ id: uuid, name: z.string() }).nullable(),
  vineyard: z.object({ id: uuid, name: z.string() }).nullable(),
  pool: AgentPool,
  waiting_for: WaitingFor.nullable().describe('why it waits; null when an idle agent of its pool takes it next'),
});

export const JobQueue = z.object({
  jobs: z.array(QueueEntry).describe('the head of the queue: by position, owners interleaved, longest queued first'),
  total: z.number().int().min(0).describe('how many jobs are queued in all (under the filter)'),
  limit: z.number().int().describe('the limit this answer used'),
});
