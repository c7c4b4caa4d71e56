import type { Knex } from 'knex';

/**
 * One delivery per subscription and event (docs/reference.md section 11, recovery): the fan-out makes at
 * most one and recovery adds the missing ones, so no event can reach a subscription twice
 * through two rows. Also the index recovery looks a delivery up by.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.unique(['subscription_id', 'event_id'], { indexName: 'webhook_deliveries_sub_event' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropUnique(['subscription_id', 'event_id'], 'webhook_deliveries_sub_event');
  });
}
