import type { Knex } from 'knex';
import { PluginLoadError, type Registry } from './registry.js';
import { planTable } from './table-plan.js';

const MAKE = 'run `npm run migrate:make` to write the migration that adds it, then start again';

/** What a stray column (table-plan.ts) is told, at boot and by migrate:make. */
export function strayMessage(table: string, column: string): string {
  return `table "${table}" column "${column}" is NOT NULL without a default, and no field declares it (a field renamed or removed?): every create would fail on it. In a migration of your own, rename it to its field's new name (t.renameColumn('${column}', '...')), make it nullable (t.setNullable('${column}')) or drop it (t.dropColumn('${column}')); migrate:make never drops or changes a column`;
}

/** What a field that may be null, on a NOT NULL column (table-plan.ts), is told at boot and by migrate:make. */
export function notNullMessage(table: string, column: string): string {
  return `table "${table}" column "${column}" is NOT NULL without a default, but its field may be null (no longer required?): every create without it would fail on it. In a migration of your own, make it nullable (t.setNullable('${column}')); migrate:make never changes a column`;
}

/**
 * Every plugin's table has a column of the right kind for each field (and the kernel's own),
 * and the indexes its sorts and filters need: checked at start-up, after migrations, so a
 * missing or mismatched column stops boot naming the plugin, the table, the column, what was
 * expected and the command that fixes it, instead of failing the first request that reads it.
 */
export async function checkColumns(db: Knex, registry: Registry): Promise<void> {
  for (const resource of registry.resources) {
    const { table } = resource.def;
    const plan = await planTable(db, resource);
    const refuse = (message: string) => new PluginLoadError(resource.file, message);
    if (plan.create) throw refuse(`table "${table}" does not exist: ${MAKE.replace('adds it', 'creates it')}`);
    const [missing] = plan.columns;
    if (missing) {
      const kind = resource.kinds[missing.name]?.name;
      throw refuse(`table "${table}" has no column "${missing.name}"${kind ? ` (a ${kind} field)` : ''}: ${MAKE}`);
    }
    const [mismatch] = plan.mismatches;
    if (mismatch) {
      throw refuse(`table "${table}" column "${mismatch.name}" is ${mismatch.have}, but its field needs ${mismatch.want} (a ${resource.kinds[mismatch.name]?.name ?? 'kernel'} column): change it in a migration of your own (migrate:make never changes or narrows a column)`);
    }
    const [stray] = plan.strays;
    if (stray) throw refuse(strayMessage(table, stray));
    const [notNull] = plan.notNull;
    if (notNull) throw refuse(notNullMessage(table, notNull));
    const [index] = plan.indexes;
    if (index) throw refuse(`table "${table}" has no index "${index.name}" on (${index.columns.join(', ')}): ${MAKE}`);
  }
}
