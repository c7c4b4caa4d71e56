import type { Knex } from 'knex';

/**
 * Usage metering (docs/reference.md section 10): the public API's answers per key and UTC hour, by
 * outcome. Written in batches by each server process (admin/usage.ts), kept 30 days.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('key_usage', (t) => {
    t.string('key_id', 64).notNullable().references('id').inTable('api_keys').onDelete('CASCADE');
    t.string('workspace_id', 64).notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    // The hour's first millisecond (UTC).
    t.bigInteger('hour').notNullable();
    t.integer('requests').notNullable();
    t.integer('rate_limited').notNullable();
    t.integer('client_errors').notNullable();
    t.integer('server_errors').notNullable();
    t.primary(['key_id', 'hour']);
    t.index(['workspace_id', 'hour'], 'key_usage_ws_hour');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('key_usage');
}
