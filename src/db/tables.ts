import type { Knex } from 'knex';

/**
 * Creates a resource table with what the kernel needs: id, workspace_id, created_at and
 * updated_at (epoch milliseconds), one keyset index per sort, and one per filter (so a filtered
 * list walks an index too). `columns` adds the plugin's own fields.
 */
export async function createResourceTable(
  knex: Knex,
  table: string,
  options: { filters?: string[] },
  columns: (t: Knex.CreateTableBuilder) => void,
): Promise<void> {
  await knex.schema.createTable(table, (t) => {
    t.string('id', 64).primary();
    t.string('workspace_id', 64).notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    columns(t);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['workspace_id', 'created_at', 'id'], `${table}_ws_created`);
    t.index(['workspace_id', 'updated_at', 'id'], `${table}_ws_updated`);
    for (const filter of options.filters ?? []) t.index(['workspace_id', filter, 'created_at', 'id'], `${table}_ws_${filter}`);
  });
}

export function money(t: Knex.CreateTableBuilder): void {
  t.bigInteger('amount').nullable();
  t.string('currency', 3).nullable();
}
