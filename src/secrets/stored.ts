import type { Knex } from 'knex';
import type { Config } from '../common/config.js';
import { StartupError } from '../common/errors.js';
import type { Keyring } from './keyring.js';
import { keyFileOf } from './load.js';

/**
 * The secrets the database holds sealed (webhook_subscriptions.secret and previous_secret, and
 * url_password: the password or token of a destination's URL), as a whole: whether this
 * keyring can open them all, and moving them to its newest key.
 */

const TABLE = 'webhook_subscriptions';
const COLUMNS = ['secret', 'previous_secret', 'url_password'] as const;
type Sealed = Record<(typeof COLUMNS)[number], string | null> & { id: string };
const BATCH = 200;

/** `column` holds a value not sealed under one of `ids` (a value in clear counts too). */
function notUnder(q: Knex.QueryBuilder, column: string, ids: readonly string[]): Knex.QueryBuilder {
  return q.where((w) => {
    w.whereNotNull(column).whereNot(column, '');
    for (const id of ids) w.whereNot(column, 'like', `enc:v1:${id}:%`);
  });
}

/**
 * The id of a key (or 'clear') that some stored secret is sealed under and this keyring does
 * not hold; undefined when the keyring opens everything. Start-up refuses to run otherwise.
 */
export async function missingKey(db: Knex, keyring: Keyring): Promise<string | undefined> {
  for (const column of COLUMNS) {
    const row = (await notUnder(db(TABLE), column, keyring.ids).first(`${column} as value`)) as { value: string } | undefined;
    if (row) return keyring.keyIdOf(row.value) ?? 'clear';
  }
  return undefined;
}

/** Stops start-up (every entry point that migrates) when this keyring cannot open a stored secret, saying what to do. */
export async function refuseUnopenable(db: Knex, keyring: Keyring, config: Config): Promise<void> {
  const missing = await missingKey(db, keyring);
  if (!missing) return;
  const where = config.secretKeys ? 'SECRET_KEYS' : `the key file ${keyFileOf(config) ?? '(none)'}`;
  if (missing === 'clear') throw new StartupError(`Webhook secrets are stored in clear: run \`npm run migrate\` with ${where} to seal them`);
  throw new StartupError(`Webhook secrets are sealed under key ${missing}, which ${where} does not hold: start with that key (SECRET_KEYS lists keys newest first; keep the old one after a new one until \`npm run admin -- secrets re-encrypt\` has run)`);
}

/**
 * Re-seals every stored secret that is not under the newest key (`admin secrets re-encrypt`),
 * in batches of short transactions; returns how many rows changed. After it, older keys can be
 * dropped from SECRET_KEYS.
 */
export async function resealAll(db: Knex, keyring: Keyring): Promise<number> {
  const stale = (q: Knex.QueryBuilder) => q.where((w) => COLUMNS.forEach((column) => w.orWhere((s) => notUnder(s, column, [keyring.newestId]))));
  let changed = 0;
  for (;;) {
    const rows = (await stale(db(TABLE)).select('id', ...COLUMNS).orderBy('id').limit(BATCH)) as Sealed[];
    if (rows.length === 0) return changed;
    const reseal = (value: string | null, id: string) => (value ? keyring.seal(value.startsWith('enc:') ? keyring.open(value, id) : value, id) : value);
    await db.transaction(async (trx) => {
      for (const row of rows) {
        // Only if unchanged since read: a rotation (or a new URL) in between keeps its own, newer values.
        const q = trx(TABLE)
          .update(Object.fromEntries(COLUMNS.map((column) => [column, reseal(row[column], row.id)])))
          .where({ id: row.id });
        for (const column of COLUMNS) {
          const value = row[column];
          if (value === null) q.whereNull(column);
          else q.where(column, value);
        }
        changed += await q;
      }
    });
  }
}
