import { readFileSync } from 'node:fs';
import { Command, Option, UsageError } from 'clipanion';
import { timestamp } from '../../output/format.js';
import { renderTable } from '../../output/table.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class AddGpgKeyCommand extends TrellisCommand {
  static override paths = [['gpg-keys', 'add']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: "Add a GPG public key to a namespace: providers' SHA256SUMS must be signed by one (admins)",
    details: 'The file is an ASCII-armored public key, as `gpg --armor --export KEYID` writes it; `-` reads stdin.',
    examples: [['Add a key', '$0 gpg-keys add --namespace acme ./signing-key.asc']],
  });

  file = Option.String({ name: 'file' });
  namespace = Option.String('--namespace', { required: true, description: 'The organization name' });

  override async execute(): Promise<number> {
    let armor: string;
    try {
      armor = readFileSync(this.file === '-' ? 0 : this.file, 'utf8');
    } catch {
      throw new UsageError(`cannot read the key file "${this.file}"`);
    }
    const key = await this.signedInClient().addGpgKey(this.namespace, armor);
    if (this.json) {
      this.terminal.printJson(key);
      return 0;
    }
    this.terminal.success(`Added key ${key.key_id} to ${this.namespace}`);
    return 0;
  }
}

export class ListGpgKeysCommand extends TrellisCommand {
  static override paths = [['gpg-keys', 'list'], ['gpg-keys']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: "List a namespace's GPG public keys",
    examples: [['The keys of acme', '$0 gpg-keys list --namespace acme']],
  });

  namespace = Option.String('--namespace', { required: true, description: 'The organization name' });

  override async execute(): Promise<number> {
    const keys = await this.signedInClient().listGpgKeys(this.namespace);
    if (this.json) {
      this.terminal.printJson(keys);
      return 0;
    }
    if (keys.length === 0) {
      this.terminal.note(`${this.namespace} has no GPG keys; add one with \`trellis gpg-keys add\`.`);
      return 0;
    }
    this.terminal.print(
      renderTable(
        ['KEY ID', 'ADDED'],
        keys.map((key) => [key.key_id, timestamp(key.created_at)]),
        this.terminal.out.bold,
      ),
    );
    return 0;
  }
}

export class DeleteGpgKeyCommand extends TrellisCommand {
  static override paths = [['gpg-keys', 'delete']];

  static override usage = Command.Usage({
    category: 'Registry',
    description: 'Delete a GPG public key of a namespace (admins)',
    details: 'Versions it signed stay published, but the CLI no longer finds their key: publish them again.',
    examples: [['Delete a key', '$0 gpg-keys delete --namespace acme 51852D87348FFC4C']],
  });

  keyId = Option.String({ name: 'key-id' });
  namespace = Option.String('--namespace', { required: true, description: 'The organization name' });

  override async execute(): Promise<number> {
    if (!/^[0-9A-Fa-f]{16}$/.test(this.keyId)) throw new UsageError(`a key id is 16 hex digits, got "${this.keyId}"`);
    await this.signedInClient().deleteGpgKey(this.namespace, this.keyId);
    if (this.json) {
      this.terminal.printJson({ namespace: this.namespace, key_id: this.keyId.toUpperCase(), deleted: true });
      return 0;
    }
    this.terminal.success(`Deleted key ${this.keyId.toUpperCase()} of ${this.namespace}`);
    return 0;
  }
}
