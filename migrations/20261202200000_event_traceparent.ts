/**
 * Traces (docs/reference.md section 20): an event keeps the W3C `traceparent` of the span that
 * wrote it (the request's), so that its deliveries' attempts are spans of the same trace however
 * much later a worker sends them. Null when the service ran without traces.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.string('traceparent', 55).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.dropColumn('traceparent');
  });
}
