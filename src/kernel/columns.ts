import type { Knex } from 'knex';
import { indexNames, keysetIndex } from '../db/tables.js';
import { PluginLoadError, type Registry } from './registry.js';

/**
 * Every plugin's table has a column for each field (and the kernel's own) and a keyset index
 * per sort: checked at start-up,
 * after migrations, so a missing column stops boot naming the plugin, the table and the column
 * instead of failing the first request that reads it.
 */
export async function checkColumns(db: Knex, registry: Registry): Promise<void> {
  for (const resource of registry.resources) {
    const { table } = resource.def;
    const have = new Set(Object.keys(await db(table).columnInfo()));
    if (have.size === 0) throw new PluginLoadError(resource.file, `table "${table}" does not exist: add a migration that creates it (MIGRATIONS_DIR)`);
    for (const column of ['workspace_id', ...resource.columns]) {
      if (!have.has(column)) throw new PluginLoadError(resource.file, `table "${table}" has no column "${column}": add it in a migration`);
    }
    const indexes = await indexNames(db, table);
    for (const sort of resource.def.list.sorts) {
      const index = keysetIndex(table, sort);
      if (!indexes.has(index)) throw new PluginLoadError(resource.file, `table "${table}" has no index "${index}" on (workspace_id, ${sort}, id): create the table with createResourceTable() or add the index in a migration`);
    }
  }
}
