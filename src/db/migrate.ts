import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { importFile } from '../common/modules.js';
import type { Keyring } from '../secrets/keyring.js';

interface MigrationFile {
  name: string;
  file: string;
}

/**
 * Migrations are plain modules exporting up/down, found in every configured folder and run in
 * the order of their file names (which start with a timestamp), whichever folder they come from.
 */
export class FolderMigrationSource implements Knex.MigrationSource<MigrationFile> {
  constructor(private readonly dirs: readonly string[]) {}

  async getMigrations(): Promise<MigrationFile[]> {
    const found: MigrationFile[] = [];
    for (const dir of this.dirs) {
      if (!fs.existsSync(dir)) continue;
      for (const name of fs.readdirSync(dir)) {
        if (/\.(ts|js)$/.test(name) && !name.endsWith('.d.ts')) found.push({ name: name.replace(/\.(ts|js)$/, ''), file: path.join(dir, name) });
      }
    }
    return found.sort((a, b) => a.name.localeCompare(b.name));
  }

  getMigrationName(migration: MigrationFile): string {
    return migration.name;
  }

  async getMigration(migration: MigrationFile): Promise<Knex.Migration> {
    return (await importFile(migration.file)) as Knex.Migration;
  }
}

/** What migrations receive beside the schema (as knex.userParams): the keyring that seals secrets. */
export interface MigrationParams {
  keyring?: Keyring;
}

export async function migrateLatest(db: Knex, dirs: readonly string[], params: MigrationParams = {}): Promise<string[]> {
  const [, applied] = (await db.withUserParams({ ...params }).migrate.latest({ migrationSource: new FolderMigrationSource(dirs) })) as [number, string[]];
  return applied;
}

/** Undoes the last batch of migrations applied (each one's `down`); returns what was undone, newest first. */
export async function rollbackLast(db: Knex, dirs: readonly string[], params: MigrationParams = {}): Promise<string[]> {
  const [, undone] = (await db.withUserParams({ ...params }).migrate.rollback({ migrationSource: new FolderMigrationSource(dirs) })) as [number, string[]];
  return undone;
}

/** The migrations not applied yet, by name (none: the schema is what this code expects). */
export async function pendingMigrations(db: Knex, dirs: readonly string[]): Promise<string[]> {
  const [, pending] = (await db.migrate.list({ migrationSource: new FolderMigrationSource(dirs) })) as [unknown[], MigrationFile[]];
  return pending.map((m) => m.name);
}
