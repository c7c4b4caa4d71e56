import type { Knex } from 'knex';

/**
 * Every object's `version` (docs/reference.md section 16): 1 on create, one more with each change.
 * The shipped resources' tables get it here, existing rows at version 1 (tables made since by
 * createResourceTable have it already). A drop-in plugin's table gets it from
 * `npm run migrate:make`, which start-up names when it is missing.
 */
const TABLES = ['clients', 'deals', 'leads', 'proposals', 'invoices'];

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    if (!(await knex.schema.hasTable(table)) || (await knex.schema.hasColumn(table, 'version'))) continue;
    await knex.schema.alterTable(table, (t) => {
      t.integer('version').notNullable().defaultTo(1);
    });
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    if (!(await knex.schema.hasTable(table)) || !(await knex.schema.hasColumn(table, 'version'))) continue;
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('version');
    });
  }
}
