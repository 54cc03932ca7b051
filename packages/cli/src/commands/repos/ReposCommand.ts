import { Command, Option } from 'clipanion';
import * as t from 'typanion';
import { renderTable } from '../../output/table.js';
import { TrellisCommand } from '../TrellisCommand.js';

const PROVIDERS = ['github', 'gitlab', 'bitbucket'] as const;

type Repository = Record<string, unknown>;

function text(value: unknown): string {
  if (value === undefined || value === null || value === '') return '-';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export class ReposCommand extends TrellisCommand {
  static override paths = [['repos']];

  static override usage = Command.Usage({
    category: 'Repositories',
    description: 'List your repositories at a git provider (github, gitlab or bitbucket)',
    details:
      'Asks the control plane, which uses the provider token of your web sign-in. When the server cannot list repositories for that provider, its answer is printed as is.',
    examples: [
      ['GitHub repositories', '$0 repos github'],
      ['Clone URLs of GitLab projects', "$0 repos gitlab --json | jq -r '.[].clone_url'"],
    ],
  });

  provider = Option.String({ name: 'github|gitlab|bitbucket', validator: t.isEnum(PROVIDERS) });

  override async execute(): Promise<number> {
    const repositories = (await this.signedInClient().listRepositories(this.provider)) as Repository[];
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(repositories);
      return 0;
    }
    if (repositories.length === 0) {
      terminal.note(`No ${this.provider} repositories.`);
      return 0;
    }
    terminal.print(
      renderTable(
        ['NAME', 'VISIBILITY', 'DEFAULT BRANCH', 'URL'],
        repositories.map((repository) => [
          text(repository.full_name ?? repository.name),
          repository.private === undefined ? '-' : repository.private ? 'private' : 'public',
          text(repository.default_branch),
          text(repository.clone_url ?? repository.url ?? repository.html_url),
        ]),
        terminal.out.bold,
      ),
    );
    return 0;
  }
}
