import { shortenForDisplay } from '@trellis/core';
import { TrellisApiError, type VineDetailView as VineView } from '@trellis/client';
import { printConnection } from './ConnectConfigCommand.js';
import { Command, Option, UsageError } from 'clipanion';
import { describeSource, statusColour, timestamp } from '../../output/format.js';
import type { Terminal } from '../../output/Terminal.js';
import { renderFields } from '../../output/table.js';
import { vineyardName } from '../../output/vineyards.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ShowConfigCommand extends TrellisCommand {
  static override paths = [['configs', 'show']];

  static override usage = Command.Usage({
    category: 'Configurations',
    description: 'Show a vine configuration',
    details:
      'Names the configuration by name or id, or by project name with `--project`. Shows its source, variables (sensitive values hidden), cloud identity and what the last deploy produced.',
    examples: [
      ['By name', '$0 configs show web-cluster'],
      ['By project name', '$0 configs show --project acme-web'],
    ],
  });

  config = Option.String({ name: 'name-or-id', required: false });
  project = Option.String('--project', { description: 'Find the configuration by its project name instead' });

  override async execute(): Promise<number> {
    if ((this.config === undefined) === (this.project === undefined)) {
      throw new UsageError('give a configuration name or id, or --project NAME (not both)');
    }
    const client = this.signedInClient();
    const vine =
      this.project !== undefined
        ? await client.getConfigurationByProjectName(this.project)
        : await client.getConfiguration(this.config as string);
    const connection = await client.getRepositoryConnection(vine.id).catch((error: unknown) => {
      // An older server has no such route: no connection to show either.
      if (error instanceof TrellisApiError && (error.code === 'vcs_not_connected' || error.code === 'route_not_found'))
        return null;
      throw error;
    });
    if (this.json) this.terminal.printJson({ ...vine, vcs: connection });
    else {
      printVine(this.terminal, vine, await vineyardName(client, vine.vineyard_id));
      if (connection) {
        this.terminal.print('');
        this.terminal.print(this.terminal.out.bold('Connected repository'));
        printConnection(this.terminal, connection);
      }
    }
    return 0;
  }
}

/** A vine for people; `vineyardName` (else its id) names its vineyard. */
export function printVine(terminal: Terminal, vine: VineView, vineyardName?: string | null): void {
  const { out } = terminal;
  const variables = Object.entries(vine.variables).map(
    ([name, variable]) => `${name}=${variable.sensitive ? out.dim('(sensitive)') : shortenForDisplay(variable.value)}`,
  );
  const fields: [string, string | null][] = [
    ['Name', vine.name],
    ['ID', vine.id],
    ['Project', vine.project_name],
    ['Vineyard', vineyardName ?? vine.vineyard_id],
    ['Status', `${statusColour(out, vine.status)}${vine.status_message ? ` (${vine.status_message})` : ''}`],
    ['Engine', vine.engine.version ? `${vine.engine.name} ${vine.engine.version}` : vine.engine.name],
    ['Execution', describeExecutionMode(vine.execution_mode)],
    ['Source', describeSource(vine.source)],
    ['Tags', vine.tags.length > 0 ? vine.tags.join(', ') : null],
  ];
  if (vine.source.type === 'inline') fields.push(['Files', Object.keys(vine.source.files).join(', ')]);
  fields.push(
    ['Variables', variables.join(', ')],
    ...cloudIdentityFields(vine.cloud_identity),
    ...deploymentFields(terminal, vine),
    ['Drift', describeDrift(terminal, vine)],
    [
      'Drift checks',
      vine.drift_detection
        ? `every ${vine.drift_detection.interval_minutes} min, next ${timestamp(vine.next_drift_check_at)}`
        : null,
    ],
    ['Runs after', vine.triggers.after.length > 0 ? vine.triggers.after.join(', ') : null],
    [
      'Approval',
      vine.approval?.required
        ? `required before deploy${vine.approval.separate_approver ? ', by someone other than the planner' : ''}`
        : null,
    ],
    ['Created', timestamp(vine.created_at)],
    ['Updated', timestamp(vine.updated_at)],
  );
  terminal.print(renderFields(fields, out.bold));
}

/**
 * What the last deploy produced: the cluster and Argo CD rows only for a vine that has them, and
 * every output with its value (a sensitive one masked: its value is never stored).
 */
function deploymentFields(terminal: Terminal, vine: VineView): [string, string | null][] {
  const { cluster, argocd, outputs } = vine.components ?? { cluster: null, argocd: null, outputs: null };
  const fields: [string, string | null][] = [];
  if (cluster) fields.push(['Cluster', [cluster.name, cluster.endpoint].filter(Boolean).join(' ')]);
  if (argocd) fields.push(['Argo CD', argocd.url]);
  const values = Object.entries(outputs?.values ?? {}).map(
    ([name, value]) => `${name}=${shortenForDisplay(typeof value === 'string' ? value : JSON.stringify(value))}`,
  );
  const sensitive = (outputs?.sensitive ?? []).map((name) => `${name}=${terminal.out.dim('(sensitive)')}`);
  fields.push(['Outputs', [...values, ...sensitive].join(', ')]);
  return fields;
}

/** Where the stock CLI's plans and applies run (issue 27); an older server does not say: remote. */
function describeExecutionMode(mode: VineView['execution_mode'] | undefined): string {
  return mode === 'local'
    ? 'local (the stock CLI runs tofu on its own machine; state in Trellis)'
    : 'remote (the stock CLI runs on the agents)';
}

/** The last drift check: `in sync`, `drifted (+1 ~2 -0)` or `unknown (error)`, and when. */
export function describeDrift(terminal: Terminal, vine: Pick<VineView, 'drift'>): string | null {
  const { out } = terminal;
  const { drift } = vine;
  if (!drift) return null;
  const when = `checked ${timestamp(drift.checked_at)}, job ${drift.job_id}`;
  switch (drift.status) {
    case 'in_sync':
      return `${out.green('in sync')} (${when})`;
    case 'drifted': {
      const c = drift.changes ?? { add: 0, change: 0, destroy: 0 };
      return `${out.red('drifted')}: ${c.add} to add, ${c.change} to change, ${c.destroy} to destroy (${when})`;
    }
    default:
      return `${out.yellow('unknown')}${drift.error ? `: ${drift.error}` : ''} (${when})`;
  }
}

/** The rows of a vine's cloud identity (issue 16): an assumed AWS role, or OIDC federation with one cloud. */
function cloudIdentityFields(identity: VineView['cloud_identity']): [string, string | null][] {
  if (!identity) return [['Cloud identity', null]];
  if (identity.kind !== 'oidc') {
    return [
      ['AWS role', identity.role_arn],
      ['External ID', identity.external_id],
    ];
  }
  switch (identity.provider) {
    case 'aws':
      return [
        ['Cloud identity', 'AWS OIDC (job token, AssumeRoleWithWebIdentity)'],
        ['AWS role', identity.role_arn],
        ['Audience', identity.audience ?? 'sts.amazonaws.com'],
      ];
    case 'gcp':
      return [
        ['Cloud identity', 'Google Cloud OIDC (workload identity federation)'],
        ['Provider', identity.workload_identity_provider],
        ['Service account', identity.service_account_email],
        ['Audience', identity.audience ?? `https://iam.googleapis.com/${identity.workload_identity_provider}`],
      ];
    case 'azure':
      return [
        ['Cloud identity', 'Azure OIDC (workload identity federation)'],
        ['Tenant', identity.tenant_id],
        ['Client', identity.client_id],
        ['Audience', identity.audience ?? 'api://AzureADTokenExchange'],
      ];
  }
}
