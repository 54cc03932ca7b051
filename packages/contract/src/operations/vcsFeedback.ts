/** What a job told the git provider: each operation as data (served by `http/src/routes/vcsFeedbackRoutes.ts`). */
import { operation } from '../operation.js';
import { IdParams, VcsFeedbackList } from '../schemas.js';

export const getJobVcsFeedback = operation({
  method: 'get',
  path: '/api/cli/jobs/{id}/vcs-feedback',
  operationId: 'getJobVcsFeedback',
  summary: "Whether a job's commit status and pull request comment reached the git provider",
  description:
    'Oldest first; empty for a job no push or pull request queued. A provider that refuses or is down is retried with backoff (`pending` with `last_error`), never failing the job.',
  tags: ['jobs'],
  auth: 'user',
  params: IdParams,
  responses: { 200: { description: "The job's feedback items", schema: VcsFeedbackList } },
});

/** In the order the API reference lists them. */
export const vcsFeedbackOperations = { getJobVcsFeedback };
