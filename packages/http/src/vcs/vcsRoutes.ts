import type { UseCases } from '@trellis/core';
import { defineRoute, type RouteSpec } from '../routing/route.js';
import { ConnectVcsBody, ConnectVcsResponse, NameParams, VcsConnectionRecord } from '@trellis/contract';

/** A vine's repository connection (issue 13): pushes plan it, pull requests plan it speculatively. */
export function vcsRoutes(useCases: UseCases): RouteSpec[] {
  return [
    defineRoute({
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
      handler: async ({ user, params, body }) => ({
        status: 200,
        body: await useCases.vcs.connect(user, params.name, body),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/cli/configurations/{name}/vcs',
      operationId: 'getConfigurationRepository',
      summary: "A vine's repository connection (never its webhook secret)",
      description: '`404 vcs_not_connected` when the vine has none.',
      tags: ['configurations'],
      auth: 'user',
      params: NameParams,
      responses: { 200: { description: 'The connection', schema: VcsConnectionRecord } },
      handler: async ({ user, params }) => ({ status: 200, body: await useCases.vcs.get(user, params.name) }),
    }),
    defineRoute({
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
      handler: async ({ user, params }) => {
        await useCases.vcs.disconnect(user, params.name);
        return { status: 204 };
      },
    }),
  ];
}
