import knex, { type Knex } from 'knex';
import type { DatabaseConfig } from '../common/config.js';
import { StartupError } from '../common/errors.js';
import { migrateLatest, type MigrationParams } from './migrate.js';

/**
 * A connection refused for its database: it does not exist (1049), or, as MariaDB tells a user
 * with no right on it whether or not it exists, this user may not use it (1044).
 */
export const isMissingDatabase = (err: unknown) => ['ER_BAD_DB_ERROR', 'ER_DBACCESS_DENIED_ERROR'].includes(String((err as { code?: unknown } | null)?.code));

/**
 * Creates the MySQL database DATABASE_URL names, which does not exist yet, with the same
 * user. A user without the right to create it gets a StartupError saying exactly what an
 * administrator runs.
 */
export async function createMissingDatabase(databaseUrl: string): Promise<string> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  const user = decodeURIComponent(url.username);
  const admin = knex({ client: 'mysql2', connection: { host: url.hostname, port: url.port ? Number(url.port) : 3306, user, password: decodeURIComponent(url.password), connectTimeout: 5000 } });
  try {
    await admin.raw('CREATE DATABASE IF NOT EXISTS ?? CHARACTER SET utf8mb4', [name]);
    return name;
  } catch (err) {
    const quoted = `\`${name.replace(/`/g, '``')}\``;
    const sql = `CREATE DATABASE IF NOT EXISTS ${quoted} CHARACTER SET utf8mb4; GRANT ALL ON ${quoted}.* TO '${user}'@'%';`;
    throw new StartupError(`The database "${name}" (DATABASE_URL) does not exist or user "${user}" may not use it, and "${user}" may not create it (${(err as { code?: string }).code ?? (err as Error).message}). Have an administrator run: ${sql} Then start again.`);
  } finally {
    await admin.destroy();
  }
}

/**
 * Brings the database to the latest schema, first creating a MySQL database that does not exist
 * yet (when the user may). What every entry point that migrates calls.
 */
export async function migrateCreating(db: Knex, database: DatabaseConfig, dirs: readonly string[], params: MigrationParams = {}): Promise<{ applied: string[]; created?: string }> {
  try {
    return { applied: await migrateLatest(db, dirs, params) };
  } catch (err) {
    if (database.client !== 'mysql' || !isMissingDatabase(err)) throw err;
    const created = await createMissingDatabase(database.url);
    return { applied: await migrateLatest(db, dirs, params), created };
  }
}
