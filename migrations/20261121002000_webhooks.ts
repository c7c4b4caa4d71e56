import type { Knex } from 'knex';

/**
 * Webhook subscriptions, their deliveries (one per event and subscription) and every attempt.
 * `events.dispatched_at` marks an event fanned out to its deliveries.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.bigInteger('dispatched_at').nullable();
    t.index(['dispatched_at', 'seq'], 'events_undispatched');
  });
  await knex.schema.createTable('webhook_subscriptions', (t) => {
    t.string('id', 64).primary();
    t.string('workspace_id', 64).notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    t.string('url', 2048).notNullable();
    t.text('events').notNullable();
    t.string('description', 500).nullable();
    t.boolean('enabled').notNullable();
    t.string('disabled_reason', 32).nullable();
    // Signing keys must be read back to sign, so they cannot be hashed; they never leave
    // except in the answer that creates or rotates them.
    t.string('secret', 100).notNullable();
    t.string('previous_secret', 100).nullable();
    t.bigInteger('previous_secret_until').nullable();
    // First failed attempt since the last success: five days of failures disable.
    t.bigInteger('failing_since').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    // Deleted subscriptions are kept (without their secret): they count toward the month's allowance.
    t.bigInteger('deleted_at').nullable();
    t.index(['workspace_id', 'created_at', 'id'], 'webhook_subscriptions_ws_created');
  });
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.string('id', 64).primary();
    t.string('workspace_id', 64).notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    t.string('subscription_id', 64).notNullable().references('id').inTable('webhook_subscriptions').onDelete('CASCADE');
    t.string('event_id', 64).notNullable().references('id').inTable('events').onDelete('CASCADE');
    t.string('event_type', 100).notNullable();
    t.string('status', 16).notNullable();
    t.integer('attempts').notNullable();
    t.integer('retries_left').notNullable();
    // Due time; while a worker holds the delivery, the end of its lease.
    t.bigInteger('next_attempt_at').nullable();
    t.string('lease_owner', 64).nullable();
    t.integer('last_response_status').nullable();
    t.string('last_error', 500).nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('delivered_at').nullable();
    t.index(['status', 'next_attempt_at'], 'webhook_deliveries_due');
    t.index(['subscription_id', 'created_at', 'id'], 'webhook_deliveries_sub_created');
  });
  await knex.schema.createTable('webhook_attempts', (t) => {
    t.bigIncrements('id').primary();
    t.string('delivery_id', 64).notNullable().references('id').inTable('webhook_deliveries').onDelete('CASCADE');
    t.integer('attempt').notNullable();
    t.bigInteger('started_at').notNullable();
    t.integer('duration_ms').notNullable();
    t.integer('response_status').nullable();
    t.string('response_excerpt', 1024).nullable();
    t.string('error', 500).nullable();
    t.index(['delivery_id', 'attempt'], 'webhook_attempts_delivery');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_attempts');
  await knex.schema.dropTable('webhook_deliveries');
  await knex.schema.dropTable('webhook_subscriptions');
  await knex.schema.alterTable('events', (t) => {
    t.dropIndex(['dispatched_at', 'seq'], 'events_undispatched');
    t.dropColumn('dispatched_at');
  });
}
