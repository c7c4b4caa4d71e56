import type { Knex } from 'knex';
import { isMysql } from '../../src/db/dialect.js';

/**
 * Makes every insert into `events` for one workspace fail, with a real trigger in the real
 * database: the failure happens inside the write's transaction, after the row was written.
 * Returns what removes the trigger again.
 */
export async function failEventInserts(db: Knex, workspaceId: string): Promise<() => Promise<void>> {
  if (!/^[a-z0-9_]+$/.test(workspaceId)) throw new Error(`unexpected workspace id ${workspaceId}`);
  const name = `fail_events_${workspaceId}`;
  if (isMysql(db)) {
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
  if (isMysql(db)) {
    await db.raw(`CREATE TRIGGER ${name} BEFORE ${operation} ON ${table} FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'forced failure'`);
  } else {
    await db.raw(`CREATE TRIGGER ${name} BEFORE ${operation} ON ${table} BEGIN SELECT RAISE(ABORT, 'forced failure'); END`);
  }
  return async () => {
    await db.raw(`DROP TRIGGER ${name}`);
  };
}
