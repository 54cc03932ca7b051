import type { UseCases } from '@trellis/core';
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
} from '@trellis/contract';
import { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS, pagedList } from '../routing/pagedList.js';
import { defineRoute, type RouteSpec } from '../routing/route.js';

const NOT_A_MEMBER = 'A caller who is not a member gets `404 org_not_found`, whether or not the organization exists.';
const INVITATIONS =
  'Invitations are addressed to an email: the caller’s (as verified at sign-in). Someone else’s invitation, an answered one and an unknown id are `404 invitation_not_found`; an organization API token gets `403 org_token_not_allowed` (only a person answers invitations).';

/** Organizations and their members (issue 12); core checks every role. */
export function orgRoutes(useCases: UseCases): RouteSpec[] {
  return [
    defineRoute({
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
      handler: async ({ user, body }) => ({ status: 201, body: await useCases.orgs.create(user, body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/orgs',
      operationId: 'listOrgs',
      summary: "The caller's organizations, with the caller's role, newest first",
      description: PAGED_LIST_DESCRIPTION,
      tags: ['orgs'],
      auth: 'user',
      query: PageQuery,
      responses: { 200: { description: 'A page of organizations', schema: OrgList, headers: PAGED_LIST_HEADERS } },
      handler: async ({ req, user, query }) => pagedList(req, 'orgs', await useCases.orgs.list(user, query)),
    }),
    defineRoute({
      method: 'get',
      path: '/api/orgs/{id}',
      operationId: 'getOrg',
      summary: 'One organization',
      description: NOT_A_MEMBER,
      tags: ['orgs'],
      auth: 'user',
      params: IdParams,
      responses: { 200: { description: 'The organization', schema: Org } },
      handler: async ({ user, params }) => ({ status: 200, body: await useCases.orgs.get(user, params.id) }),
    }),
    defineRoute({
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
      handler: async ({ user, params, body }) => ({
        status: 200,
        body: await useCases.orgs.rename(user, params.id, body),
      }),
    }),
    defineRoute({
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
      handler: async ({ user, params }) => {
        await useCases.orgs.delete(user, params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
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
      handler: async ({ user, params, body }) => ({
        status: 201,
        body: await useCases.orgs.addMember(user, params.id, body),
      }),
    }),
    defineRoute({
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
      handler: async ({ req, user, params, query }) =>
        pagedList(req, 'members', await useCases.orgs.listMembers(user, params.id, query)),
    }),
    defineRoute({
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
      handler: async ({ user, params, body }) => ({
        status: 200,
        body: await useCases.orgs.setMemberRole(user, params.id, params.member_id, body),
      }),
    }),
    defineRoute({
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
      handler: async ({ user, params }) => {
        await useCases.orgs.removeMember(user, params.id, params.member_id);
        return { status: 204 };
      },
    }),
    defineRoute({
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
      handler: async ({ user }) => ({ status: 200, body: { invitations: await useCases.invitations.list(user) } }),
    }),
    defineRoute({
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
      handler: async ({ user, params }) => ({ status: 200, body: await useCases.invitations.accept(user, params.id) }),
    }),
    defineRoute({
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
      handler: async ({ user, params }) => {
        await useCases.invitations.decline(user, params.id);
        return { status: 204 };
      },
    }),
  ];
}
