import type { Knex } from 'knex';

/** When a subscription's `webhook.failing` was last emitted (docs/reference.md section 16): at most once a day. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_subscriptions', (t) => {
    t.bigInteger('failing_reported_at').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_subscriptions', (t) => {
    t.dropColumn('failing_reported_at');
  });
}
