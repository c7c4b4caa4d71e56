import type { Knex } from 'knex';

/**
 * How a subscription's deliveries are signed (docs/reference.md section 16): `hmac` (as until now) or
 * `ed25519`, whose private key is kept sealed in `secret` like an HMAC secret, and whose public
 * key (`whpk_...`, nothing secret) is kept beside it to be shown.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_subscriptions', (t) => {
    t.string('signature', 8).notNullable().defaultTo('hmac');
    t.string('public_key', 64).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_subscriptions', (t) => {
    t.dropColumn('public_key');
    t.dropColumn('signature');
  });
}
