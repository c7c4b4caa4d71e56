/**
 * Ordered delivery (docs/reference.md section 20): a subscription's `ordering`, `none` (as until
 * now) or `per_object`. A delivery of a `per_object` subscription knows its line: the object
 * (`object_id`) and its place there (`event_seq`, the event's `seq`, which for one object follows
 * its versions: each write of an object holds its row until it commits). `line_seq` is that
 * place while the delivery is not done (pending or held) and null once it is, so that
 * `webhook_deliveries_line` holds a line's unfinished deliveries only (a partial index where the
 * database has them; on MySQL its nulls come first and a range skips them): the head of a line,
 * what the next one waits behind, is one index probe however long the object's history. A
 * delivery of a `none` subscription has all three null. `events_pending_object` finds an event
 * of the object not fanned out yet.
 */
import type { Knex } from 'knex';
import { dialectOf } from '../src/db/dialect.js';

const LINE = ['subscription_id', 'object_id', 'line_seq'];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_subscriptions', (t) => {
    t.string('ordering', 16).notNullable().defaultTo('none');
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.string('object_id', 64).nullable();
    t.bigInteger('event_seq').nullable();
    t.bigInteger('line_seq').nullable();
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    if (dialectOf(knex) === 'mysql') t.index(LINE, 'webhook_deliveries_line');
    else t.index(LINE, 'webhook_deliveries_line', { predicate: knex.whereNotNull('line_seq') });
  });
  await knex.schema.alterTable('events_pending', (t) => {
    t.index(['object_id'], 'events_pending_object');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events_pending', (t) => {
    t.dropIndex(['object_id'], 'events_pending_object');
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropIndex(LINE, 'webhook_deliveries_line');
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropColumn('line_seq');
    t.dropColumn('event_seq');
    t.dropColumn('object_id');
  });
  await knex.schema.alterTable('webhook_subscriptions', (t) => {
    t.dropColumn('ordering');
  });
}
