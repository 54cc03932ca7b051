import type { UseCases } from '@trellis/core';
import {
  CreatePolicyBody,
  IdParams,
  ListPoliciesQuery,
  PolicyDetailRecord,
  PolicyList,
  PolicyRecord,
  UpdatePolicyBody,
} from '@trellis/contract';
import { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS, pagedList } from '../routing/pagedList.js';
import { defineRoute, type RouteSpec } from '../routing/route.js';

/** Policies (issue 15, docs/policies.md). */
export function policyRoutes(useCases: UseCases): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/policies',
      operationId: 'createPolicy',
      summary: 'Create a policy (a Rego module the agents check every plan with)',
      description:
        "Personal, or an organization's with `org_id` (needs the admin role). It applies to the configurations of " +
        '`vineyard_id`, else to every configuration of the owner. The module is compiled with OPA when the server ' +
        'has the `opa` binary; a module that does not compile, or declares no `deny` rule, is refused with ' +
        "`422 policy_invalid` and the engine's message.",
      tags: ['policies'],
      auth: 'user',
      body: CreatePolicyBody,
      responses: { 201: { description: 'The policy, at version 1', schema: PolicyRecord } },
      handler: async ({ user, body }) => ({ status: 201, body: await useCases.policies.create(user, body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/policies',
      operationId: 'listPolicies',
      summary: "Your policies and your organizations', newest first",
      description: PAGED_LIST_DESCRIPTION,
      tags: ['policies'],
      auth: 'user',
      query: ListPoliciesQuery,
      responses: { 200: { description: 'A page of policies', schema: PolicyList, headers: PAGED_LIST_HEADERS } },
      handler: async ({ req, user, query }) => pagedList(req, 'policies', await useCases.policies.list(user, query)),
    }),
    defineRoute({
      method: 'get',
      path: '/api/policies/{id}',
      operationId: 'getPolicy',
      summary: 'A policy, with every version',
      tags: ['policies'],
      auth: 'user',
      params: IdParams,
      responses: { 200: { description: 'The policy and its versions, oldest first', schema: PolicyDetailRecord } },
      handler: async ({ user, params }) => ({ status: 200, body: await useCases.policies.get(user, params.id) }),
    }),
    defineRoute({
      method: 'put',
      path: '/api/policies/{id}',
      operationId: 'updatePolicy',
      summary: 'Change a policy: a new version',
      description:
        'At least one of `name`, `enforcement` and `module`. The policy gets a new version; the old ones are kept, ' +
        'and a plan keeps the results of the version it was checked with.',
      tags: ['policies'],
      auth: 'user',
      params: IdParams,
      body: UpdatePolicyBody,
      responses: { 200: { description: 'The policy at its new version', schema: PolicyRecord } },
      handler: async ({ user, params, body }) => ({
        status: 200,
        body: await useCases.policies.update(user, params.id, body),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/policies/{id}',
      operationId: 'deletePolicy',
      summary: 'Delete a policy and its versions',
      description: 'Plans already checked keep their results.',
      tags: ['policies'],
      auth: 'user',
      params: IdParams,
      responses: { 204: { description: 'Deleted: no further plan is checked with it' } },
      handler: async ({ user, params }) => {
        await useCases.policies.delete(user, params.id);
        return { status: 204 };
      },
    }),
  ];
}
