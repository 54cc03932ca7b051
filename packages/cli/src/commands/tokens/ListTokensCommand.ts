import { isUuid } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import { timeAgo, timestamp } from '../../output/format.js';
import { renderTable } from '../../output/table.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ListTokensCommand extends TrellisCommand {
  static override paths = [['tokens', 'list'], ['tokens']];

  static override usage = Command.Usage({
    category: 'API tokens',
    description: "List your personal API tokens, or an organization's",
    details: 'Never shows the tokens themselves, which only their creation printed. Revoked tokens are not listed.',
    examples: [
      ['Your personal tokens', '$0 tokens list'],
      ["An organization's tokens (admins)", '$0 tokens list --org 3f1e2d4c-5b6a-4789-9abc-def012345678'],
    ],
  });

  org = Option.String('--org', { description: 'Id of the organization whose tokens to list' });

  override async execute(): Promise<number> {
    if (this.org !== undefined && !isUuid(this.org))
      throw new UsageError(`--org is an organization id (a UUID), got "${this.org}"`);
    const tokens = await this.signedInClient().listTokens(this.org !== undefined ? { orgId: this.org } : {});
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(tokens);
      return 0;
    }
    if (tokens.length === 0) {
      terminal.note('No API tokens; create one with `trellis tokens create --name NAME`.');
      return 0;
    }
    const { out } = terminal;
    terminal.print(
      renderTable(
        ['NAME', 'ROLE', 'CREATED', 'EXPIRES', 'LAST USED', 'ID'],
        tokens.map((token) => [
          token.name,
          token.role ?? 'personal',
          timestamp(token.created_at),
          token.expires_at ? timestamp(token.expires_at) : 'never',
          token.last_used_at ? timeAgo(token.last_used_at) : 'never',
          token.id,
        ]),
        out.bold,
      ),
    );
    return 0;
  }
}
