import type { Knex } from 'knex';

/**
 * The outbox: every event a write emits, written in the write's own transaction. `seq` gives the
 * order of commit-time inserts to whoever reads the outbox next (the webhook worker).
 * Idempotency keys remember the first answer to a POST for 24 hours.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('events', (t) => {
    t.bigIncrements('seq').primary();
    t.string('id', 64).notNullable().unique();
    t.string('workspace_id', 64).notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    t.string('type', 100).notNullable();
    t.string('object_id', 64).notNullable();
    // The event exactly as delivered: the bytes are fixed at write time.
    t.text('payload', 'mediumtext').notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['workspace_id', 'created_at'], 'events_ws_created');
  });
  await knex.schema.createTable('idempotency_keys', (t) => {
    t.string('workspace_id', 64).notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    // SHA-256 of the client's key: fixed length, and compared byte for byte under any collation.
    t.string('key_hash', 64).notNullable();
    t.string('request_hash', 64).notNullable();
    t.integer('status').notNullable();
    t.string('location', 255).nullable();
    t.text('body', 'mediumtext').notNullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['workspace_id', 'key_hash']);
    t.index(['created_at'], 'idempotency_keys_created');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('idempotency_keys');
  await knex.schema.dropTable('events');
}
