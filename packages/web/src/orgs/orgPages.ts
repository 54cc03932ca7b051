import { ORG_ROLES, type OrgRole, roleAllows } from '@trellis/core';
import { when } from '../format.js';
import { type Html, html } from '../html.js';
import type { Page } from '../layout.js';
import type { OrgEntry } from '../standing.js';
import type { InvitationView } from '@trellis/core';

/** A member as the organization page shows it (the API's member view). */
export interface MemberEntry {
  id: string;
  email: string;
  user_id: string | null;
  role: OrgRole;
  status: 'active' | 'pending';
  joined_at: string | null;
}

/** What a failed form said, shown above the form, and the HTTP status of the page. */
export interface FormProblem {
  status: number;
  message: string;
  /** The problem code, when the page says more for it (`org_busy`: where the busy jobs are). */
  code?: string;
}

/** The person's organizations with their role, their pending invitations, and the form that creates one. */
export function orgsPage(input: {
  base: string;
  orgs: readonly (OrgEntry & { created_at: string })[];
  invitations: readonly InvitationView[];
  now: Date;
  problem?: FormProblem | null;
  name?: string;
}): Page {
  const { base, now, problem } = input;
  const orgs = [...input.orgs].sort((a, b) => a.name.localeCompare(b.name));
  return {
    ...(problem ? { status: problem.status } : {}),
    title: 'Organizations',
    section: 'orgs',
    body: html`<h1>Organizations</h1>
${invitationsCard(base, input.invitations, now)}
<section class="card">
${
  orgs.length === 0
    ? html`<p class="muted">You belong to no organization. An organization shares vineyards, agents and the right to
  deploy among its members, each with a role.</p>`
    : html`<div class="table-scroll" role="region" aria-label="Organizations" tabindex="0"><table class="orgs">
  <thead><tr><th>Organization</th><th>Your role</th><th>Created</th></tr></thead>
  <tbody>
  ${orgs.map(
    (org) => html`<tr data-org="${org.name}">
    <td><a href="${base}/orgs/${org.id}">${org.name}</a></td>
    <td>${roleBadge(org.role)}</td>
    <td>${when(org.created_at, now)}</td>
  </tr>`,
  )}
  </tbody>
</table></div>`
}
</section>
<section class="card narrow">
  <h2>Create an organization</h2>
  ${problemBox(problem)}
  <form method="post" action="${base}/orgs" class="inline-form" data-create-org>
    <label for="org-name">Name</label>
    <input id="org-name" name="name" required maxlength="100" value="${input.name ?? ''}" autocomplete="off">
    <button type="submit" class="button primary">Create organization</button>
  </form>
  <p class="muted small">You become its owner. Names are unique on this server.</p>
</section>`,
  };
}

/**
 * The invitations waiting for the person (issue 23): accepting joins the organization with the role
 * offered; declining removes the invitation. Nothing of an organization shows before that.
 */
function invitationsCard(base: string, invitations: readonly InvitationView[], now: Date): Html | string {
  if (invitations.length === 0) return '';
  return html`<section class="card" data-invitations>
  <h2>Invitations</h2>
  <div class="table-scroll" role="region" aria-label="Invitations" tabindex="0"><table class="invitations">
    <thead><tr><th>Organization</th><th>Role</th><th>Invited by</th><th>Sent</th><th></th></tr></thead>
    <tbody>
    ${invitations.map(
      (invitation) => html`<tr data-invitation="${invitation.org_name}">
      <td>${invitation.org_name}</td>
      <td>${roleBadge(invitation.role)}</td>
      <td>${invitation.invited_by ?? html`<span class="muted">—</span>`}</td>
      <td>${when(invitation.created_at, now)}</td>
      <td>
        <form method="post" action="${base}/orgs/invitations/${invitation.id}/accept" class="inline"><button type="submit" class="button primary" data-accept>Accept</button></form>
        <form method="post" action="${base}/orgs/invitations/${invitation.id}/decline" class="inline"><button type="submit" class="button" data-decline>Decline</button></form>
      </td>
    </tr>`,
    )}
    </tbody>
  </table></div>
  <p class="muted small">You become a member, with the role shown, only when you accept; until then you see nothing of
  the organization.</p>
</section>`;
}

/**
 * One organization: its members for everyone in it, and for those whose role manages members the
 * forms that add them, change their role and remove them (owners only for owners); the rename form
 * for admins, the delete form for owners, and for every member the button that leaves.
 */
export function orgPage(input: {
  base: string;
  org: OrgEntry & { created_at: string };
  members: readonly MemberEntry[];
  /** The signed-in person, to mark their own row. */
  userId: string;
  now: Date;
  problem?: FormProblem | null;
}): Page {
  const { base, org, members, userId, now, problem } = input;
  const manages = roleAllows(org.role, 'members.manage');
  const assignable = ORG_ROLES.filter((role) => role !== 'owner' || roleAllows(org.role, 'owners.manage'));
  const mayChange = (member: MemberEntry) =>
    manages && (member.role !== 'owner' || roleAllows(org.role, 'owners.manage'));
  const filter = `org_id=${encodeURIComponent(org.id)}`;
  return {
    ...(problem ? { status: problem.status } : {}),
    title: org.name,
    section: 'orgs',
    body: html`<p class="breadcrumbs"><a href="${base}/orgs">Organizations</a> /</p>
<div class="title-row">
  <h1>${org.name}</h1>
  <span data-my-role="${org.role}">your role: ${roleBadge(org.role)}</span>
</div>
<p class="muted">Created ${when(org.created_at, now)} · <code>${org.id}</code></p>
<p class="actions">
  <a class="button" href="${base}/vineyards?${filter}">Vineyards</a>
  <a class="button" href="${base}/jobs?${filter}">Jobs</a>
  <a class="button" href="${base}/workers?${filter}">Workers</a>
</p>
${problemBox(problem, problem?.code === 'org_busy' ? html` <a href="${base}/jobs?${filter}&amp;status=QUEUED" data-busy-jobs>Queued jobs</a> · <a href="${base}/jobs?${filter}&amp;status=PROCESSING">running jobs</a>` : '')}
<section class="card">
  <h2>Members</h2>
  <div class="table-scroll" role="region" aria-label="Members" tabindex="0"><table class="members">
    <thead><tr><th>Email</th><th>Role</th><th>Status</th><th>Joined</th>${manages ? html`<th>Manage</th>` : ''}</tr></thead>
    <tbody>
    ${members.map(
      (member) => html`<tr data-member="${member.email}">
      <td>${member.email}${member.user_id === userId ? html` <span class="muted small">(you)</span>` : ''}</td>
      <td data-role>${roleBadge(member.role)}</td>
      <td>${member.status === 'pending' ? html`<span class="muted" title="Invited; a member once they accept">pending</span>` : 'active'}</td>
      <td>${member.joined_at ? when(member.joined_at, now) : html`<span class="muted">—</span>`}</td>
      ${manages ? html`<td>${mayChange(member) ? memberForms(base, org.id, member, assignable) : html`<span class="muted small">owners only</span>`}</td>` : ''}
    </tr>`,
    )}
    </tbody>
  </table></div>
  ${
    manages
      ? ''
      : html`<p class="muted small" data-read-only>You can see this organization's members and records. Its admins and owners
  manage members.</p>`
  }
</section>
${
  manages
    ? html`<section class="card narrow">
  <h2>Invite a member</h2>
  <form method="post" action="${base}/orgs/${org.id}/members" class="inline-form" data-add-member>
    <label for="member-email">Email</label>
    <input id="member-email" name="email" type="email" required autocomplete="off">
    <label for="member-role">Role</label>
    ${roleSelect('member-role', assignable, 'viewer')}
    <button type="submit" class="button primary">Send invitation</button>
  </form>
  <p class="muted small">They become a member when they accept the invitation, on their Organizations page or with
  <code>trellis orgs invitations accept</code>, now or after their first sign-in with this email.
  Viewers read; operators also run and cancel jobs; admins also manage vineyards, agents and members;
  owners also manage owners and delete the organization.</p>
</section>`
    : ''
}
${settings(base, org, members, userId)}`,
  };
}

/** Rename (admins), leave (every member but the last owner) and delete (owners). */
function settings(base: string, org: OrgEntry, members: readonly MemberEntry[], userId: string): Html {
  const path = `${base}/orgs/${org.id}`;
  const mine = members.find((member) => member.user_id === userId);
  const joinedOwners = members.filter((member) => member.role === 'owner' && member.status === 'active').length;
  const lastOwner = mine?.role === 'owner' && joinedOwners <= 1;
  return html`${
    roleAllows(org.role, 'org.rename')
      ? html`<section class="card narrow">
  <h2>Rename</h2>
  <form method="post" action="${path}/rename" class="inline-form" data-rename-org>
    <label for="org-new-name">New name</label>
    <input id="org-new-name" name="name" required maxlength="100" value="${org.name}" autocomplete="off">
    <button type="submit" class="button">Rename</button>
  </form>
  <p class="muted small">Its records, members and tokens stay. Names are unique on this server.</p>
</section>`
      : ''
  }
${
  mine
    ? html`<section class="card narrow">
  <h2>Leave</h2>
  ${
    lastOwner
      ? html`<p class="muted small" data-last-owner>You are its last owner, so you cannot leave: make another member an owner first${roleAllows(org.role, 'org.delete') ? ', or delete the organization' : ''}.</p>`
      : html`<form method="post" action="${path}/members/${mine.id}/remove" class="inline-form" data-leave-org>
    <button type="submit" class="button">Leave ${org.name}</button>
  </form>
  <p class="muted small">You lose access to its records at once; a member who manages members can add you again.</p>`
  }
</section>`
    : ''
}
${
  roleAllows(org.role, 'org.delete')
    ? html`<section class="card narrow">
  <h2>Delete this organization</h2>
  <p class="small">Its vineyards, configurations, jobs, logs, agents, API tokens, notifications, policies, repository
  connections, invitations, plan files and state versions are deleted with it; the resources they deployed stay in your clouds. Refused while one of its jobs is queued or running.</p>
  <form method="post" action="${path}/delete" class="inline-form" data-delete-org>
    <label for="org-delete-confirm">Type <strong>${org.name}</strong> to confirm</label>
    <input id="org-delete-confirm" name="confirm" required autocomplete="off">
    <button type="submit" class="button danger">Delete organization</button>
  </form>
</section>`
    : ''
}`;
}

function memberForms(base: string, orgId: string, member: MemberEntry, assignable: readonly OrgRole[]): Html {
  const path = `${base}/orgs/${orgId}/members/${member.id}`;
  return html`<form method="post" action="${path}/role" class="inline-form" data-set-role>
    <label class="visually-hidden" for="role-${member.id}">Role of ${member.email}</label>
    ${roleSelect(`role-${member.id}`, assignable, member.role)}
    <button type="submit" class="button">Change role</button>
  </form>
  <form method="post" action="${path}/remove" class="inline-form" data-remove-member>
    <button type="submit" class="button danger">Remove</button>
  </form>`;
}

function roleSelect(id: string, roles: readonly OrgRole[], selected: OrgRole): Html {
  return html`<select id="${id}" name="role">${roles.map(
    (role) => html`<option value="${role}"${role === selected ? html` selected` : ''}>${role}</option>`,
  )}</select>`;
}

function roleBadge(role: OrgRole): Html {
  return html`<span class="badge tone-neutral" data-role-badge>${role}</span>`;
}

function problemBox(problem: FormProblem | null | undefined, more: Html | string = ''): Html | string {
  return problem ? html`<p class="error" role="alert" data-form-error>${problem.message}${more}</p>` : '';
}
