import { globMatcher, globRegExp } from '@trellis/core';
import { describe, expect, it } from 'vitest';

const matches = (pattern: string, path: string) => globMatcher([pattern])(path);

describe('repository path globs', () => {
  it('`dir/**` matches everything under dir, dot files included, and not a sibling with the same prefix', () => {
    for (const path of ['infra/main.tf', 'infra/a/b/c.tf', 'infra/.terraform.lock.hcl', 'infra']) {
      expect(matches('infra/**', path)).toBe(true);
    }
    for (const path of ['infrastructure/main.tf', 'docs/infra/main.tf', 'README.md']) {
      expect(matches('infra/**', path)).toBe(false);
    }
  });

  it('`*` and `?` stay within a segment', () => {
    expect(matches('modules/*.tf', 'modules/vpc.tf')).toBe(true);
    expect(matches('modules/*.tf', 'modules/vpc/main.tf')).toBe(false);
    expect(matches('env/??/main.tf', 'env/eu/main.tf')).toBe(true);
    expect(matches('env/??/main.tf', 'env/eu1/main.tf')).toBe(false);
    expect(matches('*.md', 'README.md')).toBe(true);
    expect(matches('*.md', 'docs/README.md')).toBe(false);
  });

  it('`**/` matches any number of leading segments, none included', () => {
    expect(matches('**/*.tf', 'main.tf')).toBe(true);
    expect(matches('**/*.tf', 'a/b/main.tf')).toBe(true);
    expect(matches('**/*.tf', 'a/b/main.tfvars')).toBe(false);
    expect(matches('infra/**/prod/*.tf', 'infra/prod/main.tf')).toBe(true);
    expect(matches('infra/**/prod/*.tf', 'infra/eu/west/prod/main.tf')).toBe(true);
    expect(matches('infra/**/prod/*.tf', 'infra/eu/staging/main.tf')).toBe(false);
    expect(matches('**', 'anything/at/all')).toBe(true);
  });

  it('sets, negated sets, alternatives and escapes', () => {
    expect(matches('env/[ab]/x', 'env/a/x')).toBe(true);
    expect(matches('env/[ab]/x', 'env/c/x')).toBe(false);
    expect(matches('env/[a-c]/x', 'env/b/x')).toBe(true);
    expect(matches('env/[!a]/x', 'env/b/x')).toBe(true);
    expect(matches('env/[!a]/x', 'env/a/x')).toBe(false);
    expect(matches('env/[!a]/x', 'env///x')).toBe(false);
    expect(matches('{infra,modules}/**', 'modules/vpc/main.tf')).toBe(true);
    expect(matches('{infra,modules}/**', 'docs/main.tf')).toBe(false);
    expect(matches('stacks/{*.tf,*.tfvars}', 'stacks/prod.tfvars')).toBe(true);
    expect(matches('a\\*b', 'a*b')).toBe(true);
    expect(matches('a\\*b', 'axb')).toBe(false);
  });

  it('regular expression characters stand for themselves', () => {
    expect(matches('a.b/(x)+$^|', 'a.b/(x)+$^|')).toBe(true);
    expect(matches('a.b', 'axb')).toBe(false);
    expect(matches('env/[z-a]', 'env/[z-a]')).toBe(true);
    expect(matches('env/[oops', 'env/[oops')).toBe(true);
    expect(globRegExp('/infra/**').test('infra/x')).toBe(true);
  });

  it('any of several patterns; a leading slash of the path is ignored', () => {
    const match = globMatcher(['infra/**', 'modules/*.tf']);
    expect(match('/modules/vpc.tf')).toBe(true);
    expect(match('docs/x.md')).toBe(false);
    expect(globMatcher([])('x')).toBe(false);
  });
});
