import type { ConnectVcsRequest, VcsConnectionAnswer } from '@trellis/client';
import { FORK_PULL_REQUEST_MODES, type ForkPullRequestMode } from '@trellis/core';
import { Command, Option, UsageError } from 'clipanion';
import * as t from 'typanion';
import { timestamp } from '../../output/format.js';
import type { Terminal } from '../../output/Terminal.js';
import { renderFields } from '../../output/table.js';
import { TrellisCommand } from '../TrellisCommand.js';

export class ConnectConfigCommand extends TrellisCommand {
  static override paths = [['configs', 'connect']];

  static override usage = Command.Usage({
    category: 'Configurations',
    description: 'Connect a configuration to a repository: pushes plan it, pull requests plan it speculatively',
    details:
      "Names the repository with `--github`, `--gitlab` or `--bitbucket` (`owner/name`; GitLab allows `group/subgroup/project`). The configuration's source becomes that repository at `--branch`. `--path GLOB` (repeatable) plans only pushes touching those files; `--workdir DIR` is the working directory (root module) inside the repository (default: the configuration's current one). Pull requests from forks are not planned unless `--fork-pull-requests without_secrets` (planned with no sensitive variables, cloud identity, identity token or clone credentials) or `with_secrets` (planned like the repository's own); `off` (the default) leaves a neutral commit status instead. No pull request's plan writes or locks the state. Trellis creates the webhook with the token of your sign-in at the provider; `--manual-webhook` prints a URL and a secret to paste at the provider yourself (the secret is shown once). Connecting again replaces the connection and its webhook.",
    examples: [
      [
        'Plan pushes to main touching infra/',
        "$0 configs connect web --github acme/infra --branch main --path 'infra/**'",
      ],
      [
        'Deploy successful plans of pushes',
        '$0 configs connect web --gitlab acme/platform/infra --branch main --auto-deploy',
      ],
      ['Create the webhook yourself', '$0 configs connect web --bitbucket acme/infra --branch main --manual-webhook'],
      [
        "Plan forks' pull requests without secrets",
        '$0 configs connect web --github acme/infra --branch main --fork-pull-requests without_secrets',
      ],
    ],
  });

  config = Option.String({ name: 'name-or-id', required: true });
  github = Option.String('--github', { description: 'A GitHub repository, owner/name' });
  gitlab = Option.String('--gitlab', { description: 'A GitLab project, group[/subgroup]/project' });
  bitbucket = Option.String('--bitbucket', { description: 'A Bitbucket repository, workspace/slug' });
  branch = Option.String('--branch', { required: true, description: 'Pushes to this branch plan the configuration' });
  globs = Option.Array('--path', { description: 'Plan only pushes touching files matching GLOB (repeatable)' });
  workdir = Option.String('--workdir', { description: 'The working directory (root module) inside the repository' });
  autoDeploy = Option.Boolean('--auto-deploy', false, { description: 'Deploy successful plans of pushes' });
  pullRequests = Option.Boolean('--pull-requests', true, {
    description: 'Plan pull requests into the branch (default; --no-pull-requests to stop)',
  });
  forkPullRequests = Option.String('--fork-pull-requests', 'off', {
    description: 'Pull requests from forks: off (default), without_secrets or with_secrets',
    validator: t.isEnum(FORK_PULL_REQUEST_MODES),
  });
  manualWebhook = Option.Boolean('--manual-webhook', false, {
    description: 'Print the webhook URL and secret to create the webhook yourself',
  });

  override async execute(): Promise<number> {
    const given = (
      [
        ['github', this.github],
        ['gitlab', this.gitlab],
        ['bitbucket', this.bitbucket],
      ] as const
    ).filter(([, repository]) => repository !== undefined);
    if (given.length !== 1) {
      throw new UsageError('name the repository with exactly one of --github, --gitlab or --bitbucket OWNER/NAME');
    }
    const [provider, repository] = given[0] as [ConnectVcsRequest['provider'], string];
    // `path` is the working directory here; `--path` gives `paths`.
    this.fieldFlags = { repository: `--${provider}`, path: '--workdir', paths: '--path', webhook: '--manual-webhook' };
    const input: ConnectVcsRequest = {
      provider,
      repository,
      branch: this.branch,
      paths: this.globs ?? [],
      auto_deploy: this.autoDeploy,
      pull_requests: this.pullRequests,
      fork_pull_requests: this.forkPullRequests,
      webhook: this.manualWebhook ? 'manual' : 'auto',
      ...(this.workdir !== undefined ? { path: this.workdir } : {}),
    };
    const connection = await this.signedInClient().connectRepository(this.config, input);
    if (this.json) {
      this.terminal.printJson(connection);
      return 0;
    }
    const { out } = this.terminal;
    this.terminal.print(`Connected ${this.config} to ${provider} ${connection.repository} (${connection.branch}).`);
    printConnection(this.terminal, connection);
    if (connection.webhook_secret) {
      this.terminal.print('');
      this.terminal.print(out.bold('Create the webhook at the provider now; the secret is shown only this once:'));
      this.terminal.print(
        renderFields(
          [
            ['Payload URL', connection.webhook_url],
            ['Secret', connection.webhook_secret],
            ['Content type', 'application/json'],
            ['Events', 'pushes and pull (merge) requests'],
          ],
          out.bold,
        ),
      );
      this.terminal.print('See docs/git.md ("Connecting a vine") for where to paste them at each provider.');
    }
    return 0;
  }
}

const FORK_LABELS: Record<ForkPullRequestMode, string> = {
  off: 'not planned (neutral status)',
  without_secrets: 'planned without secrets',
  with_secrets: 'planned with the secrets',
};

export function printConnection(terminal: Terminal, connection: VcsConnectionAnswer): void {
  const { out } = terminal;
  terminal.print(
    renderFields(
      [
        ['Repository', `${connection.provider} ${connection.repository}`],
        ['Branch', connection.branch],
        ['Paths', connection.paths.length > 0 ? connection.paths.join(', ') : 'every file'],
        ['Pull requests', connection.pull_requests ? 'planned' : 'ignored'],
        ['Fork pull requests', FORK_LABELS[connection.fork_pull_requests]],
        ['Auto deploy', connection.auto_deploy ? 'yes' : 'no'],
        [
          'Webhook',
          connection.webhook_mode === 'auto'
            ? `created by Trellis (hook ${connection.hook_id})`
            : 'manual (created at the provider by you)',
        ],
        ['Webhook URL', connection.webhook_url],
        ['Connected', timestamp(connection.updated_at)],
      ],
      out.bold,
    ),
  );
}
