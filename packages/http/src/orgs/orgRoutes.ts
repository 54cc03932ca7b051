import type { UseCases } from '@trellis/core';
import { pagedList } from '../routing/pagedList.js';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** Organizations and their members (issue 12); core checks every role. */
export function orgRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.createOrg, async ({ user, body }) => ({
      status: 201,
      body: await useCases.orgs.create(user, body),
    })),
    implement(operations.listOrgs, async ({ req, user, query }) =>
      pagedList(req, 'orgs', await useCases.orgs.list(user, query)),
    ),
    implement(operations.getOrg, async ({ user, params }) => ({
      status: 200,
      body: await useCases.orgs.get(user, params.id),
    })),
    implement(operations.renameOrg, async ({ user, params, body }) => ({
      status: 200,
      body: await useCases.orgs.rename(user, params.id, body),
    })),
    implement(operations.deleteOrg, async ({ user, params }) => {
      await useCases.orgs.delete(user, params.id);
      return { status: 204 };
    }),
    implement(operations.addMember, async ({ user, params, body }) => ({
      status: 201,
      body: await useCases.orgs.addMember(user, params.id, body),
    })),
    implement(operations.listMembers, async ({ req, user, params, query }) =>
      pagedList(req, 'members', await useCases.orgs.listMembers(user, params.id, query)),
    ),
    implement(operations.setMemberRole, async ({ user, params, body }) => ({
      status: 200,
      body: await useCases.orgs.setMemberRole(user, params.id, params.member_id, body),
    })),
    implement(operations.removeMember, async ({ user, params }) => {
      await useCases.orgs.removeMember(user, params.id, params.member_id);
      return { status: 204 };
    }),
    implement(operations.listInvitations, async ({ user }) => ({
      status: 200,
      body: { invitations: await useCases.invitations.list(user) },
    })),
    implement(operations.acceptInvitation, async ({ user, params }) => ({
      status: 200,
      body: await useCases.invitations.accept(user, params.id),
    })),
    implement(operations.declineInvitation, async ({ user, params }) => {
      await useCases.invitations.decline(user, params.id);
      return { status: 204 };
    }),
  ];
}
