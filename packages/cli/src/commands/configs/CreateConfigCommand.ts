import type { CreateConfigurationInput } from '@trellis/client';
import { Command, Option, UsageError } from 'clipanion';
import * as t from 'typanion';
import { resolveVineyard } from '../../resolve.js';
import { readLocalSource } from '../../source/localSource.js';
import { collectVariables } from '../../source/variables.js';
import { CloudIdentityCommand } from './CloudIdentityCommand.js';
import { printVine } from './ShowConfigCommand.js';

export class CreateConfigCommand extends CloudIdentityCommand {
  static override paths = [['configs', 'create']];

  static override usage = Command.Usage({
    category: 'Configurations',
    description: 'Create a vine configuration',
    details: `
      A configuration (a vine) is an OpenTofu/Terraform root module in a vineyard. Its source is a git repository (\`--git URL\` with optional \`--ref\` and \`--path\`) or a local directory (\`--dir\`), whose \`*.tf\`, \`*.tf.json\`, \`*.tfvars\` and \`.terraform.lock.hcl\` files are sent inline (\`.terraform/\`, dotfiles and state files are skipped).

      \`--tag TAG\` (repeatable) tags it for \`trellis configs list --tag\` (letters, digits, \`:\`, \`_\`, \`.\` and \`-\`; kept lower case). \`--after CONFIG\` (repeatable) plans it whenever a deploy of CONFIG succeeds, as \`trellis configs set --after\`.

      Variables come from \`--var-file\` (JSON, or \`name = "value"\` lines), then \`-v NAME=VALUE\`, then \`--sensitive-var NAME=VALUE\` (stored but never shown again); later ones win. \`--vineyard\` takes a vineyard name or id.
    `,
    examples: [
      [
        'From a git repository',
        '$0 configs create web --vineyard production --git https://github.com/acme/infra.git --ref main --path web',
      ],
      [
        'From the current directory, with variables',
        '$0 configs create web --vineyard production --dir . -v region=eu-west-1 --sensitive-var db_password=s3cret',
      ],
      [
        'With short-lived AWS credentials from the job token (OIDC, no keys on the agent)',
        '$0 configs create web --vineyard production --dir ./infra --aws-oidc-role arn:aws:iam::123456789012:role/deploy',
      ],
      [
        'With Google Cloud workload identity federation',
        '$0 configs create web --vineyard production --dir ./infra --gcp-workload-provider projects/123/locations/global/workloadIdentityPools/trellis/providers/trellis --gcp-service-account deploy@acme.iam.gserviceaccount.com',
      ],
      [
        'Tagged, and planned after the network deploys',
        '$0 configs create web --vineyard production --dir ./infra --tag team:web --tag prod --after network',
      ],
      [
        'With an AWS role to assume and terraform instead of tofu',
        '$0 configs create web --vineyard production --dir ./infra --engine terraform --aws-role-arn arn:aws:iam::123456789012:role/trellis',
      ],
    ],
  });

  name = Option.String({ name: 'name' });
  vineyard = Option.String('--vineyard', { required: true, description: 'Vineyard name or id' });
  project = Option.String('--project', { description: 'Project name (default: the configuration name)' });
  git = Option.String('--git', { description: 'Git URL of the source' });
  ref = Option.String('--ref', { description: 'Branch, tag or commit of the git source' });
  gitPath = Option.String('--path', { description: 'Directory of the root module inside the git repository' });
  dir = Option.String('--dir', { description: 'Local directory whose configuration files are sent inline' });
  vars = Option.Array('-v,--var', [], { description: 'A variable, NAME=VALUE (repeatable)' });
  sensitiveVars = Option.Array('--sensitive-var', [], { description: 'A sensitive variable, NAME=VALUE (repeatable)' });
  varFiles = Option.Array('--var-file', [], {
    description: 'Variables from a JSON or `name = "value"` file (repeatable)',
  });
  engine = Option.String('--engine', {
    description: 'tofu (default) or terraform',
    validator: t.isEnum(['tofu', 'terraform'] as const),
  });
  engineVersion = Option.String('--engine-version', { description: 'Engine version the agent should use' });
  tags = Option.Array('--tag', [], { description: 'A tag (repeatable): letters, digits, ":", "_", "." and "-"' });
  after = Option.Array('--after', [], {
    description: 'Plan this configuration after a deploy of CONFIG succeeds (repeatable)',
  });
  protected override fieldFlags: Record<string, string> = {
    project_name: '--project',
    'source.url': '--git',
    'source.ref': '--ref',
    'source.path': '--path',
    'source.files': '--dir',
    'variables.*': '--var',
    'engine.name': '--engine',
    'engine.version': '--engine-version',
    tags: '--tag',
    'triggers.after': '--after',
    'triggers.after.*': '--after',
    'cloud_identity.role_arn': '--aws-role-arn',
    'cloud_identity.external_id': '--aws-external-id',
    'cloud_identity.session_duration': '--aws-session-duration',
    'cloud_identity.workload_identity_provider': '--gcp-workload-provider',
    'cloud_identity.service_account_email': '--gcp-service-account',
    'cloud_identity.client_id': '--azure-client-id',
    'cloud_identity.tenant_id': '--azure-tenant-id',
    'cloud_identity.audience': '--oidc-audience',
  };

  override async execute(): Promise<number> {
    if (this.awsOidcRole !== undefined) this.fieldFlags['cloud_identity.role_arn'] = '--aws-oidc-role';
    const source = this.source();
    if (this.externalId !== undefined && this.roleArn === undefined) {
      throw new UsageError('--aws-external-id needs --aws-role-arn');
    }
    if (this.engineVersion !== undefined && this.engine === undefined) {
      throw new UsageError('--engine-version needs --engine');
    }
    const variables = collectVariables({ files: this.varFiles, plain: this.vars, sensitive: this.sensitiveVars });
    const client = this.signedInClient();
    const vineyard = await resolveVineyard(client, this.vineyard);
    const after: string[] = [];
    for (const upstream of this.after) after.push((await client.getConfiguration(upstream)).id);
    const input: CreateConfigurationInput = {
      name: this.name,
      vineyard_id: vineyard.id,
      source,
      ...(this.project !== undefined ? { project_name: this.project } : {}),
      ...(variables ? { variables } : {}),
      ...(this.engine ? { engine: { name: this.engine, version: this.engineVersion ?? null } } : {}),
      ...this.cloudIdentity(),
      ...(this.tags.length > 0 ? { tags: this.tags } : {}),
      ...(after.length > 0 ? { triggers: { after } } : {}),
    };
    const vine = await client.createConfiguration(input);
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(vine);
      return 0;
    }
    terminal.success(`Created configuration ${terminal.err.bold(vine.name)} in vineyard ${vineyard.name}`);
    printVine(terminal, vine);
    return 0;
  }

  private source(): CreateConfigurationInput['source'] {
    if ((this.git === undefined) === (this.dir === undefined)) {
      throw new UsageError('give the source: --git URL or --dir DIRECTORY (one of them)');
    }
    if (this.dir !== undefined) {
      if (this.ref !== undefined || this.gitPath !== undefined) throw new UsageError('--ref and --path go with --git');
      return { type: 'inline', files: readLocalSource(this.dir) };
    }
    return {
      type: 'git',
      url: this.git as string,
      ...(this.ref !== undefined ? { ref: this.ref } : {}),
      ...(this.gitPath !== undefined ? { path: this.gitPath } : {}),
    };
  }
}
