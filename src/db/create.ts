import knex, { type Knex } from 'knex';
import type { DatabaseConfig } from '../common/config.js';
import { StartupError } from '../common/errors.js';
import { serverConnection } from './connect.js';
import { migrateLatest, type MigrationParams } from './migrate.js';

/**
 * A connection refused for its database: it does not exist (MySQL 1049, PostgreSQL 3D000), or,
 * as MariaDB tells a user with no right on it whether or not it exists, this user may not use
 * it (1044).
 */
export const isMissingDatabase = (err: unknown) => ['ER_BAD_DB_ERROR', 'ER_DBACCESS_DENIED_ERROR', '3D000'].includes(String((err as { code?: unknown } | null)?.code));

/** How each server creates and drops a database, and what an administrator runs when this user may not create it. */
const SERVERS = {
  mysql: {
    client: 'mysql2',
    port: 3306,
    // No database named: MySQL lets a user connect to none.
    maintenance: undefined,
    timeout: { connectTimeout: 5000 },
    create: 'CREATE DATABASE IF NOT EXISTS ?? CHARACTER SET utf8mb4',
    drop: 'DROP DATABASE IF EXISTS ??',
    sql: (name: string, user: string) => {
      const quoted = `\`${name.replace(/`/g, '``')}\``;
      return `CREATE DATABASE IF NOT EXISTS ${quoted} CHARACTER SET utf8mb4; GRANT ALL ON ${quoted}.* TO '${user}'@'%';`;
    },
  },
  postgres: {
    client: 'pg',
    port: 5432,
    // PostgreSQL connects to a database always: the one every cluster has for this.
    maintenance: 'postgres',
    timeout: { connectionTimeoutMillis: 5000 },
    // UTF-8 whatever the cluster's default, from template0 (whose encoding may differ from it).
    create: "CREATE DATABASE ?? ENCODING 'UTF8' TEMPLATE template0",
    // Connections left open (a killed process's) do not keep it.
    drop: 'DROP DATABASE IF EXISTS ?? WITH (FORCE)',
    sql: (name: string, user: string) => `CREATE DATABASE "${name.replace(/"/g, '""')}" ENCODING 'UTF8' TEMPLATE template0 OWNER "${user.replace(/"/g, '""')}";`,
  },
} as const;

/** A connection to the server a MySQL or PostgreSQL URL names, to create and drop databases there. */
export interface ServerAdmin {
  kind: 'mysql' | 'postgres';
  /** The connection itself (MySQL: to no database; PostgreSQL: to `postgres`), for what else an administrator does. */
  knex: Knex;
  /** The user and the database the URL names. */
  user: string;
  database: string;
  /** Creates a database (UTF-8); on MySQL, nothing when it exists. */
  create(name: string): Promise<void>;
  drop(name: string): Promise<void>;
  /** The URL with another database in it. */
  urlOf(name: string): string;
  destroy(): Promise<void>;
}

export function serverAdmin(url: string): ServerAdmin {
  const kind = /^postgres(ql)?:$/.test(new URL(url).protocol) ? 'postgres' : 'mysql';
  const how = SERVERS[kind];
  const { database, ...server } = serverConnection(url, how.port);
  const admin = knex({ client: how.client, connection: { ...server, ...(how.maintenance ? { database: how.maintenance } : {}), ...how.timeout } });
  return {
    kind,
    knex: admin,
    user: server.user,
    database,
    create: async (name) => void (await admin.raw(how.create, [name])),
    drop: async (name) => void (await admin.raw(how.drop, [name])),
    urlOf(name) {
      const other = new URL(url);
      other.pathname = `/${encodeURIComponent(name)}`;
      return other.href;
    },
    destroy: () => admin.destroy(),
  };
}

/**
 * A database this user may use but not create tables in, as the first migration finds it: what
 * an administrator runs, in one line (undefined for any other error). On PostgreSQL 15 and
 * later the `public` schema grants CREATE to the database's owner alone, so a database an
 * administrator made for the service (and owns) refuses it (42501); on MySQL, a user granted
 * less than ALL on it (1142).
 */
function tablesRefused(err: unknown, database: Extract<DatabaseConfig, { url: string }>): StartupError | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  const message = (err as Error | null)?.message ?? '';
  const { user, database: name } = serverConnection(database.url, SERVERS[database.client].port);
  const refused = `User "${user}" may not create tables in database "${name}" (DATABASE_URL`;
  if (database.client === 'postgres' && code === '42501') {
    const schema = /permission denied for schema (\S+)/.exec(message)?.[1];
    if (schema === undefined) return undefined;
    const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;
    return new StartupError(
      `${refused}, schema "${schema}"; 42501: since PostgreSQL 15 only the database's owner may in public). Have an administrator run: ALTER DATABASE ${quote(name)} OWNER TO ${quote(user)}; (or: GRANT CREATE ON SCHEMA ${quote(schema)} TO ${quote(user)};) Then start again.`,
    );
  }
  // mysql2's own words, without the statement knex puts before them.
  const said = (err as { sqlMessage?: string } | null)?.sqlMessage ?? message;
  if (database.client === 'mysql' && code === 'ER_TABLEACCESS_DENIED_ERROR' && /^CREATE command denied/.test(said)) {
    return new StartupError(`${refused}; 1142: ${said}). Have an administrator run: GRANT ALL ON \`${name.replace(/`/g, '``')}\`.* TO '${user}'@'%'; Then start again.`);
  }
  return undefined;
}

/**
 * Creates the database DATABASE_URL names, which does not exist yet, with the same user. A user
 * without the right to create it gets a StartupError saying exactly what an administrator runs.
 */
export async function createMissingDatabase(database: Extract<DatabaseConfig, { url: string }>): Promise<string> {
  const admin = serverAdmin(database.url);
  const name = admin.database;
  try {
    await admin.create(name);
    return name;
  } catch (err) {
    // Created meanwhile by another process starting (PostgreSQL has no IF NOT EXISTS here).
    if ((err as { code?: unknown }).code === '42P04') return name;
    throw new StartupError(`The database "${name}" (DATABASE_URL) does not exist or user "${admin.user}" may not use it, and "${admin.user}" may not create it (${(err as { code?: string }).code ?? (err as Error).message}). Have an administrator run: ${SERVERS[admin.kind].sql(name, admin.user)} Then start again.`);
  } finally {
    await admin.destroy();
  }
}

/**
 * Brings the database to the latest schema, first creating a MySQL or PostgreSQL database that
 * does not exist yet (when the user may). What every entry point that migrates calls.
 */
export async function migrateCreating(db: Knex, database: DatabaseConfig, dirs: readonly string[], params: MigrationParams = {}): Promise<{ applied: string[]; created?: string }> {
  try {
    return { applied: await migrateLatest(db, dirs, params) };
  } catch (err) {
    if (database.client === 'sqlite') throw err;
    const refusal = tablesRefused(err, database);
    if (refusal) throw refusal;
    if (!isMissingDatabase(err)) throw err;
    const created = await createMissingDatabase(database);
    return { applied: await migrateLatest(db, dirs, params), created };
  }
}
