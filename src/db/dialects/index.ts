import type { Knex } from 'knex';
import { dialectOf, type Dialect, type DialectName } from '../dialect.js';
import { mysql } from './mysql.js';
import { postgres } from './postgres.js';
import { sqlite } from './sqlite.js';

export { CASELESS_COLLATION, MYSQL_IN_MIGRATION } from './mysql.js';

const DIALECTS: Readonly<Record<DialectName, Dialect>> = { sqlite, mysql, postgres };

/** The dialect of `db` (or of a transaction or query of it). */
export function dialectFor(db: Pick<Knex, 'client'>): Dialect {
  return DIALECTS[dialectOf(db)];
}

/** The dialect of a database by its name (a parsed DATABASE_URL's). */
export const dialectNamed = (name: DialectName): Dialect => DIALECTS[name];

/** Runs `work` in a knex write transaction of `db`, retried on deadlock (see Dialect.transaction). */
export function transaction<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return dialectFor(db).transaction(db, work);
}

/** Claims rows in the caller's transaction (see Dialect.claimRows). */
export const claimRows: Dialect['claimRows'] = (trx, spec) => dialectFor(trx).claimRows(trx, spec);

/** Takes entries off a queue table in the caller's transaction (see Dialect.takeQueued). */
export const takeQueued: Dialect['takeQueued'] = (trx, spec) => dialectFor(trx).takeQueued(trx, spec);
