/**
 * Another build of Trellis for a same-run baseline: the tree of a git revision (by default the
 * commit before HEAD) exported into a temp dir with `git archive` (the repository's metadata is not
 * touched: no worktree is registered), given this tree's installed dependencies and built with
 * `tsc -b`. Removed again by `remove()` (and by the bench's cleanup on Ctrl-C).
 *
 * Dependencies: the temp tree gets a `node_modules` of its own whose entries link to this tree's,
 * except `@trellis/*`, which link to the temp tree's own packages (the workspace links of this
 * tree would load this tree's code); each package's own `node_modules` is linked the same way.
 * The build starts from a copy of this tree's `dist` and `.tsbuildinfo` files and the sources
 * extracted with the current time, so `tsc -b` rebuilds every project but re-emits only the files
 * whose content differs (the build info holds each source's hash).
 */
import { execFile, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { deferCleanup } from './cleanup.mjs';
import { REPO_ROOT } from './environment.mjs';

const run = promisify(execFile);

/** The built binaries of a tree. */
export function buildOf(root, label, rev = null) {
  return {
    label,
    rev,
    root,
    serverBin: join(root, 'packages/server/dist/bin/trellis-server.js'),
    agentBin: join(root, 'packages/agent/dist/bin/trellis-agent.js'),
  };
}

/** This tree, as built by `tsc -b` before the bench (npm run bench does it). */
export async function currentBuild() {
  const { stdout } = await run('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT });
  const dirty = (await run('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: REPO_ROOT })).stdout.trim();
  return buildOf(REPO_ROOT, 'this tree', `${stdout.trim()}${dirty ? ' + changes' : ''}`);
}

/** Resolves `rev` to a commit (full and short), or throws with git's message. */
export async function resolveRev(rev) {
  const { stdout } = await run('git', ['rev-parse', '--verify', `${rev}^{commit}`], { cwd: REPO_ROOT });
  const full = stdout.trim();
  return { full, short: full.slice(0, 7) };
}

/** Exports and builds `rev`; `remove()` deletes it. */
export async function buildAtRev(rev, log) {
  const commit = await resolveRev(rev);
  const root = await mkdtemp(join(tmpdir(), `trellis-bench-rev-${commit.short}-`));
  const remove = deferCleanup(() => rm(root, { recursive: true, force: true }));
  try {
    const began = performance.now();
    log(`baseline build: exporting ${rev} (${commit.short}) to ${root}`);
    await exportTree(commit.full, root);
    await linkDependencies(root);
    await copyBuildOutputs(root);
    log('baseline build: tsc -b (incremental from this tree’s build info)…');
    await runTsc(root);
    log(`baseline build ready in ${((performance.now() - began) / 1000).toFixed(0)} s`);
    return { ...buildOf(root, `${rev} (${commit.short})`, commit.short), remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

/** `git archive <commit> | tar -x -m`: the files of the commit, with the current time as mtime. */
async function exportTree(commit, root) {
  await new Promise((resolve, reject) => {
    const archive = spawn('git', ['archive', '--format=tar', commit], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const extract = spawn('tar', ['-x', '-m', '-f', '-', '-C', root], { stdio: ['pipe', 'ignore', 'pipe'] });
    let errors = '';
    archive.stderr.on('data', (text) => {
      errors += text;
    });
    extract.stderr.on('data', (text) => {
      errors += text;
    });
    archive.stdout.pipe(extract.stdin);
    let left = 2;
    const done = (code) => {
      if (code !== 0) reject(new Error(`git archive | tar failed (${code}): ${errors}`));
      else if (--left === 0) resolve();
    };
    archive.once('exit', done);
    extract.once('exit', done);
    archive.once('error', reject);
    extract.once('error', reject);
  });
}

async function exists(path) {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** node_modules of the exported tree: links into this tree's, `@trellis/*` to its own packages. */
async function linkDependencies(root) {
  const modules = join(root, 'node_modules');
  await mkdir(modules);
  for (const entry of await readdir(join(REPO_ROOT, 'node_modules'))) {
    if (entry === '@trellis') continue;
    await symlink(join(REPO_ROOT, 'node_modules', entry), join(modules, entry));
  }
  await mkdir(join(modules, '@trellis'));
  for (const name of await readdir(join(root, 'packages'))) {
    await symlink(join(root, 'packages', name), join(modules, '@trellis', name));
    const own = join(REPO_ROOT, 'packages', name, 'node_modules');
    if (await exists(own)) await symlink(own, join(root, 'packages', name, 'node_modules'));
  }
}

/** This tree's `dist` folders (with their .tsbuildinfo) into the exported tree, package by package. */
async function copyBuildOutputs(root) {
  for (const name of await readdir(join(root, 'packages'))) {
    const dist = join(REPO_ROOT, 'packages', name, 'dist');
    if (await exists(dist)) await cp(dist, join(root, 'packages', name, 'dist'), { recursive: true });
  }
}

function runTsc(root) {
  return new Promise((resolve, reject) => {
    const tsc = spawn(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-b'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    tsc.stdout.on('data', (text) => {
      output = (output + text).slice(-8000);
    });
    tsc.stderr.on('data', (text) => {
      output = (output + text).slice(-8000);
    });
    tsc.once('error', reject);
    tsc.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`tsc -b failed in ${root}:\n${output}`))));
  });
}
