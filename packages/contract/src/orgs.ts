/** Organizations and their members (issue 12). */
import { ORG_ROLES } from '@trellis/core';
import { z } from 'zod';
import { PageQuery, recordName } from './common.js';

const uuid = z.uuid();
const isoTime = z.string().describe('ISO-8601 UTC');

/** `?org_id=` of the list endpoints: one organization's records, or `personal` (the caller's own). */
export const OrgFilter = z
  .union([z.uuid(), z.literal('personal')])
  .optional()
  .describe("only this organization's records, or `personal` for the caller's own; absent: both");
export const OrgFilterQuery = PageQuery.extend({ org_id: OrgFilter });

export const OrgRoleSchema = z.enum(ORG_ROLES);
export const Org = z.object({
  id: uuid,
  name: z.string(),
  role: OrgRoleSchema.describe("the caller's role"),
  created_at: isoTime,
});
export const OrgList = z.object({ orgs: z.array(Org) });
export const CreateOrgBody = z.object({ name: recordName });
export const RenameOrgBody = z.object({ name: recordName });

export const OrgMember = z.object({
  id: uuid.describe('the membership id (what `/members/{member_id}` names)'),
  org_id: uuid,
  email: z.string(),
  user_id: uuid.nullable().describe('null while pending'),
  role: OrgRoleSchema,
  status: z
    .enum(['active', 'pending'])
    .describe('pending: invited, not accepted yet (the person sees nothing of the organization until they accept)'),
  created_at: isoTime,
  joined_at: isoTime.nullable(),
  invited_by: uuid.nullable().describe('the user id of the member who sent the invitation; null for the creator'),
});
export const OrgMemberList = z.object({ members: z.array(OrgMember) });
export const AddMemberBody = z.object({ email: z.string().min(3).max(320), role: OrgRoleSchema });
export const SetMemberRoleBody = z.object({ role: OrgRoleSchema });
export const MemberParams = z.object({ id: uuid, member_id: uuid });

/** An invitation as the invited person sees it (`GET /api/invitations`). */
export const Invitation = z.object({
  id: uuid.describe('the invitation (the pending membership): what `/api/invitations/{id}/accept` names'),
  org_id: uuid,
  org_name: z.string(),
  role: OrgRoleSchema.describe('the role the person gets on accepting'),
  email: z.string().describe('the email it was sent to: the caller’s'),
  invited_by: z.string().nullable().describe('the email of the member who sent it; null when unknown'),
  created_at: isoTime,
});
export const InvitationList = z.object({ invitations: z.array(Invitation) });
