import type { Knex } from 'knex';

/** The password of a broker destination's URL (amqp://, nats://), sealed like the signing secrets; the URL is kept without it. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_subscriptions', (t) => {
    t.text('url_password').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_subscriptions', (t) => {
    t.dropColumn('url_password');
  });
}
