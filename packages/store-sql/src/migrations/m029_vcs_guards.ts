import type { Knex } from 'knex';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Guards of git-driven runs (issue 23): what a connection does with pull requests from forks,
 * `off` for every connection made before (forks planned nothing they had not already planned
 * with the vine's secrets). Additive: a replica of the previous release writes rows without the
 * column, which then take the default.
 */
export const vcsGuardsMigration: TrellisMigration = {
  name: '029_vcs_guards',
  async up(knex: Knex): Promise<void> {
    await knex.raw(
      "ALTER TABLE vcs_connections ADD COLUMN fork_pull_requests text NOT NULL DEFAULT 'off' " +
        "CONSTRAINT vcs_connections_fork_pull_requests_check CHECK (fork_pull_requests IN ('off', 'without_secrets', 'with_secrets'))",
    );
  },
};
