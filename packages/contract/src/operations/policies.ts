/** Policies (OPA) and their versions: each operation as data (served by `http/src/policies/policyRoutes.ts`). */
import { operation } from '../operation.js';
import { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS } from '../paging.js';
import {
  CreatePolicyBody,
  IdParams,
  ListPoliciesQuery,
  PolicyDetailRecord,
  PolicyList,
  PolicyRecord,
  UpdatePolicyBody,
} from '../schemas.js';

export const createPolicy = operation({
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
});

export const listPolicies = operation({
  method: 'get',
  path: '/api/policies',
  operationId: 'listPolicies',
  summary: "Your policies and your organizations', newest first",
  description: PAGED_LIST_DESCRIPTION,
  tags: ['policies'],
  auth: 'user',
  query: ListPoliciesQuery,
  responses: { 200: { description: 'A page of policies', schema: PolicyList, headers: PAGED_LIST_HEADERS } },
});

export const getPolicy = operation({
  method: 'get',
  path: '/api/policies/{id}',
  operationId: 'getPolicy',
  summary: 'A policy, with every version',
  tags: ['policies'],
  auth: 'user',
  params: IdParams,
  responses: { 200: { description: 'The policy and its versions, oldest first', schema: PolicyDetailRecord } },
});

export const updatePolicy = operation({
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
});

export const deletePolicy = operation({
  method: 'delete',
  path: '/api/policies/{id}',
  operationId: 'deletePolicy',
  summary: 'Delete a policy and its versions',
  description: 'Plans already checked keep their results.',
  tags: ['policies'],
  auth: 'user',
  params: IdParams,
  responses: { 204: { description: 'Deleted: no further plan is checked with it' } },
});

/** In the order the API reference lists them. */
export const policiesOperations = { createPolicy, listPolicies, getPolicy, updatePolicy, deletePolicy };
