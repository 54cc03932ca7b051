/**
 * The registry page's reader of a module's files (issue 28): `variable` and `output` blocks of the
 * root `*.tf` files and the README, through HCL's awkward corners (strings holding braces,
 * interpolations, heredocs, comments, multi-line types and defaults, one-line blocks).
 */
import { describe, expect, it } from 'vitest';
import { describeModule, isDescribedFile } from '../../src/registry/moduleFiles/describeModule.js';
import { parseHcl } from '../../src/registry/moduleFiles/hclBody.js';
import { HclSyntaxError } from '../../src/registry/moduleFiles/hclTokens.js';

const VARIABLES_TF = `
# The network's inputs.
variable "cidr_block" {
  description = "The VPC's CIDR block, e.g. \\"10.0.0.0/16\\""
  type        = string
  default     = "10.0.0.0/16" // the usual one
}

variable "subnets" {
  description = <<-EOT
    Subnets to create, by name.
    A brace { here closes nothing.
  EOT
  type = map(object({
    cidr = string
    az   = optional(string, "a")
  }))
  default = {
    public  = { cidr = "10.0.1.0/24", az = "a" }
    "private-1" = {
      cidr = "10.0.2.0/24"
    }
  }
}

/* A required one:
   no default. */
variable "name" {
  type = string
}

variable "tags" { default = [] }
variable "zone_count" { default = -3 }
variable "prefix" {
  default = "\${var.name}-vpc"
}
variable "password" {
  type      = string
  sensitive = true
  default   = "hunter2"
}
variable "enabled" {
  default  = true
  nullable = false
  validation {
    condition     = var.enabled != null && length("}") == 1
    error_message = "Must be set."
  }
}
`;

const OUTPUTS_TF = `
output "vpc_id" {
  description = "The id of the VPC."
  value       = aws_vpc.this.id
}
output "endpoints" {
  value     = { for name, s in aws_subnet.this : name => s.id }
  sensitive = true
}
locals { description = "not an output" }
`;

describe('describeModule', () => {
  const described = describeModule([
    { path: 'variables.tf', text: VARIABLES_TF },
    { path: 'outputs.tf', text: OUTPUTS_TF },
    { path: 'README.md', text: '# VPC\n\nA network.\n' },
    { path: 'modules/sub/variables.tf', text: 'variable "not_root" {}' },
  ]);

  it('reads every root variable, in name order, with its description, type and default', () => {
    expect(described.inputs.map((input) => input.name)).toEqual([
      'cidr_block',
      'enabled',
      'name',
      'password',
      'prefix',
      'subnets',
      'tags',
      'zone_count',
    ]);
    const byName = Object.fromEntries(described.inputs.map((input) => [input.name, input]));
    expect(byName.cidr_block).toEqual({
      name: 'cidr_block',
      description: 'The VPC\'s CIDR block, e.g. "10.0.0.0/16"',
      type: 'string',
      required: false,
      default: '"10.0.0.0/16"',
      default_value: '10.0.0.0/16',
      sensitive: false,
    });
    expect(byName.subnets?.description).toBe('Subnets to create, by name.\nA brace { here closes nothing.\n');
    expect(byName.subnets?.type).toBe('map(object({\n    cidr = string\n    az   = optional(string, "a")\n  }))');
    expect(byName.subnets?.default_value).toEqual({
      public: { cidr: '10.0.1.0/24', az: 'a' },
      'private-1': { cidr: '10.0.2.0/24' },
    });
    expect(byName.name).toMatchObject({ required: true, default: null, type: 'string', description: null });
    expect(byName.name && 'default_value' in byName.name).toBe(false);
    expect(byName.tags).toMatchObject({ required: false, default: '[]', default_value: [], type: null });
    expect(byName.zone_count?.default_value).toBe(-3);
    expect(byName.enabled?.default_value).toBe(true);
  });

  it('keeps a default that is not a literal as written, without a value', () => {
    const prefix = described.inputs.find((input) => input.name === 'prefix');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: HCL's interpolation, as written
    expect(prefix?.default).toBe('"${var.name}-vpc"');
    expect(prefix && 'default_value' in prefix).toBe(false);
  });

  it("never shows a sensitive variable's default", () => {
    const password = described.inputs.find((input) => input.name === 'password');
    expect(password).toMatchObject({ sensitive: true, required: false, default: null });
    expect(JSON.stringify(described)).not.toContain('hunter2');
  });

  it('reads the outputs and the README, and nothing under a sub-directory', () => {
    expect(described.outputs).toEqual([
      { name: 'endpoints', description: null, sensitive: true },
      { name: 'vpc_id', description: 'The id of the VPC.', sensitive: false },
    ]);
    expect(described.readme).toBe('# VPC\n\nA network.\n');
    expect(described.problems).toEqual([]);
    expect(JSON.stringify(described)).not.toContain('not_root');
  });

  it('names a file that is not HCL and still describes the others', () => {
    const result = describeModule([
      { path: 'broken.tf', text: 'variable "a" {\n  default = "x"\n' },
      { path: 'main.tf', text: 'variable "b" {}\n' },
      { path: 'README', text: 'plain readme' },
    ]);
    expect(result.inputs.map((input) => input.name)).toEqual(['b']);
    expect(result.problems).toEqual([{ path: 'broken.tf', message: 'line 3: a block is never closed' }]);
    expect(result.readme).toBe('plain readme');
  });

  it('answers no README and no inputs for a module of none', () => {
    expect(describeModule([{ path: 'main.tf', text: 'resource "null_resource" "x" {}' }])).toEqual({
      readme: null,
      inputs: [],
      outputs: [],
      problems: [],
    });
  });
});

describe('parseHcl', () => {
  it('reads nested blocks, labels and attributes', () => {
    const body = parseHcl('terraform {\n  required_version = ">= 1.6"\n  backend "s3" { bucket = "b" }\n}\n');
    expect(body.blocks).toHaveLength(1);
    const terraform = body.blocks[0];
    expect(terraform?.body.attributes.required_version?.literal).toBe('>= 1.6');
    expect(terraform?.body.blocks[0]).toMatchObject({ type: 'backend', labels: ['s3'] });
    expect(terraform?.body.blocks[0]?.body.attributes.bucket?.literal).toBe('b');
  });

  it('treats $${ as a literal ${ and a template otherwise', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: HCL's interpolation, as written
    const body = parseHcl('a = "$${not}"\nb = "x${1 + 1}"\nc = <<EOT\nliteral\nEOT\n');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: HCL's escaped interpolation, read
    expect(body.attributes.a?.literal).toBe('${not}');
    expect('literal' in (body.attributes.b ?? {})).toBe(false);
    expect(body.attributes.c?.literal).toBe('literal\n');
  });

  it('reads escapes, unicode and exponents', () => {
    const body = parseHcl('s = "tab\\there \\u00e9"\nn = 1.5e3\n');
    expect(body.attributes.s?.literal).toBe('tab\there é');
    expect(body.attributes.n?.literal).toBe(1500);
  });

  it.each([
    ['a = "open\n', 'line 1: a quoted string runs past the end of its line'],
    ['a = [1, 2\n', 'line 1: a bracket is never closed (expected ])'],
    ['a = )\n', 'line 1: an unmatched )'],
    ['a =\n', 'line 1: an attribute has no value'],
    ['"x" = 1\n', 'line 1: expected a name, found a string'],
    ['/* never closed', 'line 1: a /* comment is never closed'],
    ['a = <<EOT\nno end\n', 'line 1: the heredoc EOT is never closed'],
    ['\n\nvariable "x" = {\n}', 'line 3: expected a label or { after variable, found "="'],
    ['a = "\\q"', 'line 1: \\q is not an escape of HCL'],
  ])('refuses %j', (source, message) => {
    expect(() => parseHcl(source)).toThrow(HclSyntaxError);
    expect(() => parseHcl(source)).toThrow(message);
  });
});

describe('isDescribedFile', () => {
  it.each([
    ['main.tf', true],
    ['README.md', true],
    ['readme', true],
    ['Readme.MD', true],
    ['modules/x/main.tf', false],
    ['main.tf.json', false],
    ['docs/README.md', false],
    ['terraform.tfvars', false],
  ])('%s: %s', (path, expected) => {
    expect(isDescribedFile(path)).toBe(expected);
  });
});
