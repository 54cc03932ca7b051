import type { UpdateConfigurationInput } from '@trellis/client';
import { Command, Option, UsageError } from 'clipanion';
import { TrellisCommand } from '../TrellisCommand.js';
import { printVine } from './ShowConfigCommand.js';
import { vineyardName } from '../../output/vineyards.js';

export class SetConfigCommand extends TrellisCommand {
  static override paths = [['configs', 'set']];

  static override usage = Command.Usage({
    category: 'Configurations',
    description: 'Change drift detection, run triggers and the approval setting of a configuration',
    details:
      '`--drift-interval MINUTES` (60 to 10080) checks the deployed configuration for drift on that schedule; `--drift-interval off` stops. `--after CONFIG` (repeatable) plans this configuration whenever a deploy of CONFIG succeeds; `--no-after` clears the list. `--require-approval` deploys only approved plans (`trellis approve`), and with `--separate-approver` the person who queued a plan cannot approve it; `--no-require-approval` stops. What is not given stays as it is.',
    examples: [
      ['Check for drift every 6 hours', '$0 configs set web --drift-interval 360'],
      ['Plan after the network deploys', '$0 configs set web --after network --after dns'],
      ['Stop both', '$0 configs set web --drift-interval off --no-after'],
      ['Deploy only plans someone else approved', '$0 configs set web --require-approval --separate-approver'],
    ],
  });

  config = Option.String({ name: 'name-or-id', required: true });
  driftInterval = Option.String('--drift-interval', {
    description: 'Minutes between drift checks (60 to 10080), or `off`',
  });
  after = Option.Array('--after', { description: 'Plan this configuration after a deploy of CONFIG succeeds' });
  noAfter = Option.Boolean('--no-after', false, { description: 'Run after no other configuration' });
  requireApproval = Option.Boolean('--require-approval', {
    description: 'Deploy only approved plans (`--no-require-approval`: no approval)',
  });
  separateApprover = Option.Boolean('--separate-approver', false, {
    description: 'With --require-approval: the person who queued a plan cannot approve it',
  });

  protected override fieldFlags = {
    'drift_detection.interval_minutes': '--drift-interval',
    'triggers.after': '--after',
    'approval.required': '--require-approval',
    'approval.separate_approver': '--separate-approver',
  };

  override async execute(): Promise<number> {
    const input: UpdateConfigurationInput = {};
    if (this.driftInterval !== undefined) {
      if (this.driftInterval === 'off') input.drift_detection = null;
      else if (/^\d+$/.test(this.driftInterval)) {
        input.drift_detection = { interval_minutes: Number(this.driftInterval) };
      } else throw new UsageError('--drift-interval takes a number of minutes (60 to 10080) or `off`');
    }
    if (this.after !== undefined && this.noAfter) throw new UsageError('give --after or --no-after, not both');
    const client = this.signedInClient();
    if (this.noAfter) input.triggers = { after: [] };
    else if (this.after !== undefined) {
      const ids: string[] = [];
      for (const upstream of this.after) ids.push((await client.getConfiguration(upstream)).id);
      input.triggers = { after: ids };
    }
    if (this.separateApprover && this.requireApproval !== true) {
      throw new UsageError('--separate-approver goes with --require-approval');
    }
    if (this.requireApproval === true) {
      input.approval = { required: true, separate_approver: this.separateApprover };
    } else if (this.requireApproval === false) input.approval = null;
    if (Object.keys(input).length === 0) {
      throw new UsageError(
        'nothing to change: give --drift-interval, --after, --no-after, --require-approval or --no-require-approval',
      );
    }
    const vine = await client.updateConfiguration(this.config, input);
    if (this.json) this.terminal.printJson(vine);
    else printVine(this.terminal, vine, await vineyardName(client, vine.vineyard_id));
    return 0;
  }
}
