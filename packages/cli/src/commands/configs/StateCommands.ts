import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Command, Option, UsageError } from 'clipanion';
import { timestamp } from '../../output/format.js';
import { renderTable } from '../../output/table.js';
import { TrellisCommand } from '../TrellisCommand.js';

function versionNumber(value: string): number {
  if (!/^[1-9]\d{0,14}$/.test(value)) throw new UsageError(`"${value}" is not a state version number`);
  return Number(value);
}

/** `trellis configs state list NAME`: one history, whoever wrote each version (issue 26). */
export class ListStateCommand extends TrellisCommand {
  static override paths = [['configs', 'state', 'list']];

  static override usage = Command.Usage({
    category: 'Configurations',
    description: "List the versions of a configuration's state",
    details:
      "Newest first: the first that is not REJECTED is the current state. Each was written by a Trellis job, by a person through the stock CLI's cloud block, or by a rollback. Also shows who holds the state lock, and a version written after its job was failed as lost (`state_after_lost`: LATE, and REJECTED when a later job had the configuration) until an admin acknowledges it (`configs state acknowledge`). With `--json`: `{vine_id, versions, lock, state_after_lost}`.",
    examples: [['The history', '$0 configs state list web']],
  });

  config = Option.String({ name: 'name-or-id', required: true });

  override async execute(): Promise<number> {
    const history = await this.signedInClient().stateHistory(this.config);
    if (this.json) {
      this.terminal.printJson(history);
      return 0;
    }
    const { out } = this.terminal;
    if (history.lock) {
      this.terminal.print(
        `${out.yellow('Locked')} by ${String(history.lock.info.Who ?? history.lock.lock_id)} since ${timestamp(history.lock.created_at)}`,
      );
    }
    if (history.state_after_lost) {
      const late = history.state_after_lost;
      this.terminal.print(
        `${out.yellow('State after a lost job')}: version ${late.version_id} by job ${late.job_id ?? '-'} ${late.rejected ? 'was rejected (a later job had the configuration; kept for recovery)' : 'is the current state'}; review it, then \`trellis configs state acknowledge ${this.config}\``,
      );
    }
    if (history.versions.length === 0) {
      this.terminal.print('No state yet.');
      return 0;
    }
    this.terminal.print(
      renderTable(
        ['VERSION', 'SERIAL', 'SIZE', 'WRITTEN BY', 'NOTE', 'CREATED'],
        history.versions.map((version) => [
          String(version.id),
          String(version.serial),
          String(version.size),
          version.job_id ? `job ${version.job_id}` : version.created_by ? 'a person (CLI)' : '-',
          [version.after_lost ? 'LATE' : '', version.rejected ? 'REJECTED' : ''].filter(Boolean).join(' ') || '-',
          timestamp(version.created_at),
        ]),
        (heading) => out.bold(heading),
      ),
    );
    return 0;
  }
}

/** `trellis configs state pull NAME [--version N] [-o FILE]`: the state file (operator). */
export class PullStateCommand extends TrellisCommand {
  static override paths = [['configs', 'state', 'pull']];

  static override usage = Command.Usage({
    category: 'Configurations',
    description: "Download a configuration's state file",
    details:
      'The current state, or an older version with `--version`. It may hold secrets: it needs the role operator, and goes to stdout unless `--output` names a file.',
    examples: [
      ['The current state', '$0 configs state pull web > web.tfstate'],
      ['An older version', '$0 configs state pull web --version 12 --output old.tfstate'],
    ],
  });

  config = Option.String({ name: 'name-or-id', required: true });
  version = Option.String('--version', { description: 'The state version (default: the current one)' });
  output = Option.String('--output,-o', { description: 'Write the state to this file instead of stdout' });

  override async execute(): Promise<number> {
    const client = this.signedInClient();
    let id: number;
    if (this.version !== undefined) id = versionNumber(this.version);
    else {
      const current = (await client.stateHistory(this.config)).versions.find((version) => !version.rejected);
      if (!current) throw new UsageError(`${this.config} has no state yet`);
      id = current.id;
    }
    const body = Readable.fromWeb((await client.downloadStateVersion(this.config, id)) as never);
    if (this.output) {
      await pipeline(body, createWriteStream(this.output, { mode: 0o600 }));
      this.terminal.note(`State version ${id} written to ${this.output}`);
    } else {
      for await (const chunk of body) this.context.stdout.write(chunk);
    }
    return 0;
  }
}

/** `trellis configs state rollback NAME VERSION`: an old version becomes the current state again (admin). */
export class RollbackStateCommand extends TrellisCommand {
  static override paths = [['configs', 'state', 'rollback']];

  static override usage = Command.Usage({
    category: 'Configurations',
    description: 'Make an old state version the current state again',
    details:
      "Writes that version's state as the newest version, with the next serial, so the next plan starts from it. Refused while the state is locked. Needs the role admin; audited.",
    examples: [['Back to version 12', '$0 configs state rollback web 12']],
  });

  config = Option.String({ name: 'name-or-id', required: true });
  version = Option.String({ name: 'version', required: true });

  override async execute(): Promise<number> {
    const version = await this.signedInClient().rollbackState(this.config, versionNumber(this.version));
    if (this.json) this.terminal.printJson(version);
    else this.terminal.print(`Rolled back: version ${version.id} (serial ${version.serial}) is the current state`);
    return 0;
  }
}
