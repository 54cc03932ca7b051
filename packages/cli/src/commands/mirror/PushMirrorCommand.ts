import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { Command, Option } from 'clipanion';
import { formatBytes } from '../../output/format.js';
import { namespaceOf, namespaceOption } from '../modules/moduleOptions.js';
import { TrellisCommand } from '../TrellisCommand.js';
import { mirrorDirArchives } from './mirrorDirectory.js';

export class PushMirrorCommand extends TrellisCommand {
  static override paths = [['mirror', 'push']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: "Push what `tofu providers mirror` wrote into a namespace's provider mirror",
    details:
      'Walks DIR (`<hostname>/<namespace>/<type>/terraform-provider-<type>_<version>_<os>_<arch>.zip`) and uploads each archive, streamed, one at a time; the server computes their hashes. An archive already in the mirror with the same bytes is left as it is. Needs the operator role in the organization. Agents of the namespace then install these providers from the mirror (docs/registry.md).',
    examples: [
      ['Fill the mirror of the organization acme', '$0 mirror push ./providers --namespace acme'],
      ['Made on a machine with internet access first', 'tofu providers mirror -platform=linux_amd64 ./providers'],
    ],
  });

  dir = Option.String({ name: 'dir' });
  namespace = namespaceOption();

  override async execute(): Promise<number> {
    const archives = mirrorDirArchives(this.dir);
    const client = this.signedInClient();
    const namespace = await namespaceOf(client, this.namespace);
    const results = [];
    for (const archive of archives) {
      const { file, size, ...address } = archive;
      const body = Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>;
      const pushed = await client.pushMirrorArchive(namespace, address, body, size);
      results.push(pushed);
      if (!this.json) {
        const what = `${pushed.archive.provider} ${pushed.archive.version} ${pushed.archive.platform}`;
        this.terminal.print(
          pushed.created ? `pushed ${what} (${formatBytes(size)})` : `${what} is already in the mirror`,
        );
      }
    }
    if (this.json) this.terminal.printJson(results);
    return 0;
  }
}
