import { createHash } from 'node:crypto';
import {
  canonicalJson,
  type ConfigSnapshot,
  configHash,
  redactSnapshot,
  redactVariables,
  snapshotOfVine,
  snapshotOfWorkerTarget,
  type Vine,
} from '@trellis/core';
import { describe, expect, it } from 'vitest';

function vine(overrides: Partial<Vine> = {}): Vine {
  return {
    id: '11111111-1111-4111-8111-111111111111',
    owner_id: '22222222-2222-4222-8222-222222222222',
    vineyard_id: '33333333-3333-4333-8333-333333333333',
    name: 'web',
    project_name: 'web-prod',
    cloud_identity_id: '44444444-4444-4444-8444-444444444444',
    source: { type: 'inline', files: { 'main.tf': 'resource "null_resource" "a" {}' } },
    variables: { region: { value: 'eu-west-1', sensitive: false }, password: { value: 'hunter2', sensitive: true } },
    engine: { name: 'tofu', version: '1.8.0' },
    status: 'NEW',
    status_message: null,
    drift_detection: null,
    next_drift_check_at: null,
    drift: null,
    triggers: { after: [] },
    approval: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

describe('config snapshot', () => {
  it('is the vine as DESIGN §2 describes it, and nothing else', () => {
    const v = vine();
    expect(snapshotOfVine(v)).toEqual({
      vine: { id: v.id, name: 'web', project_name: 'web-prod', vineyard_id: v.vineyard_id },
      source: v.source,
      variables: v.variables,
      engine: v.engine,
      cloud_identity_id: v.cloud_identity_id,
    });
  });

  it('of a DESTROY_WORKER job names the target worker', () => {
    const snapshot = snapshotOfWorkerTarget({ id: 'w1', name: 'runner', mode: 'cloud' });
    expect(snapshot).toEqual({
      vine: null,
      source: null,
      variables: {},
      engine: null,
      cloud_identity_id: null,
      target_worker: { id: 'w1', name: 'runner', mode: 'cloud' },
    });
  });
});

describe('config hash', () => {
  it('is the lowercase hex SHA-256 of the canonical snapshot', () => {
    const snapshot = snapshotOfVine(vine());
    const expected = createHash('sha256').update(canonicalJson(snapshot), 'utf8').digest('hex');
    expect(configHash(snapshot)).toBe(expected);
    expect(configHash(snapshot)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is the same for the same content in another key order', () => {
    const a = snapshotOfVine(vine());
    const b: ConfigSnapshot = {
      cloud_identity_id: a.cloud_identity_id,
      engine: { version: '1.8.0', name: 'tofu' },
      variables: {
        password: { sensitive: true, value: 'hunter2' },
        region: { sensitive: false, value: 'eu-west-1' },
      },
      source: { files: { 'main.tf': 'resource "null_resource" "a" {}' }, type: 'inline' },
      vine: { vineyard_id: a.vine!.vineyard_id, project_name: 'web-prod', name: 'web', id: a.vine!.id },
    };
    expect(configHash(b)).toBe(configHash(a));
  });

  it('ignores what is not configuration: status, message and timestamps', () => {
    const base = configHash(snapshotOfVine(vine()));
    expect(
      configHash(
        snapshotOfVine(
          vine({ status: 'DEPLOYED', status_message: 'x', updated_at: '2027-01-01T00:00:00.000Z', owner_id: 'o' }),
        ),
      ),
    ).toBe(base);
  });

  const changes: [string, Partial<Vine>][] = [
    ['name', { name: 'web2' }],
    ['project name', { project_name: 'web-staging' }],
    ['vineyard', { vineyard_id: '55555555-5555-4555-8555-555555555555' }],
    ['cloud identity', { cloud_identity_id: null }],
    ['file content', { source: { type: 'inline', files: { 'main.tf': 'resource "null_resource" "b" {}' } } }],
    ['file name', { source: { type: 'inline', files: { 'other.tf': 'resource "null_resource" "a" {}' } } }],
    ['source type', { source: { type: 'git', url: 'https://example.test/r.git', ref: null, path: null } }],
    [
      'variable value',
      {
        variables: {
          region: { value: 'us-east-1', sensitive: false },
          password: { value: 'hunter2', sensitive: true },
        },
      },
    ],
    [
      'sensitive flag',
      {
        variables: { region: { value: 'eu-west-1', sensitive: true }, password: { value: 'hunter2', sensitive: true } },
      },
    ],
    ['removed variable', { variables: { region: { value: 'eu-west-1', sensitive: false } } }],
    ['engine name', { engine: { name: 'terraform', version: '1.8.0' } }],
    ['engine version', { engine: { name: 'tofu', version: '1.8.1' } }],
  ];

  it.each(changes)('changes when the %s changes', (_what, change) => {
    expect(configHash(snapshotOfVine(vine(change)))).not.toBe(configHash(snapshotOfVine(vine())));
  });

  it('git ref and path are part of it', () => {
    const git = (ref: string | null, path: string | null) =>
      configHash(snapshotOfVine(vine({ source: { type: 'git', url: 'https://example.test/r.git', ref, path } })));
    expect(git('main', null)).not.toBe(git('v1', null));
    expect(git('main', null)).not.toBe(git('main', 'infra'));
    expect(git(null, null)).not.toBe(git('main', null));
  });
});

describe('redaction', () => {
  it('replaces sensitive values and keeps the others', () => {
    const variables = vine().variables;
    expect(redactVariables(variables)).toEqual({
      region: { value: 'eu-west-1', sensitive: false },
      password: { value: '***', sensitive: true },
    });
    expect(variables.password!.value).toBe('hunter2');
  });

  it('of a snapshot leaves the original untouched', () => {
    const snapshot = snapshotOfVine(vine());
    const redacted = redactSnapshot(snapshot);
    expect(redacted.variables.password).toEqual({ value: '***', sensitive: true });
    expect(JSON.stringify(redacted)).not.toContain('hunter2');
    expect(snapshot.variables.password!.value).toBe('hunter2');
    expect(redacted.source).toEqual(snapshot.source);
  });
});
