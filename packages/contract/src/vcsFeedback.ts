/** Feedback at the git provider (issue 13): `GET /api/cli/jobs/{id}/vcs-feedback`. */
import { COMMIT_STATES, GIT_PROVIDERS, VCS_FEEDBACK_KINDS, VCS_FEEDBACK_STATUSES } from '@trellis/core';
import { z } from 'zod';
import { isoTime } from './common.js';

export const VcsFeedbackRecord = z.object({
  kind: z.enum(VCS_FEEDBACK_KINDS).describe('`status`: the commit status; `comment`: the pull request comment'),
  provider: z.enum(GIT_PROVIDERS),
  status: z
    .enum(VCS_FEEDBACK_STATUSES)
    .describe(
      '`pending`: not sent yet or being retried; `delivered`: the provider took it; `failed`: given up; `superseded`: a newer one about the same commit or pull request replaced it before it was sent',
    ),
  state: z.enum(COMMIT_STATES).nullable().describe("a status's state; null for a comment"),
  attempts: z.number().int().min(0),
  last_error: z.string().nullable().describe("why the last try did not reach the provider (the provider's answer)"),
  next_attempt_at: isoTime.nullable().describe('while pending: when it is tried again'),
});

export const VcsFeedbackList = z.object({ items: z.array(VcsFeedbackRecord) });
