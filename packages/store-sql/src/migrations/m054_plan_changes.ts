import type { Knex } from 'knex';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * A plan's change document (issue 29, "review a plan"): the redacted attribute diff the agent
 * derives from the engine's plan, kept in the artifact store beside the plan file and recorded
 * on the plan's row (object name, size, sha256). Additive and nullable: a plan of an older
 * agent has none, and a replica of the previous release neither reads nor writes them.
 */
export const planChangesMigration: TrellisMigration = {
  name: '054_plan_changes',
  async up(knex: Knex): Promise<void> {
    await knex.schema.alterTable('plan_artifacts', (t) => {
      t.text('changes_storage_key');
      t.bigInteger('changes_size');
      t.text('changes_sha256');
    });
  },
};
