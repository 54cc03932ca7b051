/** A configuration's repository connection: each operation as data (served by `http/src/vcs/vcsRoutes.ts`). */
import { operation } from '../operation.js';
import { ConnectVcsBody, ConnectVcsResponse, NameParams, VcsConnectionRecord } from '../schemas.js';

export const connectConfigurationRepository = operation({
  method: 'put',
  path: '/api/cli/configurations/{name}/vcs',
  operationId: 'connectConfigurationRepository',
  summary: 'Connect a vine (by id or name) to a repository, or change its connection',
  description:
    'The vine\'s source becomes the repository (`git`, the branch as `ref`). `webhook: "auto"` (default) creates the webhook at the provider with the token of your sign-in there (`409 provider_not_linked` without one, `409 vcs_permission_missing` when the token may not create hooks: grant it, or use `manual`); reconnecting replaces the hook. `webhook: "manual"`: the answer carries `webhook_secret` once, to paste at the provider with `webhook_url`. `503 provider_not_configured` when the server has no such provider. In an organization: admins. An organization API token has no sign-in of its own: `auto` is `403 org_token_not_allowed` for it (use `manual`).',
  tags: ['configurations'],
  auth: 'user',
  params: NameParams,
  body: ConnectVcsBody,
  responses: { 200: { description: 'The connection', schema: ConnectVcsResponse } },
});

export const getConfigurationRepository = operation({
  method: 'get',
  path: '/api/cli/configurations/{name}/vcs',
  operationId: 'getConfigurationRepository',
  summary: "A vine's repository connection (never its webhook secret)",
  description: '`404 vcs_not_connected` when the vine has none.',
  tags: ['configurations'],
  auth: 'user',
  params: NameParams,
  responses: { 200: { description: 'The connection', schema: VcsConnectionRecord } },
});

export const disconnectConfigurationRepository = operation({
  method: 'delete',
  path: '/api/cli/configurations/{name}/vcs',
  operationId: 'disconnectConfigurationRepository',
  summary: 'Disconnect a vine from its repository',
  description:
    "Deletes the webhook Trellis created (if the provider refuses, the connection goes anyway and the audit entry says so: delete the hook at the provider). The vine's source stays as it is. In an organization: admins.",
  tags: ['configurations'],
  auth: 'user',
  params: NameParams,
  responses: { 204: { description: 'Disconnected' } },
});

/** In the order the API reference lists them. */
export const vcsOperations = {
  connectConfigurationRepository,
  getConfigurationRepository,
  disconnectConfigurationRepository,
};
