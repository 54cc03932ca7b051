import { extractDeploymentOutputs, redactSensitiveOutputs, ValidationError } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { expectThrown } from './helpers.js';

describe('extractDeploymentOutputs', () => {
  it('reads cluster, argocd and outputs from execution metadata', () => {
    expect(
      extractDeploymentOutputs({
        cluster_name: 'eks',
        cluster_endpoint: 'https://eks.example.test',
        argocd_url: 'https://argo.example.test/ui',
        outputs: { a: 1, b: 'two', c: null, d: { nested: true } },
        unrelated: 'ignored',
      }),
    ).toEqual({
      cluster_name: 'eks',
      cluster_endpoint: 'https://eks.example.test',
      argocd_url: 'https://argo.example.test/ui',
      outputs: { a: 1, b: 'two', c: null, d: { nested: true } },
      sensitive: [],
    });
  });

  it('unwraps OpenTofu `output -json` entries and drops sensitive ones', () => {
    expect(
      extractDeploymentOutputs({
        outputs: {
          shown: { value: 'v', type: 'string', sensitive: false },
          hidden: { value: 'secret', type: 'string', sensitive: true },
          list: { value: [1, 2], type: ['list', 'number'], sensitive: false },
          nulled: { value: null, sensitive: false },
        },
      }).outputs,
    ).toEqual({ shown: 'v', list: [1, 2], nulled: null });
  });

  it('names the sensitive outputs (from the entries and `sensitive_outputs`), never their values', () => {
    const read = extractDeploymentOutputs({
      outputs: {
        shown: { value: 'v', type: 'string', sensitive: false },
        hidden: { value: '***', type: 'string', sensitive: true },
      },
      sensitive_outputs: ['token', 'hidden'],
    });
    expect(read.sensitive).toEqual(['hidden', 'token']);
    expect(JSON.stringify(read)).not.toContain('***');
  });

  it('defaults to nothing', () => {
    expect(extractDeploymentOutputs({})).toEqual({
      cluster_name: null,
      cluster_endpoint: null,
      argocd_url: null,
      outputs: {},
      sensitive: [],
    });
  });

  it.each([
    [{ cluster_name: 1 }, 'execution_metadata.cluster_name'],
    [{ cluster_endpoint: 'eks.internal' }, 'execution_metadata.cluster_endpoint'],
    [{ argocd_url: 'not a url' }, 'execution_metadata.argocd_url'],
    [{ outputs: 'x' }, 'execution_metadata.outputs'],
    [{ outputs: [1] }, 'execution_metadata.outputs'],
  ])('refuses %j', (metadata, path) => {
    const error = expectThrown(() => extractDeploymentOutputs(metadata), ValidationError);
    expect(error.fields).toEqual([expect.objectContaining({ path })]);
  });
});

describe('redactSensitiveOutputs', () => {
  it('replaces the value of sensitive outputs only and leaves the input alone', () => {
    const metadata = {
      cluster_name: 'eks',
      outputs: {
        password: { value: 'hunter2', type: 'string', sensitive: true },
        shown: { value: 'v', type: 'string', sensitive: false },
        plain: 'p',
      },
    };
    expect(redactSensitiveOutputs(metadata)).toEqual({
      cluster_name: 'eks',
      outputs: {
        password: { value: '***', type: 'string', sensitive: true },
        shown: { value: 'v', type: 'string', sensitive: false },
        plain: 'p',
      },
    });
    expect(metadata.outputs.password.value).toBe('hunter2');
  });

  it('leaves metadata without an outputs object as it is', () => {
    expect(redactSensitiveOutputs({ a: 1 })).toEqual({ a: 1 });
    expect(redactSensitiveOutputs({ outputs: [1] })).toEqual({ outputs: [1] });
  });
});
