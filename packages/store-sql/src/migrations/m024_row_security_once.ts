import type { Knex } from 'knex';
import type { DialectName } from '../dialects/Dialect.js';
import { ACTOR_SETTING, OWNER_SETTING } from '../schema.js';
import type { TrellisMigration } from './TrellisMigration.js';

/**
 * Row-level security that costs once per statement, not once per row (issue 17).
 *
 * The policies of m010 and later read `owner_id = ANY (trellis_visible_owners())`. Postgres
 * evaluates a function in a policy's filter again for every row the filter sees (only an index
 * condition evaluates it once), and a SQL-language `SECURITY DEFINER` function with its own
 * `search_path` is planned anew on each call: about 0.05 ms a row. The claim's check that a vine
 * has no running job read every running job of the database through that filter, so one claim
 * took 13 ms with 250 jobs running and grew with each (measured with auto_explain: the claim's
 * candidate query went from 17.5 ms to 1 ms with this change).
 *
 * Two changes, neither of which changes what any role sees or writes:
 * - every such policy wraps the call in a scalar sub-select, `(SELECT trellis_visible_owners())`,
 *   which Postgres runs once per statement as an InitPlan;
 * - the function is PL/pgSQL (same rule, same answers, same privileges), whose plans are cached
 *   per connection.
 *
 * Additive for rolling upgrades: a replica of the previous release runs the same statements
 * under the same policies. New owned tables write their policies with `visibleOwnersCheck`.
 */
export const rowSecurityOnceMigration: TrellisMigration = {
  name: '024_row_security_once',
  async up(knex: Knex, dialect: DialectName): Promise<void> {
    if (dialect !== 'postgres') return;
    const [current] = (await knex.raw('SELECT current_schema() AS schema')).rows as { schema: string }[];
    if (!current) throw new Error('m024: no current schema');
    const s = quoteIdentifier(current.schema);
    await knex.raw(`
      CREATE OR REPLACE FUNCTION ${s}.trellis_visible_owners() RETURNS uuid[]
      LANGUAGE plpgsql STABLE SECURITY DEFINER
      SET search_path = pg_catalog, pg_temp
      AS $$
      DECLARE
        v_owner uuid := nullif(current_setting('${OWNER_SETTING}', true), '')::uuid;
        v_actor uuid := nullif(current_setting('${ACTOR_SETTING}', true), '')::uuid;
      BEGIN
        IF v_owner IS NOT NULL THEN
          IF v_actor = v_owner OR EXISTS (
               SELECT 1 FROM ${s}.org_members m
               WHERE m.org_id = v_owner AND m.user_id = v_actor AND m.joined_at IS NOT NULL) THEN
            RETURN ARRAY[v_owner];
          END IF;
          RETURN ARRAY[]::uuid[];
        END IF;
        IF v_actor IS NOT NULL THEN
          RETURN ARRAY[v_actor] || ARRAY(
            SELECT m.org_id FROM ${s}.org_members m WHERE m.user_id = v_actor AND m.joined_at IS NOT NULL);
        END IF;
        RETURN ARRAY[]::uuid[];
      END
      $$`);

    const policies = (
      await knex.raw(
        `SELECT tablename, policyname, qual, with_check FROM pg_policies
         WHERE schemaname = current_schema() AND qual LIKE '%trellis_visible_owners()%'
         ORDER BY tablename, policyname`,
      )
    ).rows as { tablename: string; policyname: string; qual: string; with_check: string | null }[];
    for (const policy of policies) {
      const column = VISIBLE_OWNERS_QUAL.exec(policy.qual)?.[1];
      if (column === undefined || policy.with_check !== policy.qual) {
        throw new Error(`m024: policy ${policy.policyname} on ${policy.tablename} has an unexpected shape`);
      }
      const check = visibleOwnersCheck(column, current.schema);
      await knex.raw(
        `ALTER POLICY ${quoteIdentifier(policy.policyname)} ON ${quoteIdentifier(policy.tablename)}
         USING (${check}) WITH CHECK (${check})`,
      );
    }
  },
};

/** The policy of m010 as Postgres prints it back: `(owner_id = ANY (trellis_visible_owners()))`. */
const VISIBLE_OWNERS_QUAL = /^\((\w+) = ANY \((?:[\w"]+\.)?trellis_visible_owners\(\)\)\)$/;

/**
 * The condition of an owned table's policy: its owner column is one of the owners the unit of
 * work may see, the list computed once per statement.
 */
export function visibleOwnersCheck(column: string, schema: string): string {
  return `${quoteIdentifier(column)} = ANY ((SELECT ${quoteIdentifier(schema)}.trellis_visible_owners())::uuid[])`;
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
