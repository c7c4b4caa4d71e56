import type { Knex } from 'knex';

/** A subscription's payload (docs/reference.md section 16): `full` (the object whole, as until now) or `thin` (its id and version). */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_subscriptions', (t) => {
    t.string('payload', 8).notNullable().defaultTo('full');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_subscriptions', (t) => {
    t.dropColumn('payload');
  });
}
