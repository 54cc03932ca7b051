import { changesByModule, changeMark, MAX_ATTRIBUTE_CHANGES, MAX_PLAN_VALUE_CHARS } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { planChangeDocument } from '../../src/job/planChangeDocument.js';

const SECRET = 'hunter2-very-secret-password';

/** A `resource_changes` entry of `show -json`, as OpenTofu writes one. */
function entry(address: string, change: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const [path, name = ''] = [address, address.split('.').pop()];
  const type = path.replace(/^(module\.[^.]+\.)*/, '').split('.')[0];
  return {
    address,
    mode: 'managed',
    type,
    name,
    provider_name: 'registry.opentofu.org/hashicorp/aws',
    change,
    ...extra,
  };
}

describe("a plan's change document", () => {
  it('lists the attributes a create sets, the unknown ones as known after apply, nulls left out', () => {
    const document = planChangeDocument({
      resource_changes: [
        entry('aws_s3_bucket.logs', {
          actions: ['create'],
          before: null,
          after: { bucket: 'acme-logs', force_destroy: false, tags: { Team: 'infra' }, policy: null },
          after_unknown: { arn: true, id: true, tags: {} },
          before_sensitive: false,
          after_sensitive: { tags: {} },
        }),
      ],
    });
    expect(document.resource_changes).toEqual([
      {
        address: 'aws_s3_bucket.logs',
        module_address: null,
        type: 'aws_s3_bucket',
        name: 'logs',
        actions: ['create'],
        attributes: [
          { path: 'bucket', after: { value: 'acme-logs' } },
          { path: 'force_destroy', after: { value: false } },
          { path: 'tags.Team', after: { value: 'infra' } },
          { path: 'arn', after: { unknown: true } },
          { path: 'id', after: { unknown: true } },
        ],
        attributes_omitted: 0,
        unchanged_attributes: 0,
      },
    ]);
    expect(document.truncated).toBe(false);
  });

  it('masks nested sensitive values, whole sensitive objects and lists, and never copies them', () => {
    const plan = {
      resource_changes: [
        entry(
          'module.db.aws_db_instance.main',
          {
            actions: ['update'],
            before: {
              identifier: 'main',
              password: 'old-password-value',
              settings: { user: 'admin', secret: 'old-nested-secret' },
              replicas: ['r1-old-secret', 'r2-old-secret'],
              port: 5432,
            },
            after: {
              identifier: 'main',
              password: SECRET,
              settings: { user: 'admin', secret: `${SECRET}-nested` },
              replicas: [`${SECRET}-r1`],
              port: 5433,
            },
            after_unknown: {},
            before_sensitive: { password: true, settings: { secret: true }, replicas: true },
            after_sensitive: { password: true, settings: { secret: true }, replicas: true },
          },
          { module_address: 'module.db' },
        ),
      ],
    };
    const document = planChangeDocument(plan);
    const text = JSON.stringify(document);
    for (const hidden of [SECRET, 'old-password-value', 'old-nested-secret', 'r1-old-secret']) {
      expect(text).not.toContain(hidden);
    }
    const [change] = document.resource_changes;
    expect(change?.module_address).toBe('module.db');
    expect(change?.attributes).toEqual([
      { path: 'password', before: { sensitive: true }, after: { sensitive: true } },
      { path: 'settings.secret', before: { sensitive: true }, after: { sensitive: true } },
      // A sensitive list is one masked value: not even its length shows.
      { path: 'replicas', before: { sensitive: true }, after: { sensitive: true } },
      { path: 'port', before: { value: 5432 }, after: { value: 5433 } },
    ]);
    // identifier and settings.user are the same on both sides.
    expect(change?.unchanged_attributes).toBe(2);
  });

  it('counts a sensitive value that stays the same as unchanged, without showing it', () => {
    const document = planChangeDocument({
      resource_changes: [
        entry('terraform_data.x', {
          actions: ['update'],
          before: { input: SECRET, triggers_replace: 'a' },
          after: { input: SECRET, triggers_replace: 'b' },
          before_sensitive: { input: true },
          after_sensitive: { input: true },
          after_unknown: {},
        }),
      ],
    });
    expect(document.resource_changes[0]?.attributes).toEqual([
      { path: 'triggers_replace', before: { value: 'a' }, after: { value: 'b' } },
    ]);
    expect(document.resource_changes[0]?.unchanged_attributes).toBe(1);
    expect(JSON.stringify(document)).not.toContain(SECRET);
  });

  it('shows a replacement with the attributes that force it and the reason', () => {
    const document = planChangeDocument({
      resource_changes: [
        entry(
          'aws_instance.web',
          {
            actions: ['delete', 'create'],
            before: { ami: 'ami-1', instance_type: 't3.micro', id: 'i-123', tags: { Name: 'web' } },
            after: { ami: 'ami-2', instance_type: 't3.micro', tags: { Name: 'web' } },
            after_unknown: { id: true },
            before_sensitive: {},
            after_sensitive: {},
            replace_paths: [['ami']],
          },
          { action_reason: 'replace_because_cannot_update' },
        ),
        entry('aws_instance.api', {
          actions: ['create', 'delete'],
          before: { ami: 'ami-1' },
          after: { ami: 'ami-1' },
          after_unknown: {},
          replace_paths: [['ami']],
        }),
      ],
    });
    const [web, api] = document.resource_changes;
    expect(web?.action_reason).toBe('replace_because_cannot_update');
    expect(web?.attributes).toEqual([
      { path: 'ami', before: { value: 'ami-1' }, after: { value: 'ami-2' }, forces_replacement: true },
      { path: 'id', before: { value: 'i-123' }, after: { unknown: true } },
    ]);
    expect(web?.unchanged_attributes).toBe(2);
    expect(changeMark(web?.actions ?? [])).toBe('-/+');
    expect(changeMark(api?.actions ?? [])).toBe('+/-');
  });

  it('lists what a delete removes, lists of objects by index, odd keys quoted', () => {
    const document = planChangeDocument({
      resource_changes: [
        entry('aws_security_group.old', {
          actions: ['delete'],
          before: {
            name: 'old',
            ingress: [
              { from_port: 80, cidr_blocks: ['0.0.0.0/0'] },
              { from_port: 443, cidr_blocks: [] },
            ],
            labels: { 'app.kubernetes.io/name': 'web' },
            description: null,
          },
          after: null,
          after_unknown: {},
          before_sensitive: {},
          after_sensitive: false,
        }),
      ],
    });
    expect(document.resource_changes[0]?.attributes).toEqual([
      { path: 'name', before: { value: 'old' } },
      { path: 'ingress[0].from_port', before: { value: 80 } },
      { path: 'ingress[0].cidr_blocks[0]', before: { value: '0.0.0.0/0' } },
      { path: 'ingress[1].from_port', before: { value: 443 } },
      { path: 'ingress[1].cidr_blocks', before: { value: [] } },
      { path: 'labels["app.kubernetes.io/name"]', before: { value: 'web' } },
    ]);
    expect(changeMark(['delete'])).toBe('-');
  });

  it('leaves no-op and read changes out, as the results do', () => {
    const document = planChangeDocument({
      resource_changes: [
        entry('aws_vpc.main', { actions: ['no-op'], before: { cidr: 'x' }, after: { cidr: 'x' } }),
        { ...entry('data.aws_ami.ubuntu', { actions: ['read'], before: null, after: {} }), mode: 'data' },
        entry('aws_vpc.other', { actions: ['create'], before: null, after: { cidr: '10.0.0.0/16' } }),
      ],
    });
    expect(document.resource_changes.map((change) => change.address)).toEqual(['aws_vpc.other']);
  });

  it('masks a string that holds a secret of the job even when the plan does not mark it', () => {
    const document = planChangeDocument(
      {
        resource_changes: [
          entry('terraform_data.leak', {
            actions: ['create'],
            before: null,
            after: { input: `prefix-${SECRET}-suffix`, tags: { [SECRET]: 'key-holds-it' } },
            after_unknown: {},
            after_sensitive: {},
          }),
        ],
      },
      { isSecret: (text) => text.includes(SECRET) },
    );
    expect(JSON.stringify(document)).not.toContain(SECRET);
    expect(document.resource_changes[0]?.attributes).toEqual([
      { path: 'input', after: { sensitive: true } },
      { path: 'tags["(sensitive key)"]', after: { value: 'key-holds-it' } },
    ]);
  });

  it('lists output changes, sensitive ones masked and unknown ones known after apply', () => {
    const document = planChangeDocument({
      resource_changes: [],
      output_changes: {
        endpoint: { actions: ['update'], before: 'a.example', after: 'b.example', after_unknown: false },
        // OpenTofu marks both sides of a sensitive output, the null `before` of a create too.
        db_password: {
          actions: ['create'],
          before: null,
          after: SECRET,
          after_unknown: false,
          before_sensitive: true,
          after_sensitive: true,
        },
        id: { actions: ['create'], before: null, after: null, after_unknown: true },
        conn: {
          actions: ['create'],
          before: null,
          after: { host: 'db', password: SECRET },
          after_unknown: {},
          after_sensitive: { password: true },
        },
        same: { actions: ['no-op'], before: 'x', after: 'x' },
      },
    });
    expect(JSON.stringify(document)).not.toContain(SECRET);
    expect(document.output_changes).toEqual([
      {
        name: 'endpoint',
        actions: ['update'],
        attributes: [{ path: 'endpoint', before: { value: 'a.example' }, after: { value: 'b.example' } }],
        attributes_omitted: 0,
      },
      {
        name: 'db_password',
        actions: ['create'],
        attributes: [{ path: 'db_password', after: { sensitive: true } }],
        attributes_omitted: 0,
      },
      {
        name: 'id',
        actions: ['create'],
        attributes: [{ path: 'id', after: { unknown: true } }],
        attributes_omitted: 0,
      },
      {
        name: 'conn',
        actions: ['create'],
        attributes: [
          { path: 'conn.host', after: { value: 'db' } },
          { path: 'conn.password', after: { sensitive: true } },
        ],
        attributes_omitted: 0,
      },
    ]);
  });

  it('is bounded: long values cut, attributes and resources past the limits counted, truncated said', () => {
    const many = Object.fromEntries(Array.from({ length: MAX_ATTRIBUTE_CHANGES + 5 }, (_, i) => [`a${i}`, i]));
    const resources = Array.from({ length: 50 }, (_, i) =>
      entry(`terraform_data.r${i}`, {
        actions: ['create'],
        before: null,
        after: { input: 'x'.repeat(MAX_PLAN_VALUE_CHARS + 10), ...(i === 0 ? many : {}) },
        after_unknown: {},
      }),
    );
    const document = planChangeDocument(
      { resource_changes: resources, output_changes: { out: { actions: ['create'], before: null, after: 'v' } } },
      { maxBytes: 32 * 1024 },
    );
    const [first] = document.resource_changes;
    expect(first?.attributes).toHaveLength(MAX_ATTRIBUTE_CHANGES);
    expect(first?.attributes_omitted).toBe(6);
    expect(first?.attributes[0]?.after).toEqual({ value: 'x'.repeat(MAX_PLAN_VALUE_CHARS), truncated: true });
    expect(document.resource_changes.length).toBeLessThan(50);
    expect(document.resource_changes.length + document.resource_changes_omitted).toBe(50);
    expect(document.truncated).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(document))).toBeLessThanOrEqual(32 * 1024);
  });

  it('never throws on a malformed plan', () => {
    for (const plan of [null, 'x', {}, { resource_changes: 'x' }, { resource_changes: [null, { address: 1 }] }]) {
      expect(planChangeDocument(plan).resource_changes).toEqual([]);
    }
  });

  it('groups the changes by module, parents before children, the root first', () => {
    const document = planChangeDocument({
      resource_changes: [
        entry(
          'module.a.module.b.x.one',
          { actions: ['create'], before: null, after: {} },
          {
            module_address: 'module.a.module.b',
          },
        ),
        entry('y.two', { actions: ['delete'], before: {}, after: null }),
        entry(
          'module.c["k.1"].z.three',
          { actions: ['update'], before: { v: 1 }, after: { v: 2 } },
          {
            module_address: 'module.c["k.1"]',
          },
        ),
      ],
    });
    expect(
      changesByModule(document.resource_changes).map((group) => [
        group.module_address,
        group.depth,
        group.resources.map((r) => r.address),
      ]),
    ).toEqual([
      [null, 0, ['y.two']],
      ['module.a', 1, []],
      ['module.a.module.b', 2, ['module.a.module.b.x.one']],
      ['module.c["k.1"]', 1, ['module.c["k.1"].z.three']],
    ]);
  });
});
