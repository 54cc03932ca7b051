import type { OrgMemberView, OrgView, TrellisClient, VineyardDetailView as VineyardView } from '@trellis/client';
import { isUuid } from '@trellis/core';
import { CliError } from './errors.js';

/**
 * A vineyard named by id or by name. Names are unique per owner, so a name shared by your own
 * vineyard and an organization's (or two organizations') needs `owner` (`--org`) to choose.
 */
export async function resolveVineyard(
  client: TrellisClient,
  nameOrId: string,
  owner: { orgId?: string } = {},
): Promise<VineyardView> {
  if (isUuid(nameOrId)) return client.getVineyard(nameOrId);
  const matches: string[] = [];
  for await (const vineyard of client.vineyards({ limit: 200, ...owner })) {
    if (vineyard.name === nameOrId) matches.push(vineyard.id);
  }
  const [only] = matches;
  if (only !== undefined && matches.length === 1) return client.getVineyard(only);
  if (matches.length > 1) {
    throw new CliError(
      `${matches.length} vineyards are named "${nameOrId}"; choose with --org or give the vineyard id`,
    );
  }
  throw new CliError(`no vineyard named "${nameOrId}" (\`trellis vineyards list\` shows yours)`);
}

/** An organization of the caller named by id or by name (names are unique, case-insensitively). */
export async function resolveOrg(client: TrellisClient, nameOrId: string): Promise<OrgView> {
  const wanted = nameOrId.toLowerCase();
  if (isUuid(nameOrId)) return client.getOrg(nameOrId);
  const org = (await client.listOrgs()).find((candidate) => candidate.name.toLowerCase() === wanted);
  if (!org) throw new CliError(`you belong to no organization named "${nameOrId}" (\`trellis orgs list\` shows yours)`);
  return org;
}

/**
 * The owner filter of a list for `--org`: `personal` (only your own records) as is, else the id
 * of the organization named by name or id.
 */
export async function resolveOwnerFilter(client: TrellisClient, org: string | undefined): Promise<{ orgId?: string }> {
  if (org === undefined) return {};
  if (org === 'personal') return { orgId: 'personal' };
  return { orgId: (await resolveOrg(client, org)).id };
}

/** A member of an organization named by email (case-insensitively) or by membership id. */
export async function resolveMember(client: TrellisClient, org: OrgView, emailOrId: string): Promise<OrgMemberView> {
  const members = await client.listMembers(org.id);
  const wanted = emailOrId.toLowerCase();
  const member = members.find((candidate) =>
    isUuid(emailOrId) ? candidate.id === wanted : candidate.email.toLowerCase() === wanted,
  );
  if (!member) {
    throw new CliError(`${org.name} has no member ${emailOrId} (\`trellis orgs members list ${org.name}\` shows them)`);
  }
  return member;
}
