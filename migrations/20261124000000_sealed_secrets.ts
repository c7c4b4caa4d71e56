import type { Knex } from 'knex';
import { dialectOf } from '../src/db/dialect.js';
import type { Keyring } from '../src/secrets/keyring.js';

/**
 * Webhook secrets encrypted at rest (docs/reference.md section 12): the columns widen for sealed values
 * (`enc:v1:<key id>:...`, about 120 characters; SQLite does not hold VARCHAR lengths), and every
 * secret still in clear is sealed under the newest key of SECRET_KEYS, which the migration
 * receives from the entry point that runs it (db/migrate.ts).
 */
const keyringOf = (knex: Knex): Keyring => {
  const keyring = (knex.userParams as { keyring?: Keyring }).keyring;
  if (!keyring) throw new Error('sealing the webhook secrets needs the keyring (run migrations through `npm run migrate` or the server)');
  return keyring;
};

type Row = { id: string; secret: string; previous_secret: string | null };

/** Applies `change` to every row holding a secret of `which` kind, in pages of 500. */
async function eachSecretRow(knex: Knex, which: (q: Knex.QueryBuilder) => Knex.QueryBuilder, change: (row: Row) => Partial<Row>): Promise<void> {
  let after = '';
  for (;;) {
    const rows = (await which(knex('webhook_subscriptions').select('id', 'secret', 'previous_secret').where('id', '>', after)).orderBy('id').limit(500)) as Row[];
    if (rows.length === 0) return;
    for (const row of rows) await knex('webhook_subscriptions').update(change(row)).where({ id: row.id });
    after = rows[rows.length - 1]!.id;
  }
}

const inClear = (q: Knex.QueryBuilder) => q.where((w) => w.where((s) => s.whereNot('secret', '').whereNot('secret', 'like', 'enc:%')).orWhere((p) => p.whereNotNull('previous_secret').whereNot('previous_secret', 'like', 'enc:%')));
const sealed = (q: Knex.QueryBuilder) => q.where((w) => w.where('secret', 'like', 'enc:%').orWhere('previous_secret', 'like', 'enc:%'));

export async function up(knex: Knex): Promise<void> {
  if (dialectOf(knex) !== 'sqlite') {
    await knex.schema.alterTable('webhook_subscriptions', (t) => {
      t.string('secret', 255).notNullable().alter();
      t.string('previous_secret', 255).nullable().alter();
    });
  }
  const [{ n }] = (await inClear(knex('webhook_subscriptions')).count({ n: '*' })) as [{ n: number | string }];
  if (Number(n) === 0) return;
  const keyring = keyringOf(knex);
  const seal = (value: string | null, id: string) => (value && !value.startsWith('enc:') ? keyring.seal(value, id) : value);
  await eachSecretRow(knex, inClear, (row) => ({ secret: seal(row.secret, row.id) ?? '', previous_secret: seal(row.previous_secret, row.id) }));
}

export async function down(knex: Knex): Promise<void> {
  const [{ n }] = (await sealed(knex('webhook_subscriptions')).count({ n: '*' })) as [{ n: number | string }];
  if (Number(n) > 0) {
    const keyring = keyringOf(knex);
    const open = (value: string | null, id: string) => (value?.startsWith('enc:') ? keyring.open(value, id) : value);
    await eachSecretRow(knex, sealed, (row) => ({ secret: open(row.secret, row.id) ?? '', previous_secret: open(row.previous_secret, row.id) }));
  }
  if (dialectOf(knex) !== 'sqlite') {
    await knex.schema.alterTable('webhook_subscriptions', (t) => {
      t.string('secret', 100).notNullable().alter();
      t.string('previous_secret', 100).nullable().alter();
    });
  }
}
