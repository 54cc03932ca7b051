import { Command, Option, UsageError } from 'clipanion';
import { timestamp } from '../../output/format.js';
import { Prompter } from '../../output/Prompter.js';
import { TrellisCommand } from '../TrellisCommand.js';

/** `trellis configs state unlock NAME`: force-unlock a configuration's state (admin, audited). */
export class UnlockStateCommand extends TrellisCommand {
  static override paths = [['configs', 'state', 'unlock']];

  static override usage = Command.Usage({
    category: 'Configurations',
    description: "Force-unlock a configuration's state (admins)",
    details: `
      Releases whatever lock holds the state: the lock of an engine that died without releasing it, or a person's lock taken through the cloud block. A job that ends (fails, is cancelled, or its agent restarts or is lost) releases its engine's lock by itself; this is for the rest. Only unlock a state no engine is still writing.

      Shows who holds the lock and asks first; \`--yes\` skips the question (needed when standard input is not a terminal). Audited as \`state.force_unlock\`. With \`--json\`: \`{vine_id, released: {lock_id, info, created_at}}\`.
    `,
    examples: [
      ['Unlock, after confirming', '$0 configs state unlock web'],
      ['From a script', '$0 configs state unlock web --yes --json'],
    ],
  });

  config = Option.String({ name: 'name-or-id', required: true });
  yes = Option.Boolean('-y,--yes', false, { description: 'Do not ask for confirmation' });

  override async execute(): Promise<number> {
    if (!this.yes && !this.terminal.interactive) {
      throw new UsageError('configs state unlock asks for confirmation: pass --yes when not at a terminal');
    }
    const client = this.signedInClient();
    const terminal = this.terminal;
    if (!this.yes) {
      const { lock } = await client.stateHistory(this.config);
      if (!lock) {
        terminal.note(`The state of ${this.config} is not locked.`);
        return 0;
      }
      const holder = String(lock.info.Who ?? lock.lock_id);
      const prompter = new Prompter(terminal);
      try {
        const question = `The state of ${terminal.err.bold(this.config)} is locked by ${holder} since ${timestamp(lock.created_at)}. Unlock it?`;
        if (!(await prompter.confirm(question))) {
          terminal.note('The lock stays.');
          return 1;
        }
      } finally {
        prompter.close();
      }
    }
    const unlocked = await client.forceUnlockState(this.config);
    if (this.json) terminal.printJson(unlocked);
    else {
      const holder = String(unlocked.released.info.Who ?? unlocked.released.lock_id);
      terminal.success(`Unlocked the state of ${terminal.err.bold(this.config)} (it was locked by ${holder})`);
    }
    return 0;
  }
}
