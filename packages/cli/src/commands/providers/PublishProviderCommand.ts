import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { Command, Option } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';
import { readProviderDist } from './providerDist.js';

export class PublishProviderCommand extends TrellisCommand {
  static override paths = [['providers', 'publish']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: 'Publish a provider version to the private registry from a release directory',
    details:
      'Reads `terraform-provider-<type>_<version>_SHA256SUMS`, its detached signature `…_SHA256SUMS.sig` and every ' +
      '`terraform-provider-<type>_<version>_<os>_<arch>.zip` of the directory (what goreleaser writes). The signature ' +
      "must be made by one of the namespace's GPG keys (`trellis gpg-keys add`); each zip streams to the server, " +
      'which keeps it when its sha256 is the one SHA256SUMS lists. Needs the operator role.',
    examples: [['Publish acme/null 1.0.0', '$0 providers publish ./dist --namespace acme --type null --version 1.0.0']],
  });

  dir = Option.String({ name: 'dir' });
  namespace = Option.String('--namespace', { required: true, description: 'The organization name' });
  type = Option.String('--type', { required: true, description: 'The provider type, e.g. null' });
  version = Option.String('--version', { required: true, description: 'The version, e.g. 1.0.0' });
  protocols = Option.String('--protocols', '5.0', {
    description: 'Plugin protocol versions, comma-separated (default 5.0; 6.0 for the plugin framework)',
  });

  override async execute(): Promise<number> {
    const dist = readProviderDist(this.dir, this.type, this.version);
    const client = this.signedInClient();
    let published = await client.publishProviderVersion(this.namespace, this.type, this.version, {
      protocols: this.protocols.split(',').map((protocol) => protocol.trim()),
      shasums: dist.shasums,
      shasums_signature: dist.signature.toString('base64'),
    });
    for (const zip of dist.zips) {
      if (!this.json) this.terminal.note(`Uploading ${zip.os}_${zip.arch} (${zip.size} bytes)…`);
      const body = Readable.toWeb(createReadStream(zip.path)) as ReadableStream<Uint8Array>;
      published = await client.uploadProviderPlatform(this.namespace, this.type, this.version, zip, body, zip.size);
    }
    if (this.json) {
      this.terminal.printJson(published);
      return 0;
    }
    const uploaded = published.platforms.filter((platform) => platform.uploaded).length;
    this.terminal.success(
      `Published ${this.namespace}/${this.type} ${this.version}: ${uploaded} platform(s), signed by ${published.key_id}`,
    );
    return 0;
  }
}
