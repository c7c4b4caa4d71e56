import type { Knex } from 'knex';
import { dialectOf, isMysql } from './dialect.js';

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

/** The name of a resource table's keyset index for one sort column. */
export function keysetIndex(table: string, column: 'created_at' | 'updated_at'): string {
  return `${table}_ws_${column === 'created_at' ? 'created' : 'updated'}`;
}

/**
 * Where a keyset page past a cursor reads from. MariaDB, given the whole row to fetch, plans the
 * workspace's rows by `ref` and filters every row before the cursor (a page 100,000 deep took
 * 200 ms); told to use the sort's keyset index it seeks to the cursor (under 1 ms). SQLite
 * seeks on its own.
 */
export function keysetSource(db: Knex, table: string, column: 'created_at' | 'updated_at'): string | Knex.Raw {
  return isMysql(db) ? db.raw('?? FORCE INDEX (??)', [table, keysetIndex(table, column)]) : table;
}

/**
 * A table read through one of its indexes on SQLite, whose planner knows nothing of the rows
 * (the service runs no ANALYZE) and, given a page to fetch whole, walks the primary key instead
 * of an index that finds far fewer rows. The other planners choose by their statistics.
 */
export function indexedBy(db: Knex, table: string, index: string): string | Knex.Raw {
  return dialectOf(db) === 'sqlite' ? db.raw('?? INDEXED BY ??', [table, index]) : table;
}

/**
 * A resource table whose rows a search's few matches name (kernel/storage/search-index.ts): they are
 * fetched by id and sorted, not found by walking the workspace's rows in the list's order,
 * which the planners would otherwise choose to skip the sort. SQLite is told by `+` (the
 * workspace's condition then uses no index); MariaDB by leaving the keyset indexes out;
 * PostgreSQL by the matches' form (drivenBy).
 */
export function drivenByTerms(db: Knex, table: string, workspaceId: string): Knex.QueryBuilder {
  const dialect = dialectOf(db);
  if (dialect === 'mysql') return db.from(db.raw('?? IGNORE INDEX (??, ??)', [table, keysetIndex(table, 'created_at'), keysetIndex(table, 'updated_at')])).where('workspace_id', workspaceId);
  if (dialect === 'postgres') return db.from(table).where('workspace_id', workspaceId);
  return db.from(table).whereRaw('+?? = ?', ['workspace_id', workspaceId]);
}

/**
 * Narrows `q` to the rows whose `column` is among those `matches` selects, where the matches are
 * few and drive the query (see drivenByTerms). PostgreSQL, given a semi-join, plans it by
 * walking the list's keyset index and checking each row, assuming the matches spread evenly
 * along it: when they sit at its far end, a first page walked 97,000 rows (300 ms). As an
 * array computed first (`= ANY(ARRAY(...))`), the matches are looked up by primary key and
 * sorted (12 ms for 1,111 of 110,000). MySQL and SQLite plan the semi-join as wanted.
 */
export function drivenBy(db: Knex, q: Knex.QueryBuilder, column: string, matches: Knex.QueryBuilder): Knex.QueryBuilder {
  if (dialectOf(db) === 'postgres') return q.whereRaw('?? = ANY(ARRAY(?))', [column, matches]);
  return q.whereIn(column, matches);
}

/** The names of a table's indexes. */
export async function indexNames(db: Knex, table: string): Promise<Set<string>> {
  if (isMysql(db)) {
    const [rows] = (await db.raw('SHOW INDEX FROM ??', [table])) as [Array<{ Key_name: string }>];
    return new Set(rows.map((r) => r.Key_name));
  }
  if (dialectOf(db) === 'postgres') {
    const { rows } = (await db.raw('SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ?', [table])) as { rows: Array<{ indexname: string }> };
    return new Set(rows.map((r) => r.indexname));
  }
  const rows = (await db.raw('SELECT name FROM pragma_index_list(?)', [table])) as Array<{ name: string }>;
  return new Set(rows.map((r) => r.name));
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
