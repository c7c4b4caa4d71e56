import type { Knex } from 'knex';
import { insertRows } from '../../db/insert-rows.js';
import { args, LIMIT, named, param, prepare, type Prepared } from '../../db/prepared.js';
import type { Reads } from '../../db/reads.js';
import { dialectFor } from '../../db/dialects/index.js';
import { fieldSortIndex, keysetIndex } from '../../db/tables.js';
import type { Tx } from '../../db/tx.js';
import { isKernelSort, type Change, type Row, type SortField } from '../model/index.js';
import { eventsFor, writeEvents } from './outbox.js';
import { afterKeyset, type SortValue } from '../query/index.js';
import type { CompiledResource, Registry } from '../registry/index.js';
import { rowOfArray, toObject, toStored } from './rows.js';
import { searchIndexOf, type CheckedWords } from './search-index.js';

/**
 * Where one resource's objects are kept, built once per resource from its field kinds: its
 * statements, compiled by knex at start-up with named values (db/prepared.ts) and run by the
 * driver, its codec (kernel/storage/rows.ts), and its search terms (kernel/storage/search-index.ts), written with
 * every object in the same transaction. The generated handlers go through it for every read
 * and write of the resource's table, so each operation has one data path: the driver, in the
 * write's transaction (`tx`) or on the hot path's reads connection (db/reads.ts).
 */
export interface ResourceStore {
  readonly resource: CompiledResource;
  /** The stores of the resources its `ref` fields name, by field. */
  readonly references: ReadonlyMap<string, ResourceStore>;
  /** One object as clients read it, or undefined. */
  find(workspaceId: string, id: string): Promise<Row | undefined>;
  /** The objects of these ids (those that exist, in no order), as clients read them: one query. */
  findMany(workspaceId: string, ids: readonly string[]): Promise<Row[]>;
  /** Up to `limit` stored rows of the unfiltered list in this order, first or past (value, id). */
  page(workspaceId: string, sort: { column: string; order: 'asc' | 'desc' }, after: { value: SortValue; id: string } | undefined, limit: number): Promise<Row[]>;
  /**
   * The query of a narrowed list (filters, operators, updated_since): knex's builder on the
   * table, left to the planner, or (`keyset`) held to that sort's keyset index.
   */
  query(workspaceId: string, keyset?: SortField): Knex.QueryBuilder;
  /**
   * The query of a search (kernel/query/search.ts): the objects with every word, to be narrowed and
   * paged like query()'s, and the words to check on its rows (CheckedWords); undefined when a word
   * finds nothing.
   */
  search(workspaceId: string, words: readonly string[], keyset?: SortField): Promise<{ q: Knex.QueryBuilder; checked?: CheckedWords } | undefined>;
  /** The stored row, locked until `tx` ends (SQLite's writer holds the only lock), or undefined. */
  lock(tx: Tx, workspaceId: string, id: string): Promise<Row | undefined>;
  /** Whether the object exists, share-locked until `tx` ends so that it cannot be deleted under it. */
  exists(tx: Tx, workspaceId: string, id: string): Promise<boolean>;
  /** A new stored row: `id`, `workspace_id`, every field and both times. */
  insert(tx: Tx, row: Row): Promise<void>;
  /** New stored rows, a hundred per statement: what a batch writes. */
  insertMany(tx: Tx, rows: readonly Row[]): Promise<void>;
  /** Every field and `updated_at` of the stored row (named by its `id`); `before` is the row as it was read. */
  update(tx: Tx, workspaceId: string, row: Row, before: Row): Promise<void>;
  /** Deletes the stored row (as lock() read it). */
  remove(tx: Tx, workspaceId: string, row: Row): Promise<void>;
  /** Writes the events of a change in `tx` (kernel/storage/outbox.ts): they commit, or roll back, with it. */
  emit(tx: Tx, workspaceId: string, change: Change, now: number): Promise<void>;
  /** The events of several changes, in their order, in as few statements as they fit. */
  emitMany(tx: Tx, workspaceId: string, changes: readonly Change[], now: number): Promise<void>;
  /** A stored row as clients read it, in the mode of the workspace it was read in. */
  toObject(row: Row, workspaceId: string): Row;
  /** Values as clients send them, as stored. */
  toStored(values: Row): Row;
}

/** Every resource's store, by resource. */
export interface Stores {
  of(resource: CompiledResource): ResourceStore;
}

/** A page's statement: its sort and order, and which range of it: rows with a value (first, or past a cursor), or a nullable sort's rows without one (first, or past an id). */
type PageKey = `${string}:${'asc' | 'desc'}:${'first' | 'after' | 'after-unindexed' | 'nulls' | 'nulls-after'}`;

/** The keyset index of a sort: the kernel's times' or a field's. */
const sortIndex = (table: string, column: string) => (isKernelSort(column) ? keysetIndex(table, column) : fieldSortIndex(table, column));

/** The statements of one resource's table, compiled once (exported for its unit test). */
export function statementsOf(db: Knex, resource: CompiledResource) {
  const { table, fields } = resource.def;
  const [id, ...rest] = resource.columns;
  const byId = (q: Knex.QueryBuilder) => q.where('workspace_id', param('workspace_id')).andWhere('id', param('id'));
  const pages = new Map<PageKey, Prepared>();
  const inserted = [id as string, 'workspace_id', ...rest];
  for (const column of resource.sorts) {
    const nullable = resource.nullableSorts.has(column);
    for (const order of ['asc', 'desc'] as const) {
      for (const past of [false, true]) {
        // Past a cursor, the sort's keyset index (MariaDB would otherwise walk every row before it).
        const valued = (source: string | Knex.Raw) => {
          const q = db.from(source).where('workspace_id', param('workspace_id'));
          if (nullable) q.whereNotNull(column);
          if (past) afterKeyset(q, column, order, { value: param('value'), id: param('id') });
          return prepare(q.orderBy([{ column, order }, { column: 'id', order }]).limit(LIMIT).select(resource.columns));
        };
        const index = sortIndex(table, column);
        pages.set(`${column}:${order}:${past ? 'after' : 'first'}`, valued(past ? dialectFor(db).keysetSource(db, table, index) : table));
        // A field sort's index may be missing (a table made before field sorts): past a cursor, the statement without the hint then.
        if (past && !isKernelSort(column)) pages.set(`${column}:${order}:after-unindexed`, valued(table));
        if (!nullable) continue;
        // The rows without a value, after all the others, by id.
        const rest = db.from(table).where('workspace_id', param('workspace_id')).whereNull(column);
        if (past) rest.where('id', order === 'desc' ? '<' : '>', param('id'));
        pages.set(`${column}:${order}:${past ? 'nulls-after' : 'nulls'}`, prepare(rest.orderBy('id', order).limit(LIMIT).select(resource.columns)));
      }
    }
  }
  return {
    pages,
    /** A stored row read as the array of `resource.columns` (`object` and the pages select them in that order). */
    rowOf: rowOfArray(resource.columns),
    object: prepare(byId(db(table).select(resource.columns))),
    locked: prepare(byId(db(table).select(resource.columns)).forUpdate()),
    exists: prepare(byId(db(table).select('id')).forShare()),
    insert: prepare(db(table).insert(named(inserted))),
    /** The columns of a new row (what insertMany writes). */
    columns: inserted,
    update: prepare(byId(db(table).update(named([...Object.keys(fields), 'updated_at', 'version'])))),
    remove: prepare(byId(db(table).delete())),
  };
}

function storeOf(db: Knex, reads: Reads, resource: CompiledResource, references: Map<string, ResourceStore>): ResourceStore {
  const s = statementsOf(db, resource);
  const index = searchIndexOf(db, reads, resource);
  const dialect = dialectFor(db);
  // The table's indexes, read once by this process at its first page past a cursor in a field sort (whose index a table made before may lack).
  let known: Promise<Set<string>> | undefined;
  const indexes = () => (known ??= dialect.indexNames(db, resource.def.table).catch((err: unknown) => {
    known = undefined;
    throw err;
  }));
  const ids = (workspaceId: string, id: string) => ({ workspace_id: workspaceId, id });
  return {
    resource,
    references,
    async find(workspaceId, id) {
      const [row] = await reads.rows(s.object.sql, args(s.object, ids(workspaceId, id)), s.rowOf);
      return row && toObject(resource, row, workspaceId);
    },
    async findMany(workspaceId, wanted) {
      if (wanted.length === 0) return [];
      const rows = (await db.from(resource.def.table).where('workspace_id', workspaceId).whereIn('id', [...wanted]).select(resource.columns)) as Row[];
      return rows.map((row) => toObject(resource, row, workspaceId));
    },
    async page(workspaceId, { column, order }, after, limit) {
      const run = (range: 'first' | 'after' | 'after-unindexed' | 'nulls' | 'nulls-after', wanted: number) => {
        const statement = s.pages.get(`${column}:${order}:${range}`);
        if (!statement) throw new Error(`${resource.def.name} is not sorted by ${column}`);
        return reads.rows(statement.sql, args(statement, { workspace_id: workspaceId, value: after?.value, id: after?.id, limit: wanted }), s.rowOf);
      };
      if (after && after.value === null) return run('nulls-after', limit);
      const rows = await run(!after ? 'first' : isKernelSort(column) || (await indexes()).has(sortIndex(resource.def.table, column)) ? 'after' : 'after-unindexed', limit);
      // A nullable sort's rows without a value follow once those with one run out.
      if (rows.length >= limit || !resource.nullableSorts.has(column)) return rows;
      return [...rows, ...(await run('nulls', limit - rows.length))];
    },
    query: (workspaceId, keyset) => db.from(keyset ? dialect.keysetSource(db, resource.def.table, keysetIndex(resource.def.table, keyset)) : resource.def.table).where('workspace_id', workspaceId),
    async lock(tx, workspaceId, id) {
      const [row] = (await tx.all(s.locked.sql, args(s.locked, ids(workspaceId, id)))) as Row[];
      return row;
    },
    async exists(tx, workspaceId, id) {
      return (await tx.all(s.exists.sql, args(s.exists, ids(workspaceId, id)))).length > 0;
    },
    search(workspaceId, words, keyset) {
      if (!index) throw new Error(`${resource.def.name} has no searchable field`);
      return index.match((driven) => (driven ? dialect.drivenByTerms(db, resource.def.table, workspaceId) : this.query(workspaceId, keyset)), workspaceId, words);
    },
    async insert(tx, row) {
      await tx.run(s.insert.sql, args(s.insert, row));
      if (index) await index.add(tx, String(row.workspace_id), [row]);
    },
    async insertMany(tx, rows) {
      await insertRows(db, tx, resource.def.table, s.columns, rows);
      if (index && rows.length > 0) await index.add(tx, String(rows[0]?.workspace_id), rows);
    },
    async update(tx, workspaceId, row, before) {
      await tx.run(s.update.sql, args(s.update, { ...row, workspace_id: workspaceId }));
      if (index) await index.change(tx, workspaceId, before, row);
    },
    async remove(tx, workspaceId, row) {
      await tx.run(s.remove.sql, args(s.remove, ids(workspaceId, String(row.id))));
      if (index) await index.drop(tx, workspaceId, row);
    },
    emit: (tx, workspaceId, change, now) => writeEvents(db, tx, eventsFor(resource, workspaceId, change, now)),
    emitMany: (tx, workspaceId, changes, now) => writeEvents(db, tx, changes.flatMap((change) => eventsFor(resource, workspaceId, change, now))),
    toObject: (row, workspaceId) => toObject(resource, row, workspaceId),
    toStored: (values) => toStored(resource, values),
  };
}

/** Builds every resource's store once, for this database: what the generated handlers receive. */
export function createStores(db: Knex, reads: Reads, registry: Registry): Stores {
  const stores = new Map<CompiledResource, ResourceStore>();
  const references = new Map<CompiledResource, Map<string, ResourceStore>>();
  for (const resource of registry.resources) {
    const own = new Map<string, ResourceStore>();
    references.set(resource, own);
    stores.set(resource, storeOf(db, reads, resource, own));
  }
  // References are resolved once every store exists (a resource may name itself).
  for (const resource of registry.resources) {
    for (const [field, target] of Object.entries(resource.def.references ?? {})) {
      const other = registry.byName.get(target);
      if (!other) throw new Error(`${resource.def.name}.${field} names unknown resource ${target}`);
      references.get(resource)!.set(field, stores.get(other)!);
    }
  }
  return {
    of(resource) {
      const store = stores.get(resource);
      if (!store) throw new Error(`no store for resource ${resource.def.name}`);
      return store;
    },
  };
}
