import type { TrellisClient } from '@trellis/client';
import { Command, Option } from 'clipanion';
import * as t from 'typanion';
import { TrellisCommand } from '../TrellisCommand.js';
import { moduleLabel, nameOption, namespaceOf, namespaceOption, systemOption } from './moduleOptions.js';

const PROVIDERS = ['github', 'gitlab', 'bitbucket'] as const;

type ModuleRepositoryAnswer = Awaited<ReturnType<TrellisClient['moduleRepository']>>;

export class ConnectModuleCommand extends TrellisCommand {
  static override paths = [['modules', 'connect']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: "Publish a module from a git repository's version tags",
    details:
      'A push of a tag `v1.2.0` (or `1.2.0`) to the repository then publishes version 1.2.0 of the module from the tagged commit, through the same webhook endpoint as git-driven runs. By default Trellis creates the webhook with your web sign-in at the provider; with `--manual` it prints the webhook URL and secret (shown once) to paste at the provider. Connecting again replaces the repository. Needs the admin role in the namespace.',
    examples: [
      [
        'Tags of acme/terraform-aws-vpc publish acme/vpc/aws',
        '$0 modules connect acme/terraform-aws-vpc --namespace acme --name vpc --system aws',
      ],
      [
        'A GitLab project, hook pasted by hand',
        '$0 modules connect platform/net/vpc --provider gitlab --name vpc --system aws --manual',
      ],
    ],
  });

  repository = Option.String({ name: 'owner/name' });
  provider = Option.String('--provider', 'github', {
    description: 'github (default), gitlab or bitbucket',
    validator: t.isEnum(PROVIDERS),
  });
  manual = Option.Boolean('--manual', false, {
    description: 'Print the webhook URL and secret instead of creating the hook',
  });
  namespace = namespaceOption();
  name = nameOption();
  system = systemOption();

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const connection = await client.connectModuleRepository(
      { namespace: await namespaceOf(client, this.namespace), name: this.name, system: this.system },
      { provider: this.provider, repository: this.repository, webhook: this.manual ? 'manual' : 'auto' },
    );
    if (this.json) {
      this.terminal.printJson(connection);
      return 0;
    }
    this.terminal.print(describeConnection(connection));
    if (connection.webhook_secret !== undefined) {
      this.terminal.print(`Add a webhook at ${connection.provider} for push (and tag push) events:`);
      this.terminal.print(`  URL:    ${connection.webhook_url}`);
      this.terminal.print(`  Secret: ${connection.webhook_secret}   (shown only this once)`);
    }
    return 0;
  }
}

export function describeConnection(connection: ModuleRepositoryAnswer): string {
  const last = connection.last_tag;
  return [
    `${moduleLabel(connection)} ← ${connection.provider}:${connection.repository} (${connection.webhook_mode} webhook${connection.status === 'needs_reconnect' ? ', needs reconnecting' : ''})`,
    last
      ? `last tag ${last.tag}: ${last.outcome}${last.version ? ` ${last.version}` : ''}${last.message ? ` (${last.message})` : ''}`
      : 'no tag pushed yet: push a tag such as v1.0.0 to publish',
  ].join('\n');
}
