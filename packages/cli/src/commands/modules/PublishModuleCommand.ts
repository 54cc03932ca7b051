import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { Command, Option } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';
import { moduleLabel, nameOption, namespaceOf, namespaceOption, systemOption } from './moduleOptions.js';
import { packModule } from './packModule.js';

export class PublishModuleCommand extends TrellisCommand {
  static override paths = [['modules', 'publish']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: 'Publish a module version to the private registry',
    details: `
      Packs the directory (its files at the root of the tarball, without what its \`.terraformignore\`
      lists, \`.git/\` and \`.terraform/\`) and uploads it as the version. A published version never
      changes: publish a new version instead. Needs the operator role in the namespace.
    `,
    examples: [
      [
        'Publish acme/vpc/aws 1.2.0',
        '$0 modules publish ./vpc --namespace acme --name vpc --system aws --version 1.2.0',
      ],
    ],
  });

  directory = Option.String({ name: 'dir' });
  namespace = namespaceOption();
  name = nameOption();
  system = systemOption();
  version = Option.String('--version', { required: true, description: 'A semantic version, e.g. 1.2.0' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    const packed = await packModule(this.directory);
    try {
      const address = {
        namespace: await namespaceOf(client, this.namespace),
        name: this.name,
        system: this.system,
        version: this.version,
      };
      const body = Readable.toWeb(createReadStream(packed.file)) as ReadableStream<Uint8Array>;
      const published = await client.publishModule(address, body, packed.size);
      if (this.json) {
        this.terminal.printJson(published);
        return 0;
      }
      this.terminal.success(
        `Published ${moduleLabel(published)} ${published.version} (${packed.entries} files, ${published.size} bytes)`,
      );
      this.terminal.print(`${moduleLabel(published)} ${published.version}`);
      return 0;
    } finally {
      packed.remove();
    }
  }
}
