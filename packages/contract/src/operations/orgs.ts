/** Organizations, members and invitations: each operation as data (served by `http/src/orgs/orgRoutes.ts`). */
import { operation } from '../operation.js';
import { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS } from '../paging.js';
import {
  AddMemberBody,
  CreateOrgBody,
  IdParams,
  InvitationList,
  MemberParams,
  Org,
  OrgList,
  OrgMember,
  OrgMemberList,
  PageQuery,
  RenameOrgBody,
  SetMemberRoleBody,
} from '../schemas.js';

const NOT_A_MEMBER = 'A caller who is not a member gets `404 org_not_found`, whether or not the organization exists.';

const INVITATIONS =
  'Invitations are addressed to an email: the caller’s (as verified at sign-in). Someone else’s invitation, an answered one and an unknown id are `404 invitation_not_found`; an organization API token gets `403 org_token_not_allowed` (only a person answers invitations).';

export const createOrg = operation({
  method: 'post',
  path: '/api/orgs',
  operationId: 'createOrg',
  summary: 'Create an organization; the caller becomes its owner',
  description: 'A person’s act: an organization API token gets `403 org_token_not_allowed`.',
  tags: ['orgs'],
  auth: 'user',
  body: CreateOrgBody,
  responses: {
    201: { description: 'The organization', schema: Org },
    403: { description: '`org_token_not_allowed`' },
    409: { description: '`org_name_taken`' },
  },
});

export const listOrgs = operation({
  method: 'get',
  path: '/api/orgs',
  operationId: 'listOrgs',
  summary: "The caller's organizations, with the caller's role, newest first",
  description: PAGED_LIST_DESCRIPTION,
  tags: ['orgs'],
  auth: 'user',
  query: PageQuery,
  responses: { 200: { description: 'A page of organizations', schema: OrgList, headers: PAGED_LIST_HEADERS } },
});

export const getOrg = operation({
  method: 'get',
  path: '/api/orgs/{id}',
  operationId: 'getOrg',
  summary: 'One organization',
  description: NOT_A_MEMBER,
  tags: ['orgs'],
  auth: 'user',
  params: IdParams,
  responses: { 200: { description: 'The organization', schema: Org } },
});

export const renameOrg = operation({
  method: 'patch',
  path: '/api/orgs/{id}',
  operationId: 'renameOrg',
  summary: 'Rename an organization (admins)',
  description: NOT_A_MEMBER,
  tags: ['orgs'],
  auth: 'user',
  params: IdParams,
  body: RenameOrgBody,
  responses: {
    200: { description: 'The organization', schema: Org },
    403: { description: '`insufficient_role`' },
    409: { description: '`org_name_taken`' },
  },
});

export const deleteOrg = operation({
  method: 'delete',
  path: '/api/orgs/{id}',
  operationId: 'deleteOrg',
  summary: 'Delete an organization and every record it owns (owners)',
  description: `Refused with \`409 org_busy\` while a job of the organization is queued or running. ${NOT_A_MEMBER}`,
  tags: ['orgs'],
  auth: 'user',
  params: IdParams,
  responses: {
    204: { description: 'Deleted' },
    403: { description: '`insufficient_role`' },
    409: { description: '`org_busy`' },
  },
});

export const addMember = operation({
  method: 'post',
  path: '/api/orgs/{id}/members',
  operationId: 'addMember',
  summary: 'Invite a member by email (admins; owners for the role owner)',
  description:
    'The membership is `pending`, an invitation: nobody becomes a member by someone else’s act. Whoever signs in with that (verified) email, now or later, sees it in `GET /api/invitations` and accepts or declines it; until then they see nothing of the organization.',
  tags: ['orgs'],
  auth: 'user',
  params: IdParams,
  body: AddMemberBody,
  responses: {
    201: { description: 'The membership', schema: OrgMember },
    403: { description: '`insufficient_role`' },
    409: { description: '`member_exists`' },
  },
});

export const listMembers = operation({
  method: 'get',
  path: '/api/orgs/{id}/members',
  operationId: 'listMembers',
  summary: 'Members of an organization, joined and pending, oldest first',
  description: `${PAGED_LIST_DESCRIPTION} ${NOT_A_MEMBER}`,
  tags: ['orgs'],
  auth: 'user',
  params: IdParams,
  query: PageQuery,
  responses: { 200: { description: 'A page of members', schema: OrgMemberList, headers: PAGED_LIST_HEADERS } },
});

export const setMemberRole = operation({
  method: 'patch',
  path: '/api/orgs/{id}/members/{member_id}',
  operationId: 'setMemberRole',
  summary: "Change a member's role (admins; owners to make or demote an owner)",
  tags: ['orgs'],
  auth: 'user',
  params: MemberParams,
  body: SetMemberRoleBody,
  responses: {
    200: { description: 'The membership', schema: OrgMember },
    403: { description: '`insufficient_role`' },
    409: { description: '`last_owner`: the only owner cannot be demoted' },
  },
});

export const removeMember = operation({
  method: 'delete',
  path: '/api/orgs/{id}/members/{member_id}',
  operationId: 'removeMember',
  summary: 'Remove a member, or leave (your own membership)',
  tags: ['orgs'],
  auth: 'user',
  params: MemberParams,
  responses: {
    204: { description: 'Removed' },
    403: { description: '`insufficient_role`' },
    409: { description: '`last_owner`: the only owner cannot leave or be removed' },
  },
});

export const listInvitations = operation({
  method: 'get',
  path: '/api/invitations',
  operationId: 'listInvitations',
  summary: "The caller's pending invitations to organizations, oldest first",
  description: `${INVITATIONS} Not paged: a person has few.`,
  tags: ['orgs'],
  auth: 'user',
  responses: {
    200: { description: 'The invitations', schema: InvitationList },
    403: { description: '`org_token_not_allowed`' },
  },
});

export const acceptInvitation = operation({
  method: 'post',
  path: '/api/invitations/{id}/accept',
  operationId: 'acceptInvitation',
  summary: 'Accept an invitation: join the organization with the invited role',
  description: INVITATIONS,
  tags: ['orgs'],
  auth: 'user',
  params: IdParams,
  responses: {
    200: { description: 'The organization joined, with the caller’s role', schema: Org },
    403: { description: '`org_token_not_allowed`' },
    404: { description: '`invitation_not_found`' },
  },
});

export const declineInvitation = operation({
  method: 'post',
  path: '/api/invitations/{id}/decline',
  operationId: 'declineInvitation',
  summary: 'Decline an invitation: the pending membership goes',
  description: INVITATIONS,
  tags: ['orgs'],
  auth: 'user',
  params: IdParams,
  responses: {
    204: { description: 'Declined' },
    403: { description: '`org_token_not_allowed`' },
    404: { description: '`invitation_not_found`' },
  },
});

/** In the order the API reference lists them. */
export const orgsOperations = {
  createOrg,
  listOrgs,
  getOrg,
  renameOrg,
  deleteOrg,
  addMember,
  listMembers,
  setMemberRole,
  removeMember,
  listInvitations,
  acceptInvitation,
  declineInvitation,
};
