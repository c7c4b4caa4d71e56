import type { Knex } from 'knex';

/**
 * Per-subscription throughput (docs/reference.md section 11): `max_deliveries_per_second`, and the token
 * buckets the workers share when there is no Redis (webhooks/throttle.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_subscriptions', (t) => {
    t.integer('max_deliveries_per_second').nullable();
  });
  await knex.schema.createTable('webhook_throttle', (t) => {
    t.string('subscription_id', 64).primary().references('id').inTable('webhook_subscriptions').onDelete('CASCADE');
    t.double('tokens').notNullable();
    t.bigInteger('refilled_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_throttle');
  await knex.schema.alterTable('webhook_subscriptions', (t) => {
    t.dropColumn('max_deliveries_per_second');
  });
}
