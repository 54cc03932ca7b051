import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseJsonOutput } from '../../src/engine/Engine.js';
import { parseDeployMetadata } from '../../src/job/deployMetadata.js';
import { engineEnvironment, withStateCredentials } from '../../src/job/engineEnvironment.js';
import { outputsMetadata, resourceChanges, summarizePlan } from '../../src/job/executionMetadata.js';
import { safeJoin } from '../../src/job/fetchSource.js';
import { declaresBackend } from '../../src/job/stateBackend.js';

describe('the plan summary', () => {
  it('counts creates, updates and deletes, a replacement as one add and one destroy', () => {
    const change = (...actions: string[]) => ({ change: { actions } });
    const plan = {
      resource_changes: [
        change('create'),
        change('create'),
        change('update'),
        change('delete', 'create'),
        change('create', 'delete'),
        change('delete'),
        change('no-op'),
        change('read'),
      ],
    };
    expect(summarizePlan(plan)).toEqual({ add: 4, change: 1, destroy: 3 });
    expect(summarizePlan({})).toEqual({ add: 0, change: 0, destroy: 0 });
  });
});

describe('the changed resources a PLAN reports', () => {
  it('lists each changing address with its actions, leaves no-ops and reads out, and caps the list', () => {
    const entry = (address: string, ...actions: string[]) => ({ address, change: { actions } });
    const plan = {
      resource_changes: [
        entry('aws_s3_bucket.logs', 'create'),
        entry('aws_instance.web', 'no-op'),
        entry('data.aws_ami.ubuntu', 'read'),
        entry('aws_instance.api', 'delete', 'create'),
        entry('module.net.aws_vpc.main', 'update'),
        entry('aws_iam_role.old', 'delete'),
        { address: 'broken' },
      ],
    };
    expect(resourceChanges(plan)).toEqual({
      resource_changes: [
        { address: 'aws_s3_bucket.logs', actions: ['create'] },
        { address: 'aws_instance.api', actions: ['delete', 'create'] },
        { address: 'module.net.aws_vpc.main', actions: ['update'] },
        { address: 'aws_iam_role.old', actions: ['delete'] },
      ],
      resource_changes_omitted: 0,
    });
    const capped = resourceChanges(plan, 2);
    expect(capped.resource_changes.map((c) => c.address)).toEqual(['aws_s3_bucket.logs', 'aws_instance.api']);
    expect(capped.resource_changes_omitted).toBe(2);
    expect(resourceChanges({})).toEqual({ resource_changes: [], resource_changes_omitted: 0 });
  });
});

describe('the outputs a DEPLOY reports', () => {
  it('keeps sensitive values on the machine and the vine fields only when well-formed', () => {
    const report = outputsMetadata({
      cluster_name: { value: 'prod', type: 'string', sensitive: false },
      cluster_endpoint: { value: 'not a url', type: 'string', sensitive: false },
      argocd_url: { value: 'https://argocd.example.com', type: 'string', sensitive: false },
      kubeconfig: { value: 'apiVersion: v1 secret', type: 'string', sensitive: true },
      nodes: { value: [1, 2], type: ['list', 'number'], sensitive: false },
    });
    expect(report.metadata).toEqual({
      cluster_name: 'prod',
      argocd_url: 'https://argocd.example.com',
      outputs: {
        cluster_name: { value: 'prod', type: 'string', sensitive: false },
        cluster_endpoint: { value: 'not a url', type: 'string', sensitive: false },
        argocd_url: { value: 'https://argocd.example.com', type: 'string', sensitive: false },
        nodes: { value: [1, 2], type: ['list', 'number'], sensitive: false },
      },
      sensitive_outputs: ['kubeconfig'],
    });
    expect(JSON.stringify(report.metadata)).not.toContain('apiVersion');
    expect(report.notes).toEqual(['output cluster_endpoint is not a URL; it is kept with the other outputs only']);
  });

  it('reads JSON printed after engine warnings', () => {
    expect(parseJsonOutput('\nWarning: Unable to open CLI configuration file\n\n{"a":{"value":1}}\n')).toEqual({
      a: { value: 1 },
    });
    expect(parseJsonOutput('')).toEqual({});
    expect(() => parseJsonOutput('Error: no state')).toThrow(/printed no JSON/);
  });
});

describe('the deploy metadata of a cloud worker', () => {
  it('reads source, variables, engine, backend config and identity', () => {
    const parsed = parseDeployMetadata('w1', {
      deploy: {
        source: { type: 'git', url: 'https://git.example.com/agents.git', ref: 'v3', path: 'aws' },
        variables: { region: 'eu-west-1', token: { value: 't0ken-value', sensitive: true } },
        engine: { name: 'terraform' },
        backend_config: { bucket: 'state', encrypt: true },
        cloud_identity: { provider: 'aws', role_arn: 'arn:aws:iam::1:role/r', external_id: 'x-1' },
      },
    });
    expect(parsed).toEqual({
      source: { type: 'git', url: 'https://git.example.com/agents.git', ref: 'v3', path: 'aws' },
      variables: {
        region: { value: 'eu-west-1', sensitive: false },
        token: { value: 't0ken-value', sensitive: true },
      },
      engine: 'terraform',
      backendConfig: { bucket: 'state', encrypt: 'true' },
      cloudIdentity: { provider: 'aws', role_arn: 'arn:aws:iam::1:role/r', external_id: 'x-1' },
    });
  });

  it('is null without deploy metadata and refuses a malformed one', () => {
    expect(parseDeployMetadata('w1', { region: 'eu' })).toBeNull();
    expect(() => parseDeployMetadata('w1', { deploy: { source: { type: 'svn' } } })).toThrow(/deploy.source/);
    expect(() =>
      parseDeployMetadata('w1', { deploy: { source: { type: 'inline', files: {} }, engine: 'pulumi' } }),
    ).toThrow(/deploy.engine/);
  });
});

describe('the engine environment', () => {
  it('passes the host through minus the agent’s own settings, and never the job variables', () => {
    const env = engineEnvironment({
      PATH: '/usr/bin',
      HOME: '/home/a',
      TRELLIS_WORKER_TOKEN: 'tok',
      TF_VAR_stale: 'x',
      TF_HTTP_PASSWORD: 'old',
    });
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/a',
      TF_IN_AUTOMATION: '1',
      TF_INPUT: '0',
      CHECKPOINT_DISABLE: '1',
    });
    // Only for the backend the agent wrote itself.
    expect(withStateCredentials(env, { username: 'worker-id', password: 'trj_job-token' })).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/a',
      TF_IN_AUTOMATION: '1',
      TF_INPUT: '0',
      CHECKPOINT_DISABLE: '1',
      TF_HTTP_USERNAME: 'worker-id',
      TF_HTTP_PASSWORD: 'trj_job-token',
    });
  });
});

describe('the workspace', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-agent-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('knows when a configuration declares its own backend', () => {
    writeFileSync(join(dir, 'main.tf'), '# backend "s3" {} in a comment\nresource "terraform_data" "x" {}\n');
    expect(declaresBackend(dir)).toBe(false);
    writeFileSync(join(dir, 'backend.tf'), 'terraform {\n  backend "s3" {\n    bucket = "b"\n  }\n}\n');
    expect(declaresBackend(dir)).toBe(true);
  });

  it('never writes outside the workspace', () => {
    expect(safeJoin('/w', 'modules/a/main.tf', 'file')).toBe('/w/modules/a/main.tf');
    expect(() => safeJoin('/w', '../etc/passwd', 'file')).toThrow(/relative path inside/);
    expect(() => safeJoin('/w', '/etc/passwd', 'file')).toThrow(/relative path inside/);
    expect(() => safeJoin('/w', 'a/../../b', 'file')).toThrow(/relative path inside/);
  });
});
