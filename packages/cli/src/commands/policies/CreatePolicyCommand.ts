import { isOneOf, POLICY_ENFORCEMENTS } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import { resolveOrg, resolveVineyard } from '../../resolve.js';
import { TrellisCommand } from '../TrellisCommand.js';
import { readModule } from './readModule.js';

export class CreatePolicyCommand extends TrellisCommand {
  static override paths = [['policies', 'create']];

  static override usage = Command.Usage({
    category: 'Policies',
    description: 'Create a policy from a Rego file: the agents check every plan with it',
    details: `
      The module is Rego (v1) with a \`deny\` rule yielding messages, in any package; its input is the plan as \`tofu show -json\` prints it, with \`input.trellis = { vine, vineyard, job }\` added. The server compiles it with OPA when it has the \`opa\` binary and refuses a module that does not compile, with the engine's message.

      \`--enforcement mandatory\`: a DEPLOY of a plan that fails it is refused unless an admin overrides; \`advisory\`: a warning. With \`--vineyard\` the policy applies to that vineyard's configurations only; with \`--org\` it is the organization's (admins). See docs/policies.md.
    `,
    examples: [
      [
        'A mandatory policy for every configuration',
        '$0 policies create --name no-public-buckets --enforcement mandatory --file no-public-buckets.rego',
      ],
      [
        "An advisory one for one vineyard's",
        '$0 policies create --name sizes --enforcement advisory --vineyard production --file sizes.rego',
      ],
    ],
  });

  name = Option.String('--name', { required: true, description: 'Name of the policy' });
  file = Option.String('--file', { required: true, description: 'The Rego module (`-`: stdin)' });
  enforcement = Option.String('--enforcement', {
    required: true,
    description: `${POLICY_ENFORCEMENTS.join(' or ')}`,
  });
  vineyard = Option.String('--vineyard', { description: "Only this vineyard's configurations (name or id)" });
  org = Option.String('--org', { description: 'The organization that owns the policy (name or id)' });

  protected override fieldFlags = { module: '--file' };

  override async execute(): Promise<number> {
    if (!isOneOf(POLICY_ENFORCEMENTS, this.enforcement)) {
      throw new UsageError(`--enforcement must be one of ${POLICY_ENFORCEMENTS.join(', ')}`);
    }
    const module = readModule(this.file);
    const client = this.signedInClient();
    const orgId = this.org !== undefined ? (await resolveOrg(client, this.org)).id : undefined;
    const vineyardId =
      this.vineyard !== undefined
        ? (await resolveVineyard(client, this.vineyard, orgId !== undefined ? { orgId } : {})).id
        : undefined;
    const created = await client.createPolicy({
      name: this.name,
      enforcement: this.enforcement,
      module,
      ...(vineyardId !== undefined ? { vineyard_id: vineyardId } : {}),
      ...(orgId !== undefined ? { org_id: orgId } : {}),
    });
    if (this.json) {
      this.terminal.printJson(created);
      return 0;
    }
    this.terminal.success(
      `Created ${created.enforcement} policy ${this.terminal.err.bold(created.name)} ${created.id} (version ${created.version})`,
    );
    return 0;
  }
}
