/**
 * Issue 18, the container images (deploy/docker): no registry is reachable from the test machines,
 * so the images are not built here. The Dockerfiles are parsed instead and held to the rules the
 * chart relies on: multi-stage builds whose runtime stage has production dependencies only, a
 * numeric non-root USER, writable paths only on volumes (the chart mounts the root file system
 * read-only), the OpenTofu version as a build argument with a verified download, no secret in ENV
 * or ARG, and every workspace package the program needs packed into the image.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  base: string;
  name: string | null;
  instructions: Instruction[];
}

interface Dockerfile {
  /** ARGs before the first FROM. */
  globalArgs: Instruction[];
  stages: Stage[];
}

/** Instructions with their continuation lines joined; comments and blank lines dropped. */
function parseDockerfile(text: string): Dockerfile {
  const logical: string[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    if (current === '' && /^\s*#/.test(line)) continue;
    if (/^\s*#/.test(line)) continue; // a comment inside a continued RUN
    const continued = /\\\s*$/.test(line);
    current += `${line.replace(/\\\s*$/, '')} `;
    if (!continued) {
      if (current.trim() !== '') logical.push(current.trim().replace(/\s+/g, ' '));
      current = '';
    }
  }
  const parsed: Dockerfile = { globalArgs: [], stages: [] };
  for (const line of logical) {
    const [keyword = '', ...rest] = line.split(' ');
    const instruction = { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    if (instruction.keyword === 'FROM') {
      const match = /^(?:--platform=\S+ )?(\S+)(?: AS (\S+))?$/i.exec(instruction.args);
      expect(match, line).not.toBeNull();
      parsed.stages.push({ base: match?.[1] ?? '', name: match?.[2] ?? null, instructions: [] });
    } else if (parsed.stages.length === 0) {
      expect(instruction.keyword, `${line}: only ARG may precede FROM`).toBe('ARG');
      parsed.globalArgs.push(instruction);
    } else {
      parsed.stages.at(-1)?.instructions.push(instruction);
    }
  }
  return parsed;
}

function read(name: string): Dockerfile {
  return parseDockerfile(readFileSync(join(repoRoot, 'deploy/docker', name), 'utf8'));
}

function all(stage: Stage, keyword: string): string[] {
  return stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}

/** `NAME=value` pairs of ENV and ARG (`ENV A=1 B=2`, `ARG A`, `ARG A=1`). */
function declaredNames(args: string): string[] {
  return [...args.matchAll(/(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)(?==|\s|$)/g)].map((match) => match[1] as string);
}

/** The `@trellis/*` packages a workspace needs at run time, itself included. */
function runtimeClosure(name: string, extra: string[] = []): string[] {
  const manifests = new Map<string, { dependencies?: Record<string, string> }>(
    readdirSync(join(repoRoot, 'packages')).map((dir) => {
      const manifest = JSON.parse(readFileSync(join(repoRoot, 'packages', dir, 'package.json'), 'utf8'));
      return [manifest.name as string, manifest];
    }),
  );
  const seen = new Set<string>();
  const visit = (next: string) => {
    if (seen.has(next)) return;
    seen.add(next);
    for (const dependency of Object.keys(manifests.get(next)?.dependencies ?? {})) {
      if (dependency.startsWith('@trellis/')) visit(dependency);
    }
  };
  for (const root of [name, ...extra]) visit(root);
  return [...seen].sort();
}

/** The packages `tsc -b packages/<dir>` builds: the project and its references, transitively. */
function builtByTsc(dir: string): string[] {
  const built = new Set<string>();
  const visit = (path: string) => {
    const project = join(repoRoot, path);
    const name = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).name as string;
    if (built.has(name)) return;
    built.add(name);
    const tsconfig = JSON.parse(readFileSync(join(project, 'tsconfig.json'), 'utf8'));
    for (const reference of tsconfig.references ?? []) visit(join(path, reference.path));
  };
  visit(dir);
  return [...built].sort();
}

function tscTarget(dockerfile: Dockerfile): string {
  const build = dockerfile.stages.flatMap((stage) => all(stage, 'RUN')).find((run) => /\bnpx tsc -b\b/.test(run));
  const target = /npx tsc -b (packages\/[\w-]+)/.exec(build ?? '')?.[1];
  expect(target, 'the build stage names the project tsc builds').toBeDefined();
  return target as string;
}

function packedWorkspaces(dockerfile: Dockerfile): string[] {
  const pack = dockerfile.stages.flatMap((stage) => all(stage, 'RUN')).find((run) => run.includes('npm pack'));
  expect(pack).toBeDefined();
  return [...(pack as string).matchAll(/--workspace (\S+)/g)].map((match) => match[1] as string).sort();
}

const SECRET_LIKE = /SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|PRIVATE|DATABASE_URL|ENCRYPTION|API_KEY|ACCESS_KEY/i;

describe.each([
  { file: 'server.Dockerfile', program: 'trellis-server' },
  { file: 'agent.Dockerfile', program: 'trellis-agent' },
])('deploy/docker/$file', ({ file, program }) => {
  const dockerfile = read(file);
  const runtime = dockerfile.stages.at(-1) as Stage;

  it('builds in stages, and the runtime stage only copies what earlier stages installed', () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(3);
    const names = dockerfile.stages.slice(0, -1).map((stage) => stage.name);
    expect(names).not.toContain(null);
    const build = dockerfile.stages.find((stage) => all(stage, 'RUN').some((run) => /\bnpx tsc -b\b/.test(run)));
    expect(build, 'a stage compiles with tsc').toBeDefined();
    expect(all(build as Stage, 'RUN').some((run) => /\bnpm ci\b/.test(run))).toBe(true);
    const deps = dockerfile.stages.find((stage) =>
      all(stage, 'RUN').some((run) => /npm install --omit=dev\b/.test(run)),
    );
    expect(deps, 'a stage installs production dependencies only').toBeDefined();
    for (const copy of all(runtime, 'COPY')) {
      expect(copy, 'the runtime stage copies from an earlier stage').toMatch(/^--from=(\S+) /);
      expect(names).toContain(/^--from=(\S+) /.exec(copy)?.[1]);
    }
    expect(all(runtime, 'COPY').some((copy) => copy.startsWith(`--from=${deps?.name} /app`))).toBe(true);
    // Neither the toolchain nor the sources reach the runtime image.
    for (const run of all(runtime, 'RUN'))
      expect(run).not.toMatch(/(^|\s)(g\+\+|make|python3|npm ci|npm install)(\s|$)/);
  });

  it('runs as a numeric non-root user, with writable paths only on volumes', () => {
    const users = all(runtime, 'USER');
    expect(users.length).toBeGreaterThan(0);
    const [uid, gid] = (users.at(-1) as string).split(':');
    expect(uid).toMatch(/^\d+$/);
    expect(Number(uid)).toBeGreaterThan(0);
    if (gid !== undefined) expect(Number(gid)).toBeGreaterThan(0);
    // Nothing after USER switches back.
    const last = runtime.instructions.map((i) => i.keyword).lastIndexOf('USER');
    expect(runtime.instructions.slice(last + 1).map((i) => i.keyword)).not.toContain('RUN');

    const volumes = all(runtime, 'VOLUME').flatMap((args) => JSON.parse(args) as string[]);
    expect(volumes).toContain('/tmp');
    const created = all(runtime, 'RUN').flatMap((run) =>
      [...run.matchAll(/mkdir -p ((?:\/\S+ ?)+)/g)].flatMap((match) => (match[1] as string).trim().split(' ')),
    );
    for (const dir of created) expect(volumes, `${dir} is written at run time`).toContain(dir);
  });

  it('keeps secrets out of ENV and ARG', () => {
    const declarations = [
      ...dockerfile.globalArgs.map((i) => i.args),
      ...dockerfile.stages.flatMap((stage) => [...all(stage, 'ENV'), ...all(stage, 'ARG')]),
    ];
    expect(declarations.length).toBeGreaterThan(0);
    for (const declaration of declarations) {
      for (const name of declaredNames(declaration)) {
        expect(name, declaration).not.toMatch(SECRET_LIKE);
      }
    }
  });

  it(`starts ${program}, found on PATH (the chart's commands name it)`, () => {
    expect(all(runtime, 'ENTRYPOINT')).toEqual([`["${program}"]`]);
    expect(all(runtime, 'ENV').join(' ')).toContain('PATH=/app/node_modules/.bin:$PATH');
  });
});

describe('the packed workspaces', () => {
  it('are those the server needs at run time, with both object storage adapters, all built by tsc', () => {
    const dockerfile = read('server.Dockerfile');
    const packed = packedWorkspaces(dockerfile);
    expect(packed).toEqual(runtimeClosure('@trellis/server', ['@trellis/artifacts-s3', '@trellis/artifacts-gcs']));
    expect(builtByTsc(tscTarget(dockerfile))).toEqual(expect.arrayContaining(packed));
  });

  it('are those the agent needs at run time, all built by tsc', () => {
    const dockerfile = read('agent.Dockerfile');
    const packed = packedWorkspaces(dockerfile);
    expect(packed).toEqual(runtimeClosure('@trellis/agent'));
    expect(builtByTsc(tscTarget(dockerfile))).toEqual(expect.arrayContaining(packed));
  });
});

describe('deploy/docker/agent.Dockerfile', () => {
  const dockerfile = read('agent.Dockerfile');

  it('takes the OpenTofu version as a build argument and verifies the download', () => {
    expect(dockerfile.globalArgs.map((i) => i.args)).toContainEqual(
      expect.stringMatching(/^TOFU_VERSION=\d+\.\d+\.\d+$/),
    );
    const engines = dockerfile.stages.find((stage) =>
      all(stage, 'RUN').some((run) => /opentofu\/opentofu\/releases\/download\/v\$\{TOFU_VERSION\}/.test(run)),
    );
    expect(engines, 'a stage downloads the OpenTofu release').toBeDefined();
    expect(all(engines as Stage, 'ARG')).toContain('TOFU_VERSION');
    const download = all(engines as Stage, 'RUN').find((run) => run.includes('TOFU_VERSION')) as string;
    expect(download).toMatch(/set -eu/);
    expect(download).toMatch(/SHA256SUMS" \| sha256sum -c -/);
    const runtime = dockerfile.stages.at(-1) as Stage;
    expect(all(runtime, 'COPY')).toContainEqual(expect.stringMatching(new RegExp(`^--from=${engines?.name} .*tofu`)));
  });
});

describe('.dockerignore', () => {
  it('keeps dependencies, build output, git and local secrets out of the build context', () => {
    const patterns = readFileSync(join(repoRoot, '.dockerignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    for (const pattern of ['**/node_modules', '**/dist', '.git', '.env', '**/.trellis']) {
      expect(patterns).toContain(pattern);
    }
  });
});
