import type { FieldIssue } from './errors.js';

/**
 * The rule for a vine's `git` source, kept once: the API refuses what breaks it, and the agent
 * checks it again before running git (a record written before the rule existed must not reach
 * git either). Everything here ends up as an argument of `git`, so nothing may start with `-`
 * (git would read it as an option, e.g. `--upload-pack=<command>`) or hold a control character.
 */
export interface GitSourceFields {
  url: string;
  ref: string | null;
  path: string | null;
}

export interface GitSourceRuleOptions {
  /** `file://` URLs: the API accepts them, an agent only when it was started to allow them. */
  allowFile: boolean;
}

/** What to tell a person who put credentials in the URL. */
export const GIT_CREDENTIALS_HINT =
  'must not hold credentials: give them on the agent host instead (a git credential helper for https://, an SSH key or agent for ssh:// and git@host:path)';

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
const CONTROL = /[\u0000-\u001f\u007f]/;
/** What `git check-ref-format` refuses anywhere in a ref, plus the option prefix. */
const BAD_REF = /[\s~^:?*[\\]|\.\.|@\{|\/\/|^\/|\/$|\.lock$|\.$/;
/** `[user@]host:path`, git's scp-like address: no scheme, a host made of name characters. */
const SCP_LIKE = /^(?:([A-Za-z0-9._~+-]+)@)?([A-Za-z0-9][A-Za-z0-9.-]*):(?!\/\/)(.+)$/;

/** The failures of a git source against the rule, each naming its field (`source.url`, ...). */
export function gitSourceIssues(source: GitSourceFields, options: GitSourceRuleOptions): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const urlIssue = gitUrlIssue(source.url, options);
  if (urlIssue) issues.push({ path: 'source.url', message: urlIssue });
  if (source.ref !== null) {
    if (source.ref.startsWith('-')) issues.push({ path: 'source.ref', message: "must not start with '-'" });
    else if (CONTROL.test(source.ref)) {
      issues.push({ path: 'source.ref', message: 'must not hold control characters' });
    } else if (BAD_REF.test(source.ref)) {
      issues.push({ path: 'source.ref', message: 'must be a branch, tag or commit name git accepts' });
    }
  }
  if (source.path !== null) {
    if (source.path.startsWith('-')) issues.push({ path: 'source.path', message: "must not start with '-'" });
    else if (CONTROL.test(source.path)) {
      issues.push({ path: 'source.path', message: 'must not hold control characters' });
    }
  }
  return issues;
}

function gitUrlIssue(url: string, options: GitSourceRuleOptions): string | null {
  if (url.startsWith('-')) return "must not start with '-'";
  if (CONTROL.test(url) || /\s/.test(url)) return 'must not hold control characters or spaces';
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    if (url.includes('::')) return 'must be an https://, ssh:// or git@host:path address';
    const at = url.indexOf('@');
    if (at > 0 && url.slice(0, at).includes(':')) return GIT_CREDENTIALS_HINT;
    if (!SCP_LIKE.test(url)) return 'must be an https://, ssh:// or git@host:path address';
    return null;
  }
  if (scheme === 'file') {
    return options.allowFile
      ? null
      : 'is a file:// address, which this agent refuses (start it with --allow-file-sources to allow them)';
  }
  if (scheme !== 'https' && scheme !== 'ssh') return 'must be an https://, ssh:// or git@host:path address';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  if (parsed.hostname === '' || parsed.hostname.startsWith('-')) return 'must name a host';
  // ssh://git@host is the account to log in as, not a secret; anything else in the user part is.
  if (parsed.password !== '' || (scheme === 'https' && parsed.username !== '')) return GIT_CREDENTIALS_HINT;
  return null;
}

/**
 * The source as people see it: a git URL's user part (credentials, in a record written before they
 * were refused) replaced by `***`. Agents get the record as stored, and refuse such a URL.
 */
export function redactSource<S extends { type: string; url?: string }>(source: S): S {
  if (source.type !== 'git' || typeof source.url !== 'string') return source;
  return { ...source, url: redactGitUrl(source.url) };
}

export function redactGitUrl(url: string): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(url)?.[0];
  if (scheme === undefined) {
    // scp-like: only a password (user:password@host:path) is a secret there.
    const at = url.indexOf('@');
    return at > 0 && url.slice(0, at).includes(':') ? `***${url.slice(at)}` : url;
  }
  const rest = url.slice(scheme.length);
  const end = rest.search(/[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  const at = authority.lastIndexOf('@');
  if (at < 0) return url;
  const user = authority.slice(0, at);
  // ssh://git@host names the account, no secret: kept.
  if (scheme.toLowerCase() === 'ssh://' && !user.includes(':')) return url;
  return `${scheme}***${rest.slice(at)}`;
}
