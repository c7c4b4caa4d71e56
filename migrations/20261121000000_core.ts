import type { Knex } from 'knex';

/** Plans are rows of configuration, not code: change a limit with an UPDATE, not a deploy. */
const PLANS = [
  { name: 'free', api_access: 'read_only', max_keys: 2, webhooks_per_month: 0 },
  { name: 'starter', api_access: 'read_only', max_keys: 5, webhooks_per_month: 10 },
  { name: 'pro', api_access: 'read_write', max_keys: 20, webhooks_per_month: 100 },
  { name: 'enterprise', api_access: 'read_write', max_keys: 200, webhooks_per_month: 1000 },
];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('plans', (t) => {
    t.string('name', 32).primary();
    t.string('api_access', 16).notNullable();
    t.integer('max_keys').notNullable();
    t.integer('webhooks_per_month').notNullable();
  });
  await knex('plans').insert(PLANS);
  await knex.schema.createTable('workspaces', (t) => {
    t.string('id', 64).primary();
    t.string('name', 200).notNullable();
    t.string('plan', 32).notNullable().references('name').inTable('plans');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await knex.schema.createTable('api_keys', (t) => {
    t.string('id', 64).primary();
    t.string('workspace_id', 64).notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    t.string('name', 100).notNullable();
    t.string('prefix', 16).notNullable();
    t.string('token_hash', 64).notNullable().unique();
    t.text('scopes').notNullable();
    t.integer('rate_limit').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_used_at').nullable();
    t.bigInteger('revoked_at').nullable();
    t.index(['workspace_id', 'revoked_at'], 'api_keys_ws_revoked');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_keys');
  await knex.schema.dropTable('workspaces');
  await knex.schema.dropTable('plans');
}
