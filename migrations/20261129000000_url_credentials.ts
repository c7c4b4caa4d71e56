import type { Knex } from 'knex';
import { splitCredentials, withPassword } from '../src/webhooks/credentials.js';
import { transportOf } from '../src/webhooks/schemes.js';
import type { Keyring } from '../src/secrets/keyring.js';

/**
 * Credentials kept in a subscription's URL before they were sealed on their own: an https URL's
 * password (now sent as HTTP Basic authentication) and a NATS URL's token
 * (`nats://<token>@host`). Each moves to url_password, sealed under the newest key of
 * SECRET_KEYS, and the URL is kept without it, as new subscriptions are written.
 */
const keyringOf = (knex: Knex): Keyring => {
  const keyring = (knex.userParams as { keyring?: Keyring }).keyring;
  if (!keyring) throw new Error('sealing the credentials of webhook URLs needs the keyring (run migrations through `npm run migrate` or the server)');
  return keyring;
};

type Row = { id: string; url: string; url_password: string | null };

/** Applies `change` to every row `which` selects that it returns a change for, in pages of 500. */
async function eachRow(knex: Knex, which: (q: Knex.QueryBuilder) => Knex.QueryBuilder, change: (row: Row) => Partial<Row> | undefined): Promise<void> {
  let after = '';
  for (;;) {
    const rows = (await which(knex('webhook_subscriptions').select('id', 'url', 'url_password').where('id', '>', after)).orderBy('id').limit(500)) as Row[];
    if (rows.length === 0) return;
    for (const row of rows) {
      const update = change(row);
      if (update) await knex('webhook_subscriptions').update(update).where({ id: row.id });
    }
    after = rows[rows.length - 1]!.id;
  }
}

/** Rows whose URL may hold credentials: an @ before the path, and nothing sealed yet. */
const withUserinfo = (q: Knex.QueryBuilder) => q.whereNull('url_password').where('url', 'like', '%@%');

export async function up(knex: Knex): Promise<void> {
  // The keyring is asked for only when a URL holds credentials: most databases have none.
  let keyring: Keyring | undefined;
  await eachRow(knex, withUserinfo, (row) => {
    const { url, password } = splitCredentials(row.url);
    if (password === null) return undefined;
    keyring ??= keyringOf(knex);
    return { url, url_password: keyring.seal(password, row.id) };
  });
}

/** Puts https passwords and NATS tokens back into their URLs (the credentials brokers kept apart before, amqp and nats passwords, stay apart). */
export async function down(knex: Knex): Promise<void> {
  const sealed = (q: Knex.QueryBuilder) => q.whereNotNull('url_password');
  let keyring: Keyring | undefined;
  await eachRow(knex, sealed, (row) => {
    const url = new URL(row.url);
    const transport = transportOf(url.protocol);
    if (!(transport === 'http' || (transport === 'nats' && url.username === ''))) return undefined;
    keyring ??= keyringOf(knex);
    return { url: withPassword(row.url, keyring.open(row.url_password!, row.id)), url_password: null };
  });
}
