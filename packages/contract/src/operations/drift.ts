/** Drift checks: each operation as data (served by `http/src/drift/driftRoutes.ts`). */
import { operation } from '../operation.js';
import { Job, NameParams } from '../schemas.js';

export const checkConfigurationDrift = operation({
  method: 'post',
  path: '/api/cli/configurations/{name}/drift-check',
  operationId: 'checkConfigurationDrift',
  summary: 'Queue a drift check of a vine now (by id or name)',
  description:
    'A speculative PLAN job with `trigger: {type:"drift"}`, on a DEPLOYED vine with no queued or running job (409 `configuration_not_deployed` or `configuration_busy`). Its result lands on the vine as `drift`; it can never be deployed (409 `plan_speculative`).',
  tags: ['configurations'],
  auth: 'user',
  params: NameParams,
  responses: { 202: { description: 'The queued drift check', schema: Job } },
});

/** In the order the API reference lists them. */
export const driftOperations = { checkConfigurationDrift };
