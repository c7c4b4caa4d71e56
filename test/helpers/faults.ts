import type { Knex } from 'knex';
import { dialectOf } from '../../src/db/dialect.js';

/**
 * Makes every insert into `events` for one workspace fail, with a real trigger in the real
 * database: the failure happens inside the write's transaction, after the row was written.
 * Returns what removes the trigger again.
 */
export async function failEventInserts(db: Knex, workspaceId: string): Promise<() => Promise<void>> {
  if (!/^[a-z0-9_]+$/.test(workspaceId)) throw new Error(`unexpected workspace id ${workspaceId}`);
  const name = `fail_events_${workspaceId}`;
  const dialect = dialectOf(db);
  if (dialect === 'postgres') return pgTrigger(db, name, 'events', 'INSERT', `NEW.workspace_id = '${workspaceId}'`);
  if (dialect === 'mysql') {
    await db.raw(
      `CREATE TRIGGER ${name} BEFORE INSERT ON events FOR EACH ROW BEGIN IF NEW.workspace_id = '${workspaceId}' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'forced failure'; END IF; END`,
    );
  } else {
    await db.raw(`CREATE TRIGGER ${name} BEFORE INSERT ON events WHEN NEW.workspace_id = '${workspaceId}' BEGIN SELECT RAISE(ABORT, 'forced failure'); END`);
  }
  return async () => {
    await db.raw(`DROP TRIGGER ${name}`);
  };
}

/**
 * Makes every UPDATE (or INSERT) on `table` fail with a real trigger, for every row. Returns
 * what removes it again.
 */
export async function failWrites(db: Knex, table: string, operation: 'INSERT' | 'UPDATE'): Promise<() => Promise<void>> {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`unexpected table ${table}`);
  const name = `fail_${operation.toLowerCase()}_${table}`;
  const dialect = dialectOf(db);
  if (dialect === 'postgres') return pgTrigger(db, name, table, operation, 'true');
  if (dialect === 'mysql') {
    await db.raw(`CREATE TRIGGER ${name} BEFORE ${operation} ON ${table} FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'forced failure'`);
  } else {
    await db.raw(`CREATE TRIGGER ${name} BEFORE ${operation} ON ${table} BEGIN SELECT RAISE(ABORT, 'forced failure'); END`);
  }
  return async () => {
    await db.raw(`DROP TRIGGER ${name}`);
  };
}

/** PostgreSQL: a trigger runs a function, which raises when `when` holds. */
async function pgTrigger(db: Knex, name: string, table: string, operation: 'INSERT' | 'UPDATE', when: string): Promise<() => Promise<void>> {
  await db.raw(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF ${when} THEN RAISE EXCEPTION 'forced failure'; END IF; RETURN NEW; END $$`);
  await db.raw(`CREATE TRIGGER ${name} BEFORE ${operation} ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}()`);
  return async () => {
    await db.raw(`DROP TRIGGER ${name} ON ${table}`);
    await db.raw(`DROP FUNCTION ${name}()`);
  };
}
