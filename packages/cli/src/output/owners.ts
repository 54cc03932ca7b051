import type { TrellisClient } from '@trellis/client';

/**
 * The OWNER column of a list: an organization's name for its records, `personal` for yours.
 * Null (no column) when the list is filtered with `--org` or shows no organization's record, so a
 * person in no organization sees the table as it always was.
 */
export async function ownerColumn(
  client: TrellisClient,
  records: readonly { owner_id: string }[],
  filtered: boolean,
): Promise<((record: { owner_id: string }) => string) | null> {
  if (filtered || records.length === 0) return null;
  const orgs = new Map((await client.listOrgs()).map((org) => [org.id, org.name]));
  if (!records.some((record) => orgs.has(record.owner_id))) return null;
  return (record) => orgs.get(record.owner_id) ?? 'personal';
}
