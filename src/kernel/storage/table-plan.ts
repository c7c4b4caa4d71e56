import type { Knex } from 'knex';
import { dialectFor } from '../../db/dialects/index.js';
import { fieldSortIndex, keysetIndex, type Column } from '../../db/tables.js';
import { MAX_BODY_BYTES } from '../../common/wire.js';
import { isKernelSort, KERNEL_TAIL } from '../model/index.js';
import type { CompiledResource } from '../registry/index.js';

/**
 * What a resource's table must have, from its declaration alone: the kernel's columns, a column
 * per field as its kind says, a keyset index per sort and one per filter. planTable() compares
 * that with the database: what a migration must add (npm run migrate:make writes it), and the
 * columns whose kind does not fit (boot refuses to start on either).
 */

export interface IndexSpec {
  name: string;
  columns: string[];
  /**
   * The column among `columns` that is indexed by its lower case (a caseless field's, which its
   * filter compares so: db/dialect.ts caselessAmong).
   */
  lowered?: string;
  /**
   * A field sort's index: migrate:make writes it, and a list sorted by the field walks it; a
   * table made before field sorts existed lacks it, and boot warns instead of refusing (the
   * sort works, reading more rows, until migrate:make has run).
   */
  optional?: boolean;
}

export interface NamedColumn {
  name: string;
  column: Column;
}

export interface TablePlan {
  resource: CompiledResource;
  /** The table does not exist yet. */
  create: boolean;
  /** The plugin's columns it lacks (all of them for a new table). */
  columns: NamedColumn[];
  indexes: IndexSpec[];
  /** Columns there, of a kind that does not fit the field's. */
  mismatches: Array<{ name: string; have: string; want: string }>;
  /**
   * Columns there that no field declares (a field renamed or removed), NOT NULL without a
   * default: every create would fail on them, as the kernel writes only the fields' columns.
   */
  strays: string[];
  /**
   * Columns of fields that may be null (a field no longer required), NOT NULL without a default:
   * a create without the field, or a PATCH to null, would fail on them.
   */
  notNull: string[];
  /** Every column there that no field declares (a field renamed or removed), strays or not, as the database describes it. */
  undeclared: Array<{ name: string; info: Knex.ColumnInfo }>;
  /** Columns to rename to a field's new name (`npm run migrate:make -- --rename table.old:new`), instead of adding the field's. */
  renames: Array<{ from: string; to: string }>;
}

/** The column of each of the kernel's own (model's KERNEL_TAIL, `id` and `workspace_id`): the compiler holds the two lists to each other. */
const KERNEL_COLUMN: Readonly<Record<'id' | 'workspace_id' | (typeof KERNEL_TAIL)[number], NamedColumn['column']>> = {
  id: { type: 'string', length: 64, nullable: false },
  workspace_id: { type: 'string', length: 64, nullable: false },
  created_at: { type: 'bigInteger', nullable: false },
  updated_at: { type: 'bigInteger', nullable: false },
  // The object's version (docs/reference.md section 16); rows stored before it had one are at version 1.
  version: { type: 'integer', nullable: false },
};
const named = (name: keyof typeof KERNEL_COLUMN): NamedColumn => ({ name, column: KERNEL_COLUMN[name] });
/** The columns every resource table has, before the plugin's own. */
export const KERNEL_COLUMNS: readonly NamedColumn[] = [named('id'), named('workspace_id')];
/** The times, after the plugin's own. */
export const KERNEL_TIMES: readonly NamedColumn[] = KERNEL_TAIL.filter((name) => name !== 'version').map(named);
/** The version, after the times. */
export const KERNEL_VERSION: NamedColumn = named('version');
export const VERSION_DEFAULT = 1;

/** The plugin's own columns, in the order of its fields. */
export function fieldColumns(resource: CompiledResource): NamedColumn[] {
  return Object.entries(resource.kinds).map(([name, kind]) => ({ name, column: kind.column }));
}

/**
 * The indexes a resource's lists need: one keyset index per sort, one per filter (on a caseless
 * field's lower case, as its filter compares).
 */
export function wantedIndexes(resource: CompiledResource): IndexSpec[] {
  const { table, list } = resource.def;
  return [
    ...list.sorts.map((sort) => ({ name: keysetIndex(table, sort), columns: ['workspace_id', sort, 'id'] })),
    ...resource.sorts.filter((sort) => !isKernelSort(sort)).map((sort) => ({ name: fieldSortIndex(table, sort), columns: ['workspace_id', sort, 'id'], optional: true })),
    ...list.filters.map((filter) => ({
      name: `${table}_ws_${filter}`,
      columns: ['workspace_id', filter, 'created_at', 'id'],
      ...(resource.kinds[filter]?.caseless ? { lowered: filter } : {}),
    })),
  ];
}

/** How a column reads in `columnInfo()`, in words. */
const describe = (info: Knex.ColumnInfo) => `${info.type === 'character varying' ? 'varchar' : info.type}${info.maxLength ? `(${info.maxLength})` : ''}`;
const wanted = (column: Column) => `${column.type}${column.length ? `(${column.length})` : ''}`;

const INTEGERS = ['int', 'integer', 'mediumint', 'bigint'];
const TEXTS = ['text', 'mediumtext', 'longtext'];
// MySQL's and SQLite's names, then PostgreSQL's.
const STRINGS = ['varchar', 'char', 'character varying', 'character'];

/**
 * Whether a column holds every value of the kind: the same family, at least as long, at least
 * as wide (a wider column is fine; a narrower one would cut or refuse values). Nullability is
 * not compared: migrate:make adds a required field's column to a table with rows as nullable.
 */
export function fits(info: Knex.ColumnInfo, column: Column): boolean {
  const type = info.type.toLowerCase();
  const length = Number(info.maxLength);
  switch (column.type) {
    case 'string':
      return TEXTS.includes(type) || (STRINGS.includes(type) && (!info.maxLength || length >= (column.length ?? 255)));
    case 'text':
      // MySQL gives a text column's size in bytes (TEXT 65,535), the others none. A varchar long
      // enough holds it too, in characters on every database: a plugin's own migration made
      // text(300)'s column a varchar(300), as the README once taught, and it holds every value.
      if (STRINGS.includes(type)) return column.length !== undefined && Boolean(info.maxLength) && length >= column.length;
      return TEXTS.includes(type) && (!info.maxLength || length >= (column.length !== undefined ? column.length * 4 : MAX_BODY_BYTES));
    case 'integer':
      return INTEGERS.includes(type);
    case 'bigInteger':
      // SQLite's integer is 64 bits whatever it is called.
      return type === 'bigint' || type === 'integer';
    case 'boolean':
      return type === 'boolean' || type === 'tinyint';
  }
}

/** The resource's table as the database has it, against what the declaration needs. */
export async function planTable(db: Knex, resource: CompiledResource): Promise<TablePlan> {
  const { table } = resource.def;
  const have = (await db(table).columnInfo()) as unknown as Record<string, Knex.ColumnInfo>;
  const exists = Object.keys(have).length > 0;
  const indexes = exists ? await dialectFor(db).indexNames(db, table) : new Set<string>();
  const plan: TablePlan = { resource, create: !exists, columns: [], indexes: [], mismatches: [], strays: [], notNull: [], undeclared: [], renames: [] };
  const blocks = (info: Knex.ColumnInfo) => !info.nullable && (info.defaultValue === null || info.defaultValue === undefined);
  const declared = [...KERNEL_COLUMNS, ...fieldColumns(resource), ...KERNEL_TIMES, KERNEL_VERSION];
  for (const { name, column } of declared) {
    const info = have[name];
    if (!info) plan.columns.push({ name, column });
    else if (!fits(info, column)) plan.mismatches.push({ name, have: describe(info), want: wanted(column) });
    else if (column.nullable && blocks(info)) plan.notNull.push(name);
  }
  const names = new Set(declared.map((c) => c.name));
  plan.undeclared = Object.entries(have)
    .filter(([name]) => !names.has(name))
    .map(([name, info]) => ({ name, info }));
  plan.strays = plan.undeclared.filter(({ info }) => blocks(info)).map(({ name }) => name);
  plan.indexes = wantedIndexes(resource).filter((index) => !indexes.has(index.name));
  return plan;
}
