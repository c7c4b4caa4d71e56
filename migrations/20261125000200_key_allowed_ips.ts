import type { Knex } from 'knex';

/** A key's IP allowlist (docs/reference.md section 15): a JSON array of addresses and CIDR ranges, or null for anywhere. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.text('allowed_ips').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.dropColumn('allowed_ips');
  });
}
