import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import type { VineSource } from '@trellis/core';
import { gitSourceIssues } from '@trellis/core/agent';
import { withoutAgentVariables } from './engineEnvironment.js';
import { agentDiskFull, JobFailure, mentionsDiskFull } from './errors.js';

/** A path inside the workspace, refusing anything that would climb out of it. */
export function safeJoin(root: string, relative: string, what: string): string {
  const normal = normalize(relative);
  if (relative === '' || isAbsolute(relative) || normal === '..' || normal.startsWith(`..${sep}`)) {
    throw new JobFailure(`${what} "${relative}" must be a relative path inside the configuration`);
  }
  return join(root, normal);
}

/** Writes `inline` files into `dir`. */
export function writeInlineFiles(dir: string, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const [name, content] of Object.entries(files)) {
    const target = safeJoin(dir, name, 'file');
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    writeFileSync(target, content, { mode: 0o600 });
  }
}

/** The URL without a password or token in it, for the log. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username || parsed.password) {
      parsed.username = parsed.username ? '***' : '';
      parsed.password = '';
    }
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^@/]+@/, '//***@');
  }
}

/** Runs one git command in `cwd`; resolves with its standard output. */
export type GitRunner = (args: string[], cwd: string) => Promise<unknown>;

/** A full commit id (SHA-1, or SHA-256 for repositories that use it). */
const COMMIT_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export interface GitSourceOptions {
  /** `--allow-file-sources`: clone `file://` URLs (a path on the agent's own host). */
  allowFile: boolean;
}

/**
 * Checks a `git` source against core's rule before git sees it: the API refuses a bad source, but a
 * record written before that rule (or `metadata.deploy` of a worker) may still hold one.
 */
export function checkGitSource(source: Extract<VineSource, { type: 'git' }>, options: GitSourceOptions): void {
  const issues = gitSourceIssues(source, { allowFile: options.allowFile });
  if (issues.length > 0) {
    throw new JobFailure(
      `refusing the git source, nothing was run: ${issues.map((issue) => `${issue.path} ${issue.message}`).join('; ')}`,
    );
  }
}

/**
 * Fetches a `git` source the way the host's own git would (its credential helpers, SSH agent and
 * known_hosts), but never prompting: a missing credential fails the job instead of hanging it.
 * `ref` may be a branch, a tag or a commit; only that one commit is fetched. With `source.commit`
 * (a git-driven job pins it), exactly that commit is checked out: fetched by its id, or, when the
 * server refuses an id it does not advertise, by fetching `ref` and checking the commit out of
 * it; `HEAD` is then compared with it. The source is checked first, and every value from it
 * follows `--end-of-options`, so none is read as an option.
 */
export async function cloneGitSource(
  source: Extract<VineSource, { type: 'git' }>,
  dir: string,
  git: GitRunner,
  options: GitSourceOptions,
): Promise<string> {
  checkGitSource(source, options);
  if (source.commit !== undefined && !COMMIT_SHA.test(source.commit)) {
    throw new JobFailure(
      `refusing the git source, nothing was run: source.commit must be a full commit id in lowercase hex`,
    );
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  await git(['init', '--quiet'], dir);
  await git(['remote', 'add', '--end-of-options', 'origin', source.url], dir);
  const commit = source.commit;
  if (commit === undefined) {
    await git(['fetch', '--quiet', '--depth', '1', '--end-of-options', 'origin', source.ref ?? 'HEAD'], dir);
    await git(['checkout', '--quiet', '--detach', 'FETCH_HEAD'], dir);
  } else {
    try {
      await git(['fetch', '--quiet', '--depth', '1', '--end-of-options', 'origin', commit], dir);
    } catch {
      // Servers without uploadpack.allowReachableSHA1InWant refuse an id they do not advertise.
      await git(['fetch', '--quiet', '--end-of-options', 'origin', source.ref ?? 'HEAD'], dir).catch(
        (error: unknown) => {
          throw new JobFailure(`could not fetch commit ${commit}: ${(error as Error).message}`);
        },
      );
    }
    await git(['checkout', '--quiet', '--detach', commit], dir).catch(() => {
      throw new JobFailure(
        `commit ${commit} is not in ${displayUrl(source.url)}${source.ref ? ` (fetched ${source.ref})` : ''}`,
      );
    });
    const head = String(await git(['rev-parse', 'HEAD'], dir)).trim();
    if (head !== commit) throw new JobFailure(`checked out ${head || 'nothing'} instead of commit ${commit}`);
  }
  await git(['submodule', 'update', '--quiet', '--init', '--recursive', '--depth', '1'], dir);
  return source.path ? safeJoin(dir, source.path, 'path') : dir;
}

/**
 * Transports git may use, for the source and its submodules: https and ssh, file only when the
 * agent allows file sources; never `ext::` (runs a command), plain http or git://.
 */
export function protocolConfig(options: GitSourceOptions): string[] {
  return [
    '-c',
    'protocol.allow=never',
    '-c',
    'protocol.https.allow=always',
    '-c',
    'protocol.ssh.allow=always',
    '-c',
    `protocol.file.allow=${options.allowFile ? 'always' : 'never'}`,
  ];
}

/**
 * Runs git with the host's environment minus the agent's own variables (its token, its settings),
 * no prompts, only the allowed transports; output kept for the error message. Credentials are the
 * host's own (its credential helpers, SSH agent): a connected vine's job never clones (issue 23).
 */
export function hostGit(
  env: NodeJS.ProcessEnv,
  options: GitSourceOptions,
  onOutput: (line: string) => void,
): GitRunner {
  const gitEnv: NodeJS.ProcessEnv = {
    ...withoutAgentVariables(env),
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: env.GIT_ASKPASS ?? '',
    GCM_INTERACTIVE: 'never',
  };
  return (args, cwd) =>
    new Promise((resolve, reject) => {
      const child = spawn('git', [...protocolConfig(options), ...args], {
        cwd,
        env: gitEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      let stdout = '';
      child.stdout.on('data', (data) => {
        output += data;
        stdout += data;
      });
      child.stderr.on('data', (data) => {
        output += data;
      });
      child.once('error', (error) => reject(new JobFailure(`could not run git: ${error.message}`)));
      child.once('close', (code) => {
        for (const line of output.split('\n')) if (line.trim() !== '') onOutput(line);
        if (code === 0) resolve(stdout);
        else {
          const last = output.trim().split('\n').pop() ?? '';
          const failed = `git ${args[0]} failed: ${last || `exit ${code}`}`;
          reject(mentionsDiskFull(output) ? agentDiskFull(failed) : new JobFailure(failed));
        }
      });
    });
}
