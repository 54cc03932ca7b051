/** The resources of a state file as the web's state page lists them (issue 29). */
import { stateResources, ValidationError } from '@trellis/core';
import { describe, expect, it } from 'vitest';

const state = (resources: unknown) => Buffer.from(JSON.stringify({ version: 4, serial: 1, lineage: 'l', resources }));

describe('stateResources', () => {
  it('gives each resource its address, module, mode, type, provider and instances, by module then address', () => {
    const aws = 'provider["registry.opentofu.org/hashicorp/aws"]';
    const resources = stateResources(
      state([
        { module: 'module.net', mode: 'managed', type: 'aws_subnet', name: 'a', provider: aws, instances: [{}, {}] },
        {
          mode: 'managed',
          type: 'aws_s3_bucket',
          name: 'logs',
          provider: aws,
          instances: [{ attributes: { id: 'x' } }],
        },
        { module: 'module.net', mode: 'data', type: 'aws_vpc', name: 'main', provider: aws, instances: [{}] },
      ]),
    );
    expect(resources).toEqual([
      {
        address: 'aws_s3_bucket.logs',
        module: '',
        mode: 'managed',
        type: 'aws_s3_bucket',
        name: 'logs',
        provider: aws,
        instances: 1,
      },
      {
        address: 'module.net.aws_subnet.a',
        module: 'module.net',
        mode: 'managed',
        type: 'aws_subnet',
        name: 'a',
        provider: aws,
        instances: 2,
      },
      {
        address: 'module.net.data.aws_vpc.main',
        module: 'module.net',
        mode: 'data',
        type: 'aws_vpc',
        name: 'main',
        provider: aws,
        instances: 1,
      },
    ]);
  });

  it('has none in a state without resources, and refuses a file that is not JSON', () => {
    expect(stateResources(state(undefined))).toEqual([]);
    expect(() => stateResources(Buffer.from('not json'))).toThrow(ValidationError);
  });
});
