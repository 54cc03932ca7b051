import { Command, Option } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';

/** `trellis configs state acknowledge NAME`: clear `state_after_lost` once reviewed (admin, audited; issue 30). */
export class AcknowledgeStateCommand extends TrellisCommand {
  static override paths = [['configs', 'state', 'acknowledge']];

  static override usage = Command.Usage({
    category: 'Configurations',
    description: "Acknowledge a configuration's state written after a lost job (admins)",
    details: `
      When an agent is cut off longer than the lost-job timeout, its job is failed as lost while its engine may still be applying. The engine's last state is still stored: as the current state when no later job had the configuration, otherwise as a REJECTED version kept for recovery (\`configs state pull --version N\`). The configuration shows \`state_after_lost\` (\`configs state list\`) until an admin reviewed it and acknowledges it with this command.

      Audited as \`state.after_lost_acknowledge\`. Exits 1 with \`state_after_lost_not_set\` when nothing awaits review. With \`--json\`: \`{vine_id, acknowledged}\`.
    `,
    examples: [['Acknowledge after review', '$0 configs state acknowledge web']],
  });

  config = Option.String({ name: 'name-or-id', required: true });

  override async execute(): Promise<number> {
    const answer = await this.signedInClient().acknowledgeStateAfterLost(this.config);
    if (this.json) this.terminal.printJson(answer);
    else {
      this.terminal.success(
        `Acknowledged ${answer.acknowledged} state version(s) of ${this.terminal.err.bold(this.config)} written after a lost job`,
      );
    }
    return 0;
  }
}
