import { type BaseContext, Command } from 'clipanion';
import type { CliIo } from '../main.js';

/** What every `trellis-agent` command shares: its output and environment as a {@link CliIo}. */
export abstract class AgentCommand extends Command<BaseContext> {
  protected get io(): CliIo {
    return {
      env: this.context.env,
      stdout: (text) => this.context.stdout.write(text),
      stderr: (text) => this.context.stderr.write(text),
    };
  }
}
