import {
  authorizeIn,
  InsufficientRoleError,
  LEAST_ROLE,
  NotFoundError,
  ORG_ROLES,
  type OrgAction,
  type OrgRole,
  ownerScope,
} from '@trellis/core';
import { describe, expect, it } from 'vitest';

const ORG = '00000000-0000-4000-8000-0000000000aa';
const USER = '00000000-0000-4000-8000-0000000000bb';

/** The table, written out on its own so a change of `LEAST_ROLE` has to be deliberate. */
const ALLOWED: Record<OrgRole, readonly OrgAction[]> = {
  viewer: ['read', 'registry.read'],
  operator: ['read', 'jobs.run', 'plans.approve', 'state.use', 'registry.read', 'registry.publish'],
  admin: [
    'read',
    'jobs.run',
    'plans.approve',
    'plans.override',
    'state.use',
    'state.rollback',
    'state.force_unlock',
    'vineyards.manage',
    'agents.manage',
    'members.manage',
    'tokens.manage',
    'notifications.manage',
    'policies.manage',
    'audit.read',
    'registry.read',
    'registry.publish',
    'registry.manage',
    'org.rename',
  ],
  owner: Object.keys(LEAST_ROLE) as OrgAction[],
};

const ACTIONS = Object.keys(LEAST_ROLE) as OrgAction[];
const CASES = ORG_ROLES.flatMap((role) => ACTIONS.map((action) => [role, action] as const));

describe('the role table (every role × every action)', () => {
  it('covers twenty actions', () => {
    expect(ACTIONS).toHaveLength(20);
  });

  it.each(CASES)('%s → %s', (role, action) => {
    const actor = { userId: USER, email: 'a@example.test' };
    const run = () => authorizeIn(actor, [{ org_id: ORG, role }], ORG, action, 'vineyard_not_found');
    if (ALLOWED[role].includes(action)) {
      expect(run()).toEqual(ownerScope(ORG, USER));
    } else {
      let error: unknown;
      try {
        run();
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(InsufficientRoleError);
      expect(error).toMatchObject({ code: 'insufficient_role', requiredRole: LEAST_ROLE[action], role });
    }
  });

  it.each(ACTIONS)('a non-member gets 404 with the resource code for %s', (action) => {
    const actor = { userId: USER, email: 'a@example.test' };
    expect(() => authorizeIn(actor, [], ORG, action, 'job_not_found')).toThrowError(NotFoundError);
    try {
      authorizeIn(actor, [], ORG, action, 'job_not_found');
    } catch (error) {
      expect((error as NotFoundError).code).toBe('job_not_found');
    }
  });

  it.each(ACTIONS)('a person may %s on their own records; an organization token may not', (action) => {
    const person = { userId: USER, email: 'a@example.test' };
    expect(authorizeIn(person, [], USER, action, 'job_not_found')).toEqual(ownerScope(USER));
    const orgToken = { ...person, apiToken: { id: 't', orgId: ORG, role: 'owner' as const } };
    expect(() => authorizeIn(orgToken, [{ org_id: ORG, role: 'owner' }], USER, action, 'job_not_found')).toThrowError(
      NotFoundError,
    );
  });
});
