import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { complexVariables, writeVariablesFiles } from '../../src/job/variablesFile.js';

describe('the job variables as -var-file files', () => {
  let workspace: string;
  let module: string;
  beforeEach(() => {
    workspace = mkdtempSync(join(tmpdir(), 'trellis-vars-'));
    module = join(workspace, 'src');
    mkdirSync(module);
  });
  afterEach(() => rmSync(workspace, { recursive: true, force: true }));

  it('knows the complex types from .tf and .tf.json, whatever comments, strings and nested blocks say', () => {
    writeFileSync(
      join(module, 'variables.tf'),
      `variable "region" { type = string }
variable "count_of" {
  type = number # not list(string)
}
variable "tags" {
  description = "type = string, { not a block"
  type        = map(string)
  validation {
    condition     = length(var.tags) > 0
    error_message = "type = string"
  }
}
/* variable "commented" { type = list(string) } */
variable "subnets" {
  type = list(object({ cidr = string }))
}
variable "untyped" {}
variable "anything" { type = any }
`,
    );
    writeFileSync(
      join(module, 'more.tf.json'),
      JSON.stringify({ variable: { ports: { type: 'set(number)' }, flag: { type: 'bool' }, plain: {} } }),
    );
    expect([...complexVariables(module)].sort()).toEqual(['anything', 'ports', 'subnets', 'tags']);
  });

  it('writes text as text, JSON of complex variables as JSON and other expressions as HCL, owner-only', () => {
    writeFileSync(
      join(module, 'main.tf'),
      'variable "tags" { type = map(string) }\nvariable "list" { type = list(string) }\nvariable "policy" { type = string }\n',
    );
    const files = writeVariablesFiles(workspace, module, {
      tags: { value: '{"team":"web"}', sensitive: false },
      list: { value: '["a", var_b]', sensitive: false },
      policy: { value: '{"Version":"2012-10-17"}', sensitive: true },
      big: { value: 'x'.repeat(200 * 1024), sensitive: false },
    });
    expect(files).toEqual([join(workspace, 'trellis.tfvars.json'), join(workspace, 'trellis.tfvars')]);
    expect(JSON.parse(readFileSync(files[0], 'utf8'))).toEqual({
      tags: { team: 'web' },
      policy: '{"Version":"2012-10-17"}',
      big: 'x'.repeat(200 * 1024),
    });
    expect(readFileSync(files[1], 'utf8')).toBe('list = ["a", var_b]\n');
    for (const file of files) expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('writes nothing for a job without variables', () => {
    expect(writeVariablesFiles(workspace, module, {})).toEqual([]);
    expect(existsSync(join(workspace, 'trellis.tfvars.json'))).toBe(false);
  });
});
