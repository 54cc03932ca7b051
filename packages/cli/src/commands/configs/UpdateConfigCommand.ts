import type { UpdateConfigurationInput } from '@trellis/client';
import { isUuid } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import * as t from 'typanion';
import { readLocalSource } from '../../source/localSource.js';
import { collectVariables } from '../../source/variables.js';
import { CloudIdentityCommand } from './CloudIdentityCommand.js';
import { printVine } from './ShowConfigCommand.js';
import { explainEditError } from './vineEditErrors.js';

export class UpdateConfigCommand extends CloudIdentityCommand {
  static override paths = [['configs', 'update']];

  static override usage = Command.Usage({
    category: 'Configurations',
    description: 'Change a configuration: its source, variables, engine, cloud identity, tags, execution mode or name',
    details: `
      Only what you give changes. \`--dir\` sends the directory's configuration files again (they replace every inline file); \`--git URL\` (with \`--ref\`, \`--path\`) switches to a git source. \`-v NAME=VALUE\`, \`--sensitive-var NAME=VALUE\` and \`--var-file\` set those variables and leave the others; a value set without \`--sensitive-var\` keeps the variable's sensitivity. \`--unset-var NAME\` removes one.

      \`--aws-role-arn\`, \`--aws-oidc-role\`, \`--gcp-workload-provider\` and \`--azure-client-id\` give it a new cloud identity as at creation; \`--cloud-identity ID\` one it already has (or another configuration's), \`--cloud-identity none\` none.

      \`--tag TAG\` adds a tag and \`--untag TAG\` removes one (both repeatable; the others stay); \`--no-tags\` removes them all. Tags do not make plans stale.

      \`--execution-mode local\` makes the stock CLI (\`tofu plan\`/\`tofu apply\` in a \`cloud {}\` directory) run on its own machine, keeping the state here; \`remote\` (the default) runs them on the agents.

      A change of source, variables, engine or cloud identity makes plans made before it stale: plan again before you deploy. Drift detection, run triggers and approval are set with \`trellis configs set\`.
    `,
    examples: [
      ['Send the edited files again', '$0 configs update web --dir ./infra'],
      ['Change one variable and remove another', '$0 configs update web -v region=eu-west-1 --unset-var legacy_flag'],
      ['Rename it', '$0 configs update web --rename web-eu'],
      ['Tag it eu, and no longer us', '$0 configs update web --tag eu --untag us'],
      ['Let the stock CLI run tofu on its own machine', '$0 configs update web --execution-mode local'],
      ['Use terraform 1.9.8', '$0 configs update web --engine terraform --engine-version 1.9.8'],
      [
        'Deploy with an OIDC role instead',
        '$0 configs update web --aws-oidc-role arn:aws:iam::123456789012:role/deploy',
      ],
    ],
  });

  config = Option.String({ name: 'name-or-id' });
  rename = Option.String('--rename', { description: 'A new name for the configuration' });
  project = Option.String('--project', { description: 'A new project name' });
  git = Option.String('--git', { description: 'Git URL of the source (replaces the source)' });
  ref = Option.String('--ref', { description: 'Branch, tag or commit of the git source' });
  gitPath = Option.String('--path', { description: 'Directory of the root module inside the git repository' });
  dir = Option.String('--dir', { description: 'Local directory whose configuration files replace the inline files' });
  vars = Option.Array('-v,--var', [], { description: 'Set a variable, NAME=VALUE (repeatable)' });
  sensitiveVars = Option.Array('--sensitive-var', [], {
    description: 'Set a sensitive variable, NAME=VALUE (repeatable)',
  });
  varFiles = Option.Array('--var-file', [], { description: 'Set the variables of a JSON or `name = "value"` file' });
  unsetVars = Option.Array('--unset-var', [], { description: 'Remove a variable, NAME (repeatable)' });
  engine = Option.String('--engine', {
    description: 'tofu or terraform',
    validator: t.isEnum(['tofu', 'terraform'] as const),
  });
  engineVersion = Option.String('--engine-version', { description: 'Engine version the agent should use' });
  executionMode = Option.String('--execution-mode', {
    description: 'remote (the stock CLI runs on the agents) or local (on its own machine)',
    validator: t.isEnum(['remote', 'local'] as const),
  });
  tag = Option.Array('--tag', [], { description: 'Add a tag (repeatable)' });
  untag = Option.Array('--untag', [], { description: 'Remove a tag (repeatable)' });
  noTags = Option.Boolean('--no-tags', false, { description: 'Remove every tag' });
  identity = Option.String('--cloud-identity', {
    description: 'Use this existing cloud identity (its id, from `trellis configs show`), or `none`',
  });

  protected override fieldFlags: Record<string, string> = {
    name: '--rename',
    project_name: '--project',
    source: '--git/--dir',
    'source.url': '--git',
    'source.ref': '--ref',
    'source.path': '--path',
    'source.files': '--dir',
    'variables.*': '--var',
    variables: '--var',
    engine: '--engine',
    'engine.name': '--engine',
    'engine.version': '--engine-version',
    cloud_identity: '--cloud-identity',
    execution_mode: '--execution-mode',
    tags: '--tag',
    cloud_identity_id: '--cloud-identity',
    'cloud_identity.role_arn': '--aws-role-arn',
    'cloud_identity.external_id': '--aws-external-id',
    'cloud_identity.session_duration': '--aws-session-duration',
    'cloud_identity.workload_identity_provider': '--gcp-workload-provider',
    'cloud_identity.service_account_email': '--gcp-service-account',
    'cloud_identity.tenant_id': '--azure-tenant-id',
    'cloud_identity.client_id': '--azure-client-id',
    'cloud_identity.audience': '--oidc-audience',
  };

  override async execute(): Promise<number> {
    if (this.awsOidcRole !== undefined) this.fieldFlags['cloud_identity.role_arn'] = '--aws-oidc-role';
    const input = this.input();
    const client = this.signedInClient();
    const tags = await this.tagsAfter(client);
    if (tags !== undefined) input.tags = tags;
    if (Object.keys(input).length === 0) {
      throw new UsageError(
        'nothing to change: give --dir, --git, -v, --sensitive-var, --var-file, --unset-var, --engine, a cloud identity (--cloud-identity, --aws-role-arn, --aws-oidc-role, …), --tag, --untag, --no-tags, --execution-mode, --rename or --project',
      );
    }
    let vine: Awaited<ReturnType<typeof client.updateConfiguration>>;
    try {
      vine = await client.updateConfiguration(this.config, input);
    } catch (error) {
      throw explainEditError(error, this.config);
    }
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(vine);
      return 0;
    }
    const changed = Object.keys(input).map((key) =>
      key === 'cloud_identity_id' ? 'cloud identity' : key.replace('_', ' '),
    );
    terminal.success(`Updated configuration ${terminal.err.bold(vine.name)} (${changed.join(', ')})`);
    if (
      input.source !== undefined ||
      input.variables !== undefined ||
      input.engine !== undefined ||
      input.cloud_identity !== undefined ||
      input.cloud_identity_id !== undefined
    ) {
      terminal.print(`Plans made before this change are stale: run \`trellis plan ${vine.name}\` before you deploy.`);
    }
    printVine(terminal, vine);
    return 0;
  }

  /**
   * The whole list of tags the API's PATCH sets: the configuration's own, with `--tag` added and
   * `--untag` removed (compared lower case, as core keeps them); undefined when neither is given.
   */
  private async tagsAfter(client: ReturnType<UpdateConfigCommand['signedInClient']>): Promise<string[] | undefined> {
    if (this.noTags) {
      if (this.tag.length > 0 || this.untag.length > 0) throw new UsageError('give --no-tags, or --tag and --untag');
      return [];
    }
    if (this.tag.length === 0 && this.untag.length === 0) return undefined;
    const both = this.tag.filter((tag) => this.untag.some((other) => other.toLowerCase() === tag.toLowerCase()));
    if (both.length > 0) throw new UsageError(`--tag and --untag both name ${both[0]}`);
    let current: string[];
    try {
      current = (await client.getConfiguration(this.config)).tags;
    } catch (error) {
      throw explainEditError(error, this.config);
    }
    const removed = new Set(this.untag.map((tag) => tag.toLowerCase()));
    return [...current.filter((tag) => !removed.has(tag)), ...this.tag];
  }

  private input(): UpdateConfigurationInput {
    const input: UpdateConfigurationInput = {};
    if (this.rename !== undefined) input.name = this.rename;
    if (this.project !== undefined) input.project_name = this.project;
    const source = this.source();
    if (source !== undefined) input.source = source;
    const variables: NonNullable<UpdateConfigurationInput['variables']> = {
      ...collectVariables({ files: this.varFiles, plain: this.vars, sensitive: this.sensitiveVars }),
    };
    for (const name of this.unsetVars) {
      if (name in variables) throw new UsageError(`--unset-var ${name}: the same command also sets ${name}`);
      variables[name] = null;
    }
    if (Object.keys(variables).length > 0) input.variables = variables;
    if (this.engineVersion !== undefined && this.engine === undefined) {
      throw new UsageError('--engine-version needs --engine');
    }
    if (this.engine !== undefined) input.engine = { name: this.engine, version: this.engineVersion ?? null };
    if (this.executionMode !== undefined) input.execution_mode = this.executionMode;
    if (this.externalId !== undefined && this.roleArn === undefined) {
      throw new UsageError('--aws-external-id needs --aws-role-arn');
    }
    const identity = this.cloudIdentity();
    if (this.identity !== undefined) {
      if (identity.cloud_identity !== undefined) {
        throw new UsageError(
          'give --cloud-identity or the flags of a new identity (--aws-role-arn, --aws-oidc-role, …), not both',
        );
      }
      if (this.identity === 'none') input.cloud_identity_id = null;
      else if (isUuid(this.identity)) input.cloud_identity_id = this.identity;
      else throw new UsageError(`--cloud-identity takes an identity id or none, got "${this.identity}"`);
    } else if (identity.cloud_identity !== undefined) {
      input.cloud_identity = identity.cloud_identity;
    }
    return input;
  }

  private source(): UpdateConfigurationInput['source'] {
    if (this.git !== undefined && this.dir !== undefined) throw new UsageError('give --git or --dir, not both');
    if (this.git === undefined && (this.ref !== undefined || this.gitPath !== undefined)) {
      throw new UsageError('--ref and --path go with --git');
    }
    if (this.dir !== undefined) return { type: 'inline', files: readLocalSource(this.dir) };
    if (this.git === undefined) return undefined;
    return {
      type: 'git',
      url: this.git,
      ...(this.ref !== undefined ? { ref: this.ref } : {}),
      ...(this.gitPath !== undefined ? { path: this.gitPath } : {}),
    };
  }
}
