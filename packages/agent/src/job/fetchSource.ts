import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import type { VineSource } from '@trellis/core';
import { JobFailure } from './errors.js';

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

export type GitRunner = (args: string[], cwd: string) => Promise<void>;

/**
 * Fetches a `git` source the way the host's own git would (its credential helpers, SSH agent and
 * known_hosts), but never prompting: a missing credential fails the job instead of hanging it.
 * `ref` may be a branch, a tag or a commit; only that one commit is fetched.
 */
export async function cloneGitSource(
  source: Extract<VineSource, { type: 'git' }>,
  dir: string,
  git: GitRunner,
): Promise<string> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  await git(['init', '--quiet'], dir);
  await git(['remote', 'add', 'origin', source.url], dir);
  await git(['fetch', '--quiet', '--depth', '1', 'origin', source.ref ?? 'HEAD'], dir);
  await git(['checkout', '--quiet', '--detach', 'FETCH_HEAD'], dir);
  await git(['submodule', 'update', '--quiet', '--init', '--recursive', '--depth', '1'], dir);
  return source.path ? safeJoin(dir, source.path, 'path') : dir;
}

/** Runs git with the host's environment, no prompts, output kept for the error message. */
export function hostGit(env: NodeJS.ProcessEnv, onOutput: (line: string) => void): GitRunner {
  return (args, cwd) =>
    new Promise((resolve, reject) => {
      const child = spawn('git', args, {
        cwd,
        env: { ...env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: env.GIT_ASKPASS ?? '', GCM_INTERACTIVE: 'never' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (data) => {
        output += data;
      });
      child.stderr.on('data', (data) => {
        output += data;
      });
      child.once('error', (error) => reject(new JobFailure(`could not run git: ${error.message}`)));
      child.once('close', (code) => {
        for (const line of output.split('\n')) if (line.trim() !== '') onOutput(line);
        if (code === 0) resolve();
        else {
          const last = output.trim().split('\n').pop() ?? '';
          reject(new JobFailure(`git ${args[0]} failed: ${last || `exit ${code}`}`));
        }
      });
    });
}
