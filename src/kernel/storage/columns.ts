import type { Knex } from 'knex';
import { PluginLoadError } from '../model/index.js';
import type { Registry } from '../registry/index.js';
import { planTable, type TablePlan } from './table-plan.js';

const MAKE = 'run `npm run migrate:make` to write the migration that adds it, then start again';

/**
 * What a table's columns need that migrate:make will not write (it never changes, narrows or
 * drops a column), in words, in order: a column of the wrong kind, a column no field declares
 * that every create would fail on (NOT NULL, no default), a NOT NULL column whose field may be
 * null. Boot stops on the first; migrate:make prints them all.
 */
export function columnProblems(plan: TablePlan): string[] {
  const { table } = plan.resource.def;
  return [
    ...plan.mismatches.map((m) => `table "${table}" column "${m.name}" is ${m.have}, but its field needs ${m.want} (a ${plan.resource.kinds[m.name]?.name ?? 'kernel'} column): change it in a migration of your own (migrate:make never changes or narrows a column)`),
    ...plan.strays.map(
      (column) =>
        `table "${table}" column "${column}" is NOT NULL without a default, and no field declares it (a field renamed or removed?): every create would fail on it. In a migration of your own, rename it to its field's new name (t.renameColumn('${column}', '...')), make it nullable (t.setNullable('${column}')) or drop it (t.dropColumn('${column}')); migrate:make never drops or changes a column`,
    ),
    ...plan.notNull.map(
      (column) =>
        `table "${table}" column "${column}" is NOT NULL without a default, but its field may be null (no longer required?): every create without it would fail on it. In a migration of your own, make it nullable (t.setNullable('${column}')); migrate:make never changes a column`,
    ),
  ];
}

/**
 * Every plugin's table has a column of the right kind for each field (and the kernel's own),
 * and the indexes its sorts and filters need: checked at start-up, after migrations, so a
 * missing or mismatched column stops boot naming the plugin, the table, the column, what was
 * expected and the command that fixes it, instead of failing the first request that reads it.
 * A field sort's index that is missing (a table made before field sorts) does not stop boot:
 * it is answered, one line each, for the caller to warn of.
 */
export async function checkColumns(db: Knex, registry: Registry): Promise<Array<{ file: string; message: string }>> {
  const warnings: Array<{ file: string; message: string }> = [];
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
    const [problem] = columnProblems(plan);
    if (problem) throw refuse(problem);
    const [index] = plan.indexes.filter((wanted) => !wanted.optional);
    if (index) throw refuse(`table "${table}" has no index "${index.name}" on (${index.columns.join(', ')}): ${MAKE}`);
    for (const sort of plan.indexes.filter((wanted) => wanted.optional)) {
      warnings.push({ file: resource.file, message: `table "${table}" has no index "${sort.name}" on (${sort.columns.join(', ')}): a list sorted by ${sort.columns[1]} reads more rows than it needs; ${MAKE.replace('then start again', 'then start again (it writes the index)')}` });
    }
  }
  return warnings;
}
