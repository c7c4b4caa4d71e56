import type { Knex } from 'knex';

/**
 * Keys that expire (docs/reference.md section 15): a key's `expires_at` (null: it lives until revoked), and
 * a workspace's `max_key_lifetime_days` (null: no policy), within which every new key must
 * expire.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.bigInteger('expires_at').nullable();
  });
  await knex.schema.alterTable('workspaces', (t) => {
    t.integer('max_key_lifetime_days').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workspaces', (t) => {
    t.dropColumn('max_key_lifetime_days');
  });
  await knex.schema.alterTable('api_keys', (t) => {
    t.dropColumn('expires_at');
  });
}
