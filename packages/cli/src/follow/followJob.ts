import {
  Backoff,
  type RetryClock,
  systemClock,
  type TrellisClient,
  TrellisApiError,
  TrellisConnectionError,
} from '@trellis/client';
import type { JobView as Job, JobDetailView, LogEntryView as LogChunk } from '@trellis/client';
import type { JobStatus } from '@trellis/core';
import { CliError, InterruptedError } from '../errors.js';
import { ExitCode } from '../exitCodes.js';
import { jobDuration, jobNoun, statusColour } from '../output/format.js';
import { Prompter } from '../output/Prompter.js';
import { Spinner } from '../output/Spinner.js';
import type { Terminal } from '../output/Terminal.js';
import { LogPrinter } from './LogPrinter.js';

export interface FollowOptions {
  /** `text`: print logs for people; `ndjson`: one JSON chunk a line; `none`: status only. */
  logs: 'text' | 'ndjson' | 'none';
  /** Where text logs go: stdout, or stderr when stdout carries `--json` output. */
  logTarget: 'stdout' | 'stderr';
  /** Ctrl-C at a terminal asks whether to cancel the job (else it just stops following). */
  offerCancel: boolean;
  /** Resume after this chunk id. */
  after?: number;
  /** Time for the pauses between reconnections; the real clock by default. */
  clock?: RetryClock;
}

/** Reconnection attempts in a row without progress before giving up. */
const MAX_RECONNECTS = 8;

/** The exit code that a followed job's final status means. */
export function exitCodeFor(status: JobStatus): ExitCode {
  switch (status) {
    case 'SUCCESS':
      return ExitCode.OK;
    case 'CANCELLED':
      return ExitCode.CANCELLED;
    default:
      return ExitCode.FAILURE;
  }
}

/**
 * Follows a job live until it ends (SSE), reconnecting after the last chunk seen when the stream
 * drops or the server ends it before `end` (it does when the follower falls too far behind), with
 * a spinner while it waits in the queue. Returns the job as it ended.
 */
export async function followJob(
  terminal: Terminal,
  client: TrellisClient,
  job: Job,
  options: FollowOptions,
): Promise<JobDetailView> {
  const { stdout, stderr } = terminal.context;
  const printer =
    options.logs === 'text'
      ? new LogPrinter(
          options.logTarget === 'stdout' ? stdout : stderr,
          options.logTarget === 'stdout' ? terminal.out : terminal.err,
        )
      : null;
  const noun = jobNoun(job);
  let spinner: Spinner | null = null;
  const stopSpinner = () => {
    spinner?.stop();
    spinner = null;
  };

  let lastId = options.logs === 'none' ? Number.MAX_SAFE_INTEGER : (options.after ?? 0);
  let status: JobStatus = job.status;
  let streamAbort = new AbortController();
  let interrupted: InterruptedError | null = null;
  let asking: Prompter | null = null;
  let ended = false;

  const stopFollowing = () => {
    interrupted = new InterruptedError(
      `stopped following; job ${job.id} goes on (\`trellis jobs cancel ${job.id}\` cancels it)`,
    );
    streamAbort.abort();
  };
  const askToCancel = async () => {
    stopSpinner();
    printer?.pause();
    asking = new Prompter(terminal);
    try {
      if (await asking.confirm(`\nCancel ${noun.toLowerCase()} job ${job.id}?`)) {
        try {
          await client.cancelJob(job.id);
          terminal.note(`Cancelling job ${job.id}…`);
        } catch (error) {
          if (!(error instanceof TrellisApiError && error.status === 409)) throw error;
          terminal.note(`The job could not be cancelled: ${error.detail}`);
        }
      } else if (!ended) {
        terminal.note('Still following (Ctrl-C again to be asked again).');
      }
    } catch (error) {
      if (error instanceof InterruptedError) stopFollowing();
      else terminal.warn(`could not cancel the job: ${(error as Error).message}`);
    } finally {
      asking?.close();
      asking = null;
      printer?.resume();
    }
  };
  const onInterrupt = () => {
    if (asking) stopFollowing();
    else if (options.offerCancel && terminal.interactive) void askToCancel();
    else stopFollowing();
  };
  const clock = options.clock ?? systemClock;
  // Listen before anything is on screen: a Ctrl-C typed once the spinner shows must reach us.
  process.on('SIGINT', onInterrupt);
  if (job.status === 'QUEUED') {
    spinner = new Spinner(terminal, `${noun} job ${job.id} is queued; waiting for an agent to pick it up…`).start();
  }
  // While it is queued, say why it waits (`waiting_for`), as the control plane sees it.
  let shownWhy = '';
  const waiting =
    status === 'QUEUED'
      ? watchWaiting(client, job.id, clock, (text) => {
          if (status !== 'QUEUED' || spinner === null || text === shownWhy) return;
          shownWhy = text;
          // A spinner on a pipe printed its first text once: each new reason is a line of its own.
          if (spinner.running) spinner.update(text);
          else terminal.note(text);
        })
      : null;

  let failures = 0;
  // Under half a second after a clean end of the stream, growing (with jitter) to 5 s while it fails.
  const backoff = new Backoff({ initialMs: 500, maxMs: 5000 });
  try {
    while (!ended) {
      if (interrupted) throw interrupted;
      try {
        for await (const event of client.streamJobLogs(job.id, { after: lastId, signal: streamAbort.signal })) {
          failures = 0;
          backoff.reset();
          if (event.type === 'log') {
            stopSpinner();
            lastId = event.chunk.id;
            if (printer) printer.write(event.chunk);
            else if (options.logs === 'ndjson') stdout.write(`${JSON.stringify(event.chunk satisfies LogChunk)}\n`);
          } else if (event.type === 'status') {
            if (event.status !== status && event.status === 'PROCESSING') {
              stopSpinner();
              if (options.logs === 'none') {
                spinner = new Spinner(terminal, `${noun} job ${job.id} is running…`).start();
              } else if (!asking) {
                terminal.note(terminal.err.dim(`${noun} job ${job.id} started on an agent.`));
              }
            }
            status = event.status;
          } else {
            status = event.status;
            ended = true;
          }
        }
      } catch (error) {
        if (interrupted) throw interrupted;
        // The server's answer (404, a dead login…) will not change by asking again — except
        // `429 too_many_streams`, which clears as other streams close.
        if (error instanceof CliError) throw error;
        if (error instanceof TrellisApiError && error.status !== 429) throw error;
        failures += 1;
        if (failures > MAX_RECONNECTS) {
          const lost =
            error instanceof TrellisConnectionError ? error : new TrellisConnectionError(client.baseUrl, error);
          throw new CliError(
            `${lost.message}; gave up following job ${job.id} (\`trellis jobs logs ${job.id} --follow\` picks it up again)`,
            ExitCode.UNREACHABLE,
          );
        }
      }
      if (interrupted) throw interrupted;
      if (!ended) {
        // Ctrl-C during the pause aborts it, and the loop's first check throws.
        await clock.sleep(backoff.next(), streamAbort.signal);
        if (!streamAbort.signal.aborted) streamAbort = new AbortController();
      }
    }
  } finally {
    waiting?.stop();
    process.off('SIGINT', onInterrupt);
    stopSpinner();
    (asking as Prompter | null)?.close();
    printer?.finish();
  }
  return client.getJob(job.id);
}

/** Seconds between two reads of why a queued job waits. */
const WAITING_REFRESH_MS = 5000;

/**
 * Reads why the queued job waits (`GET /api/cli/jobs/{id}`'s `waiting_for`) now and every few
 * seconds, and gives the line to show (`queued: <why>`) to `show`, until stopped. A failed read
 * leaves the line as it was: the follow itself reports a control plane it cannot reach.
 */
function watchWaiting(
  client: TrellisClient,
  jobId: string,
  clock: RetryClock,
  show: (text: string) => void,
): { stop(): void } {
  const stopped = new AbortController();
  void (async () => {
    do {
      try {
        const job = await client.getJob(jobId);
        if (job.status !== 'QUEUED') return;
        const why = job.waiting_for?.message ?? 'waiting for an agent to pick it up…';
        show(`${jobNoun(job)} job ${jobId} is queued: ${why}`);
      } catch {
        // Deliberately ignored: the stream's own reconnection reports what is wrong.
      }
    } while (await clock.sleep(WAITING_REFRESH_MS, stopped.signal));
  })();
  return { stop: () => stopped.abort() };
}

/** The closing line people read: `✓ Plan succeeded (job …, 12s)`. */
export function reportEnd(terminal: Terminal, job: Job): void {
  const noun = jobNoun(job);
  const tail = `(job ${job.id}, ${jobDuration(job)})`;
  switch (job.status) {
    case 'SUCCESS':
      terminal.success(`${noun} succeeded ${terminal.err.dim(tail)}`);
      break;
    case 'FAILED':
      terminal.note(
        `${terminal.err.red('✗')} ${noun} ${terminal.err.red('failed')}${job.error_message ? `: ${job.error_message}` : ''} ${terminal.err.dim(tail)}`,
      );
      break;
    case 'CANCELLED':
      terminal.note(
        `${terminal.err.yellow('!')} ${noun} was ${statusColour(terminal.err, 'CANCELLED')} ${terminal.err.dim(tail)}`,
      );
      break;
    default:
      terminal.note(`${noun} job ${job.id} is ${statusColour(terminal.err, job.status)}`);
  }
}
