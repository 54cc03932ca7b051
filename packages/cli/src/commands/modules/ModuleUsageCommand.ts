import { Command } from 'clipanion';
import { timestamp } from '../../output/format.js';
import { renderTable } from '../../output/table.js';
import { TrellisCommand } from '../TrellisCommand.js';
import { moduleLabel, nameOption, namespaceOf, namespaceOption, systemOption } from './moduleOptions.js';

export class ModuleUsageCommand extends TrellisCommand {
  static override paths = [['modules', 'usage']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: 'List the vines that use a module, with the version their last plan or deploy installed',
    details:
      "The namespace owner's vines whose newest succeeded PLAN or DEPLOY installed the module, as their agents " +
      "reported it after `init`; a pull request's plan is passed over.",
    examples: [['Who uses acme/vpc/aws', '$0 modules usage --namespace acme --name vpc --system aws']],
  });

  namespace = namespaceOption();
  name = nameOption();
  system = systemOption();

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const usage = await client.moduleUsage({
      namespace: await namespaceOf(client, this.namespace),
      name: this.name,
      system: this.system,
    });
    if (this.json) {
      this.terminal.printJson(usage.vines);
      return 0;
    }
    if (usage.vines.length === 0) {
      this.terminal.print(`no vine's last plan or deploy installed ${moduleLabel(usage)}`);
      return 0;
    }
    this.terminal.print(
      renderTable(
        ['VINE', 'VERSION', 'JOB', 'FINISHED'],
        usage.vines.map((used) => [
          used.vine_name,
          used.version,
          `${used.job_type} ${used.job_id}`,
          used.finished_at ? timestamp(used.finished_at) : '',
        ]),
        this.terminal.out.bold,
      ),
    );
    return 0;
  }
}
