/**
 * The input of a repository connection (`PUT /api/cli/configurations/{id}/vcs`, issue 13), read
 * field by field so every bad field is reported at once.
 */
import { GIT_PROVIDERS, type GitProvider, isOneOf } from '../domain/enums.js';
import { type FieldIssue, ValidationError } from '../domain/errors.js';
import { FORK_PULL_REQUEST_MODES, type ForkPullRequestMode, WEBHOOK_MODES, type WebhookMode } from '../domain/vcs.js';

/** At most this many path patterns per connection, each at most this long. */
export const MAX_VCS_PATHS = 50;
export const MAX_VCS_PATH_LENGTH = 256;
const MAX_REPOSITORY_LENGTH = 255;

/** `PUT /api/cli/configurations/{id}/vcs`, as received. */
export interface ConnectVcsInput {
  provider?: unknown;
  repository?: unknown;
  branch?: unknown;
  paths?: unknown;
  auto_deploy?: unknown;
  pull_requests?: unknown;
  fork_pull_requests?: unknown;
  webhook?: unknown;
  path?: unknown;
}

export interface ParsedConnect {
  provider: GitProvider;
  repository: string;
  branch: string;
  paths: string[];
  auto_deploy: boolean;
  pull_requests: boolean;
  fork_pull_requests: ForkPullRequestMode;
  webhook: WebhookMode;
  /** undefined: keep the vine's current path. */
  path: string | null | undefined;
}

/** GitHub `owner/name`; Bitbucket `workspace/slug`; GitLab `group[/subgroup...]/project`. */
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
const CONTROL = /[\u0000-\u001f\u007f]/;

export function repositoryIssue(provider: GitProvider, repository: string): string | null {
  if (repository.length > MAX_REPOSITORY_LENGTH) return `must be at most ${MAX_REPOSITORY_LENGTH} characters`;
  const segments = repository.split('/');
  const shape = provider === 'gitlab' ? 'group/project (nested groups allowed: group/subgroup/project)' : 'owner/name';
  if (provider === 'gitlab' ? segments.length < 2 || segments.length > 21 : segments.length !== 2) {
    return `must be ${shape}`;
  }
  for (const segment of segments) {
    if (!SEGMENT.test(segment) || segment.endsWith('.git') || segment.endsWith('.')) {
      return `must be ${shape}, each part letters, digits, '.', '_' or '-' (not starting with '.' or '-', no .git suffix)`;
    }
  }
  return null;
}

function pathPatternIssue(pattern: string): string | null {
  if (pattern === '') return 'must not be empty';
  if (pattern.length > MAX_VCS_PATH_LENGTH) return `must be at most ${MAX_VCS_PATH_LENGTH} characters`;
  if (CONTROL.test(pattern)) return 'must not hold control characters';
  if (pattern.startsWith('/')) return "is relative to the repository's root: no leading '/'";
  if (pattern.split('/').includes('..')) return "must not hold '..'";
  let brackets = 0;
  let braces = 0;
  for (const char of pattern) {
    if (char === '[') brackets += 1;
    if (char === ']') brackets -= 1;
    if (char === '{') braces += 1;
    if (char === '}') braces -= 1;
    if (brackets < 0 || braces < 0 || brackets > 1) return 'is not a valid glob (unbalanced [ ] or { })';
  }
  if (brackets !== 0 || braces !== 0) return 'is not a valid glob (unbalanced [ ] or { })';
  return null;
}

export function parseConnectInput(input: ConnectVcsInput): ParsedConnect {
  const issues: FieldIssue[] = [];
  const body = (input ?? {}) as ConnectVcsInput;
  const provider = body.provider;
  if (!isOneOf(GIT_PROVIDERS, provider)) {
    issues.push({ path: 'provider', message: `must be one of ${GIT_PROVIDERS.join(', ')}` });
  }
  const repository = typeof body.repository === 'string' ? body.repository.trim().replace(/\.git$/, '') : null;
  if (repository === null || repository === '') {
    issues.push({ path: 'repository', message: 'is required: owner/name' });
  } else if (isOneOf(GIT_PROVIDERS, provider)) {
    const issue = repositoryIssue(provider, repository);
    if (issue) issues.push({ path: 'repository', message: issue });
  }
  const branch = typeof body.branch === 'string' ? body.branch.trim() : null;
  if (branch === null || branch === '') issues.push({ path: 'branch', message: 'is required' });
  else if (branch.length > 255) issues.push({ path: 'branch', message: 'must be at most 255 characters' });

  let paths: string[] = [];
  if (body.paths !== undefined && body.paths !== null) {
    if (!Array.isArray(body.paths) || body.paths.some((pattern) => typeof pattern !== 'string')) {
      issues.push({ path: 'paths', message: 'must be a list of glob patterns' });
    } else if (body.paths.length > MAX_VCS_PATHS) {
      issues.push({ path: 'paths', message: `must hold at most ${MAX_VCS_PATHS} patterns` });
    } else {
      paths = [...new Set((body.paths as string[]).map((pattern) => pattern.trim()))];
      paths.forEach((pattern, index) => {
        const issue = pathPatternIssue(pattern);
        if (issue) issues.push({ path: `paths[${index}]`, message: issue });
      });
    }
  }
  const flag = (name: 'auto_deploy' | 'pull_requests', fallback: boolean): boolean => {
    const value = body[name];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'boolean') issues.push({ path: name, message: 'must be true or false' });
    return value === true;
  };
  const autoDeploy = flag('auto_deploy', false);
  const pullRequests = flag('pull_requests', true);
  const webhook = body.webhook ?? 'auto';
  if (!isOneOf(WEBHOOK_MODES, webhook)) issues.push({ path: 'webhook', message: 'must be auto or manual' });
  const forks = body.fork_pull_requests ?? 'off';
  if (!isOneOf(FORK_PULL_REQUEST_MODES, forks)) {
    issues.push({ path: 'fork_pull_requests', message: `must be one of ${FORK_PULL_REQUEST_MODES.join(', ')}` });
  }

  let path: string | null | undefined;
  if (body.path === undefined) path = undefined;
  else if (body.path === null || body.path === '') path = null;
  else if (typeof body.path !== 'string')
    issues.push({ path: 'path', message: 'must be a directory of the repository' });
  else {
    path =
      body.path
        .trim()
        .replace(/^\.?\/+/, '')
        .replace(/\/+$/, '') || null;
    if (path !== null && (path.length > 1024 || path.split('/').includes('..'))) {
      issues.push({ path: 'path', message: "must be a directory inside the repository (no '..')" });
    }
  }
  if (issues.length > 0) throw new ValidationError('the repository connection is not valid', issues);
  return {
    provider: provider as GitProvider,
    repository: repository as string,
    branch: branch as string,
    paths,
    auto_deploy: autoDeploy,
    pull_requests: pullRequests,
    fork_pull_requests: forks as ForkPullRequestMode,
    webhook: webhook as WebhookMode,
    path,
  };
}
