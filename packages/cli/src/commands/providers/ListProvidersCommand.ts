import { Command, Option } from 'clipanion';
import { timestamp } from '../../output/format.js';
import { renderTable } from '../../output/table.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ListProvidersCommand extends TrellisCommand {
  static override paths = [['providers', 'list'], ['providers']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: "List a namespace's providers in the private registry",
    examples: [['The providers of acme', '$0 providers list --namespace acme']],
  });

  namespace = Option.String('--namespace', { required: true, description: 'The organization name' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const providers: { type: string; created_at: string }[] = [];
    let after: string | undefined;
    do {
      const page = await client.listRegistryProviders(this.namespace, after === undefined ? {} : { after });
      providers.push(...page.providers);
      after = page.next ?? undefined;
    } while (after !== undefined);
    if (this.json) {
      this.terminal.printJson(providers);
      return 0;
    }
    if (providers.length === 0) {
      this.terminal.note(`No providers in ${this.namespace}; publish one with \`trellis providers publish\`.`);
      return 0;
    }
    this.terminal.print(
      renderTable(
        ['PROVIDER', 'CREATED'],
        providers.map((provider) => [`${this.namespace}/${provider.type}`, timestamp(provider.created_at)]),
        this.terminal.out.bold,
      ),
    );
    return 0;
  }
}
