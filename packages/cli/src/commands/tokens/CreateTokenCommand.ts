import { API_TOKEN_MAX_DAYS, API_TOKEN_MIN_DAYS, isOrgRole, isUuid, ORG_ROLES } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import { timestamp } from '../../output/format.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class CreateTokenCommand extends TrellisCommand {
  static override paths = [['tokens', 'create']];

  static override usage = Command.Usage({
    category: 'API tokens',
    description: 'Create an API token for automation and print it once',
    details: `
      Prints the token alone on stdout (everything else goes to stderr), so it can be captured. It is shown this once: the server keeps only its hash. Use it as \`TRELLIS_TOKEN\` with \`TRELLIS_SERVER\`, or as \`Authorization: Bearer <token>\`.

      A personal token acts as you. With \`--org\` it is an organization token: it acts only within that organization, with \`--role\` (default viewer, never above yours); making one needs the admin role.

      Without \`--expires-in-days\` (${API_TOKEN_MIN_DAYS} to ${API_TOKEN_MAX_DAYS}) the token does not expire until revoked.
    `,
    examples: [
      ['A personal token for 30 days', '$0 tokens create --name laptop-scripts --expires-in-days 30'],
      [
        'An organization token for CI, straight into a variable',
        'TRELLIS_TOKEN=$($0 tokens create --name ci --org 3f1e2d4c-5b6a-4789-9abc-def012345678 --role operator)',
      ],
    ],
  });

  name = Option.String('--name', { required: true, description: 'Name of the token' });
  org = Option.String('--org', { description: 'Id of the organization for an organization token' });
  role = Option.String('--role', { description: `Role of an organization token: ${ORG_ROLES.join(', ')}` });
  expiresInDays = Option.String('--expires-in-days', {
    description: `Days until it expires (${API_TOKEN_MIN_DAYS}-${API_TOKEN_MAX_DAYS}); default: never`,
  });

  override async execute(): Promise<number> {
    if (this.org !== undefined && !isUuid(this.org))
      throw new UsageError(`--org is an organization id (a UUID), got "${this.org}"`);
    if (this.role !== undefined) {
      if (this.org === undefined) throw new UsageError('--role needs --org: a personal token acts as you');
      if (!isOrgRole(this.role)) throw new UsageError(`--role must be one of ${ORG_ROLES.join(', ')}`);
    }
    let days: number | undefined;
    if (this.expiresInDays !== undefined) {
      days = Number(this.expiresInDays);
      if (!Number.isInteger(days) || days < API_TOKEN_MIN_DAYS || days > API_TOKEN_MAX_DAYS) {
        throw new UsageError(
          `--expires-in-days must be a whole number from ${API_TOKEN_MIN_DAYS} to ${API_TOKEN_MAX_DAYS}`,
        );
      }
    }
    const created = await this.signedInClient().createToken({
      name: this.name,
      ...(this.org !== undefined ? { org_id: this.org } : {}),
      ...(this.role !== undefined && isOrgRole(this.role) ? { role: this.role } : {}),
      ...(days !== undefined ? { expires_in_days: days } : {}),
    });
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(created);
      return 0;
    }
    terminal.success(
      `Created ${created.org_id ? `organization token (${created.role})` : 'personal token'} ${terminal.err.bold(created.name)} ${created.id}`,
    );
    terminal.note(
      created.expires_at
        ? `Expires ${timestamp(created.expires_at)}`
        : 'Does not expire; revoke it with `trellis tokens revoke ID`.',
    );
    terminal.warn('This token is shown only once: store it now (the server keeps only its hash).');
    terminal.print(created.token);
    return 0;
  }
}
