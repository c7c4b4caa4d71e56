import type { Knex } from 'knex';

/**
 * Statements compiled by knex once, whose values are named. A query is built with `param(name)`
 * wherever a value goes; compiling it reads, from the bindings knex gives back, which name each
 * placeholder stands for. The values are then passed by name (`args`), whatever order the
 * dialect put them in: nothing is compiled per request, and nothing relies on the order in
 * which knex writes an INSERT's columns or a WHERE's conditions.
 */
class Param {
  constructor(readonly name: string) {}
}

/** The value named `name`, where a query built for prepare() takes a value. */
export const param = (name: string): Knex.Value => new Param(name) as unknown as Knex.Value;

/** Knex takes no placeholder in LIMIT: a statement built with `.limit(LIMIT)` takes its limit as the value `limit`. */
export const LIMIT = 987_654_321;

export interface Prepared {
  readonly sql: string;
  /** The name of each placeholder's value, in the statement's order. */
  readonly names: readonly string[];
}

/** Compiles a query whose every value is a param() (or the LIMIT): its text, and the names of its values in order. */
export function prepare(query: Knex.QueryBuilder): Prepared {
  const { sql, bindings } = query.toSQL().toNative();
  const names = bindings.map((binding, i) => {
    if (binding instanceof Param) return binding.name;
    if (binding === LIMIT) return 'limit';
    throw new Error(`statement "${sql}": value ${i + 1} (${JSON.stringify(binding)}) has no name: build it with param()`);
  });
  return { sql, names };
}

/** A statement's values, in its order, from values by name (one left out is NULL). */
export function args(statement: Prepared, values: object): unknown[] {
  const named = values as Readonly<Record<string, unknown>>;
  return statement.names.map((name) => named[name]);
}

/** Rows one multi-row INSERT takes at most (SQLite's compound SELECT, which knex writes for it, takes 500 terms). */
export const ROWS_PER_INSERT = 100;

/**
 * The values of an INSERT of `rows.length` rows built from `named(columns)` for each: every
 * row's values in the statement's column order, row after row.
 */
export function rowsArgs(statement: Prepared, rows: readonly object[]): unknown[] {
  const perRow = statement.names.length / rows.length;
  return statement.names.map((name, i) => (rows[Math.floor(i / perRow)] as Readonly<Record<string, unknown>>)[name]);
}

/** Each of a row's columns as the value of the same name: what `db(table).insert(named(columns))` writes. */
export const named = (columns: readonly string[]): Record<string, Knex.Value> => Object.fromEntries(columns.map((column) => [column, param(column)]));

const cache = new WeakMap<Knex, Map<string, Prepared>>();

/** The statement under `key` for this database, compiled at its first use: the kernel's own tables' statements. */
export function preparedOnce(db: Knex, key: string, build: () => Knex.QueryBuilder): Prepared {
  let statements = cache.get(db);
  if (!statements) cache.set(db, (statements = new Map()));
  let statement = statements.get(key);
  if (!statement) statements.set(key, (statement = prepare(build())));
  return statement;
}
