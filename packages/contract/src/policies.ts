/** Policies (issue 15): `POST/GET /api/policies`, `GET/PUT/DELETE /api/policies/{id}`. */
import { MAX_POLICY_MODULE_BYTES, POLICY_ENFORCEMENTS } from '@trellis/core';
import { z } from 'zod';
import { isoTime, PageQuery, recordName, uuid } from './common.js';
import { OrgFilter } from './orgs.js';

export const PolicyEnforcementSchema = z
  .enum(POLICY_ENFORCEMENTS)
  .describe('`mandatory`: a failure blocks the DEPLOY of the plan unless overridden; `advisory`: a warning');

const PolicyModule = z
  .string()
  .describe(
    `Rego (v1) source with a \`deny\` rule yielding messages, in any package; at most ${MAX_POLICY_MODULE_BYTES} bytes (\`413 policy_too_large\`). Checked with OPA when saved (\`422 policy_invalid\` with the engine's message; \`429 policy_checks_busy\` when the server is checking as many as it may at once) if the server has the \`opa\` binary, after the caller's role is checked`,
  );

export const CreatePolicyBody = z.object({
  name: recordName,
  enforcement: PolicyEnforcementSchema,
  module: PolicyModule,
  vineyard_id: z.uuid().optional().describe("only this vineyard's configurations (absent: every one of the owner)"),
  org_id: z.uuid().optional().describe("an organization's policy (needs its admin role); absent: yours"),
});

export const UpdatePolicyBody = z.object({
  name: recordName.optional(),
  enforcement: PolicyEnforcementSchema.optional(),
  module: PolicyModule.optional(),
});

export const ListPoliciesQuery = PageQuery.extend({ org_id: OrgFilter });

export const PolicyRecord = z.object({
  id: uuid,
  name: z.string(),
  enforcement: z.enum(POLICY_ENFORCEMENTS),
  vineyard_id: uuid.nullable(),
  org_id: uuid.nullable(),
  version: z.number().int().describe('the current version; each PUT adds one'),
  module: z.string().describe('the Rego source of the current version'),
  created_at: isoTime,
  updated_at: isoTime,
});

export const PolicyVersionRecord = z.object({
  version: z.number().int(),
  name: z.string(),
  enforcement: z.enum(POLICY_ENFORCEMENTS),
  module: z.string(),
  created_by: uuid,
  created_at: isoTime,
});

export const PolicyDetailRecord = PolicyRecord.extend({
  versions: z.array(PolicyVersionRecord).describe('every version, oldest first'),
});

export const PolicyList = z.object({ policies: z.array(PolicyRecord) });

/** One policy's result on a plan (`execution_metadata.policy_results[]`). */
export const PolicyResultRecord = z.object({
  policy_id: z.string().describe('the id of the policy (a UUID)'),
  version: z.number().int().describe('the version the plan was checked with'),
  name: z.string(),
  enforcement: z.enum(POLICY_ENFORCEMENTS),
  passed: z.boolean(),
  messages: z.array(z.string()).describe("the `deny` messages (or the engine's error); empty when passed"),
});
