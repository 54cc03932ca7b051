/** Editing and deleting vineyards and configurations: each operation as data (served by `http/src/routes/vineEditRoutes.ts`). */
import { operation } from '../operation.js';
import {
  DeleteConfigurationQuery,
  DeletedConfiguration,
  EditConfigurationBody,
  IdParams,
  NameParams,
  UpdateVineyardBody,
  VineDetail,
  Vineyard,
} from '../schemas.js';

export const updateConfiguration = operation({
  method: 'patch',
  path: '/api/cli/configurations/{name}',
  operationId: 'updateConfiguration',
  summary:
    'Change a vine (by id or name): its name, source, variables, engine, cloud identity, tags, execution mode and settings',
  description:
    'Fields left out are unchanged; each one given is checked as at creation (400 `validation_failed` names every bad field). `variables` changes only the names it holds (null unsets one). `tags` replaces all of its tags (the rule of creation; `[]` removes them). A change of source, variables, engine or cloud identity gives the vine a new config hash: a plan made before it is refused with 409 `plan_stale`. `execution_mode` (`remote` or `local`) says where `tofu plan`/`tofu apply` of the stock CLI run (docs/terraform-cloud.md); the same setting as `execution-mode` of a workspace in the Terraform Cloud API. Settings: `drift_detection: {interval_minutes}` (60 to 10080) or null; `triggers: {after: [vine ids]}` of the same owner (409 `trigger_cycle` if they would form a cycle); `approval: {required, separate_approver?}` or null (a DEPLOY then needs an approved plan). Audited as `vine.update` (with `execution_mode` and `previous_execution_mode` when it changes). In an organization: admins.',
  tags: ['configurations'],
  auth: 'user',
  params: NameParams,
  body: EditConfigurationBody,
  bodyLimit: 8 * 1024 * 1024,
  responses: { 200: { description: 'The vine', schema: VineDetail } },
});

export const deleteConfiguration = operation({
  method: 'delete',
  path: '/api/cli/configurations/{name}',
  operationId: 'deleteConfiguration',
  summary: 'Delete a vine (by id or name)',
  description:
    'Refused with 409 `configuration_busy` while one of its jobs is queued or running, with 409 `configuration_connected` while it is connected to a repository (disconnect it first: that removes the webhook), and with 409 `vine_has_resources` while its state manages resources or it is DEPLOYED: destroy it first, or pass `force=true` to leave them running, unmanaged. Its jobs keep their history; its state versions are kept for `TRELLIS_DELETED_VINE_RETENTION_DAYS`, then purged. Its name is free at once, and configurations that ran after it no longer name it. Audited as `vine.delete`. In an organization: admins.',
  tags: ['configurations'],
  auth: 'user',
  params: NameParams,
  query: DeleteConfigurationQuery,
  responses: {
    200: { description: 'What was deleted, and until when its state is kept', schema: DeletedConfiguration },
    409: { description: '`configuration_busy`, `configuration_connected` or `vine_has_resources`' },
  },
});

export const updateVineyard = operation({
  method: 'patch',
  path: '/api/cli/vineyards/{id}',
  operationId: 'updateVineyard',
  summary: 'Rename a vineyard',
  description:
    '409 `vineyard_name_taken` if the owner has a vineyard of that name. Audited as `vineyard.update`. In an organization: admins.',
  tags: ['vineyards'],
  auth: 'user',
  params: IdParams,
  body: UpdateVineyardBody,
  responses: { 200: { description: 'The vineyard', schema: Vineyard } },
});

export const deleteVineyard = operation({
  method: 'delete',
  path: '/api/cli/vineyards/{id}',
  operationId: 'deleteVineyard',
  summary: 'Delete an empty vineyard',
  description:
    'Refused with 409 `vineyard_not_empty` while it holds configurations. Its name is free at once; jobs of its deleted configurations keep their history. Audited as `vineyard.delete`. In an organization: admins.',
  tags: ['vineyards'],
  auth: 'user',
  params: IdParams,
  responses: { 204: { description: 'Deleted' }, 409: { description: '`vineyard_not_empty`' } },
});

/** In the order the API reference lists them. */
export const vineEditsOperations = { updateConfiguration, deleteConfiguration, updateVineyard, deleteVineyard };
