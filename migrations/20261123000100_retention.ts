import type { Knex } from 'knex';

/**
 * Retention (RETENTION_DAYS): the sweep finds an event's deliveries by event id, and so does
 * SQLite when it checks the delete of an event against them (a foreign key); without this
 * index each would read the whole delivery table.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.index(['event_id'], 'webhook_deliveries_event');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropIndex(['event_id'], 'webhook_deliveries_event');
  });
}
