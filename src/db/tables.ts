import type { Knex } from 'knex';

/**
 * Creates a resource table with what the kernel needs: id, workspace_id, created_at and
 * updated_at (epoch milliseconds), version (docs/reference.md section 16), one keyset index per sort, and one per filter (so a filtered
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
    t.integer('version').notNullable().defaultTo(1);
    t.index(['workspace_id', 'created_at', 'id'], keysetIndex(table, 'created_at'));
    t.index(['workspace_id', 'updated_at', 'id'], keysetIndex(table, 'updated_at'));
    for (const filter of options.filters ?? []) t.index(['workspace_id', filter, 'created_at', 'id'], `${table}_ws_${filter}`);
  });
}

/** The name of a resource table's keyset index for a sort by one of its fields (a number, an amount, a date, a time). */
export function fieldSortIndex(table: string, field: string): string {
  return `${table}_by_${field}`;
}

/** The name of a resource table's keyset index for one sort column. */
export function keysetIndex(table: string, column: 'created_at' | 'updated_at'): string {
  return `${table}_ws_${column === 'created_at' ? 'created' : 'updated'}`;
}

export function money(t: Knex.CreateTableBuilder): void {
  t.bigInteger('amount').nullable();
  t.string('currency', 3).nullable();
}

/** A column as a migration writes it and the boot check compares it (a field kind's). */
export interface Column {
  /** knex's column builders: string(length), text, integer, bigInteger, boolean. */
  type: 'string' | 'text' | 'integer' | 'bigInteger' | 'boolean';
  /** A string's length; a text's most characters (none: as long as a body may be). */
  length?: number;
  nullable: boolean;
}

/** The characters MySQL's TEXT holds whatever they are (65,535 bytes, 4 a character at most). */
const TEXT_CHARACTERS = 16_383;

/**
 * The type a text column is made with on MySQL (knex writes `text` on the others whatever it is
 * asked): MEDIUMTEXT when its text may pass what TEXT holds, which MySQL refused with a 500.
 */
export function textType(column: Column): 'text' | 'mediumtext' {
  return column.length !== undefined && column.length <= TEXT_CHARACTERS ? 'text' : 'mediumtext';
}

/** A field kind's column on a table being created or altered: what a generated migration writes. */
export function addColumn(t: Knex.CreateTableBuilder | Knex.AlterTableBuilder, name: string, column: Column): void {
  const built =
    column.type === 'string' ? t.string(name, column.length) : column.type === 'text' ? t.text(name, textType(column)) : column.type === 'integer' ? t.integer(name) : column.type === 'bigInteger' ? t.bigInteger(name) : t.boolean(name);
  if (column.nullable) built.nullable();
  else built.notNullable();
}
