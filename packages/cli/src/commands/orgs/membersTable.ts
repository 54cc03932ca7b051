import type { OrgMemberView } from '@trellis/client';
import type { Terminal } from '../../output/Terminal.js';
import { timeAgo } from '../../output/format.js';
import { renderTable } from '../../output/table.js';

/** Members as a table: pending ones (invited, never signed in) say so instead of a join time. */
export function membersTable(terminal: Terminal, members: readonly OrgMemberView[]): string {
  return renderTable(
    ['EMAIL', 'ROLE', 'STATUS', 'JOINED', 'ID'],
    members.map((member) => [
      member.email,
      member.role,
      member.status,
      member.joined_at ? timeAgo(member.joined_at) : '-',
      member.id,
    ]),
    terminal.out.bold,
  );
}
