import type { CreateJobInput, TrellisClient } from '@trellis/client';
import type { JobView as Job } from '@trellis/client';
import { Option } from 'clipanion';
import { exitCodeFor, followJob, reportEnd } from '../../follow/followJob.js';
import { TrellisCommand } from '../TrellisCommand.js';

/** `plan`, `deploy` and `destroy`: queue a job for a configuration, then follow it to its end. */
export abstract class JobRunCommand extends TrellisCommand {
  config = Option.String({ name: 'config' });
  detach = Option.Boolean('-d,--detach', false, {
    description: 'Print the job id and return without following the job',
  });

  protected abstract jobInput(configurationId: string, client: TrellisClient): Promise<CreateJobInput>;

  /** Checks the flags before anything is sent. */
  protected validate(): void {}

  /** Asked before the job is queued; false stops (destroy asks for confirmation). */
  protected async confirm(_config: { name: string }): Promise<boolean> {
    return true;
  }

  override async execute(): Promise<number> {
    this.errorContext.configName = this.config;
    this.validate();
    const client = this.signedInClient();
    const vine = await client.getConfiguration(this.config);
    if (!(await this.confirm(vine))) {
      this.terminal.note('Nothing was queued.');
      return 1;
    }
    const job = await client.createJob(await this.jobInput(vine.id, client));
    return this.detach ? this.printQueued(job) : this.follow(client, job, vine.name);
  }

  private printQueued(job: Job): number {
    if (this.json) this.terminal.printJson(job);
    else this.terminal.print(job.id);
    return 0;
  }

  private async follow(client: TrellisClient, job: Job, name: string): Promise<number> {
    const terminal = this.terminal;
    if (!this.json) terminal.note(terminal.err.dim(`Queued ${job.job_type} job ${job.id} for ${name}.`));
    const final = await followJob(terminal, client, job, {
      logs: 'text',
      logTarget: this.json ? 'stderr' : 'stdout',
      offerCancel: true,
    });
    if (this.json) terminal.printJson(final);
    else reportEnd(terminal, final);
    return exitCodeFor(final.status);
  }
}
