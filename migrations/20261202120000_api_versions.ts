/**
 * API versions (docs/reference.md section 19): each key is pinned to a version, and each webhook
 * subscription renders its deliveries in one. Keys and subscriptions made before versions
 * existed keep the API they were made with: the first version, 2026-11-21. An answer remembered
 * for an Idempotency-Key keeps the version it was written in, to replay it as first sent.
 */
import type { Knex } from 'knex';

const FIRST_VERSION = '2026-11-21';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.string('api_version', 10).notNullable().defaultTo(FIRST_VERSION);
  });
  await knex.schema.alterTable('webhook_subscriptions', (t) => {
    t.string('api_version', 10).notNullable().defaultTo(FIRST_VERSION);
  });
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.string('api_version', 10).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.dropColumn('api_version');
  });
  await knex.schema.alterTable('webhook_subscriptions', (t) => {
    t.dropColumn('api_version');
  });
  await knex.schema.alterTable('api_keys', (t) => {
    t.dropColumn('api_version');
  });
}
