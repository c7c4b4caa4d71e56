import type { Knex } from 'knex';
import { insertRows } from '../../db/insert-rows.js';
import { args, LIMIT, param, preparedOnce, ROWS_PER_INSERT } from '../../db/prepared.js';
import type { Reads } from '../../db/reads.js';
import { dialectFor, transaction } from '../../db/dialects/index.js';
import type { Tx } from '../../db/tx.js';
import type { Row } from '../model/index.js';
import { hasEveryWord, sameTerms, termsOf, type Walk, WORDS_VERSION } from '../query/index.js';
import type { CompiledResource, Registry } from '../registry/index.js';

/**
 * The `search_terms` table of one resource (kernel/query/search.ts says what a term is): the store
 * writes an object's terms in the transaction that writes the object, and a search narrows a
 * list's query by them.
 */
export interface SearchIndex {
  /** The terms of new stored rows (each with its `id` and `created_at`). */
  add(tx: Tx, workspaceId: string, rows: readonly Row[]): Promise<void>;
  /** One object's change: the words `before` had and `after` has not go, those it gains come. */
  change(tx: Tx, workspaceId: string, before: Row, after: Row): Promise<void>;
  /** Every term of a deleted object (its stored row as it was). */
  drop(tx: Tx, workspaceId: string, before: Row): Promise<void>;
  /**
   * A query on the resource's table (`from`, with the workspace's condition) narrowed to the
   * objects that have a term starting with each word, or undefined when a word starts none
   * (in an object: a query builder is a promise, which `await` would run). `q` is narrowed by
   * the rarest word when its matches drive, and by none when every word is common; the words
   * it is not narrowed by are `checked` on its rows (see CheckedWords).
   */
  match(from: (drivenByTerms: boolean) => Knex.QueryBuilder, workspaceId: string, words: readonly string[]): Promise<{ q: Knex.QueryBuilder; checked?: CheckedWords } | undefined>;
}

/**
 * Words a page checks on the rows it walks (kernel/query/keyset.ts checkedKeysetPage), each row's own
 * fields by the index's rule: every word, when each starts the terms of over DRIVING_MATCHES
 * objects and the page walks the list's keyset index, as most rows it meets have them; on
 * SQLite, the other words, when the rarest one's matches drive the query (DRIVEN_WALK). Asked
 * of the database instead, a common word's matches were gathered whole for every page (a word
 * of every one of 110,000 deals: 53 ms a page on SQLite, and 59 ms beside a rare word). Should
 * the rows walked seldom have them all, the rest of the page is the database's, narrowed by
 * the index.
 */
export interface CheckedWords {
  /** COMMON_WALK or DRIVEN_WALK. */
  walk: Walk;
  /** Whether a stored row has every word, by the index's own rule (kernel/query/search.ts). */
  has(row: Row): boolean;
  /** `q` narrowed to the rows with every word, by the index. */
  narrow(q: Knex.QueryBuilder): Knex.QueryBuilder;
}

/**
 * Up to this many objects, a word's matches drive the query: they are looked up and sorted
 * (a few milliseconds at most). Past it, every word is common, and the list's keyset index is
 * walked, each row's words checked (CheckedWords): a page stops after its rows.
 */
export const DRIVING_MATCHES = 2_000;

/** How a page of common words walks the list (CheckedWords): 1,000 rows, in chunks four times larger each time. */
export const COMMON_WALK: Walk = { rows: 1_000, growth: 4 };
/**
 * How a page walks a driving word's matches to check the other words, on SQLite: its first
 * page's rows, then every match left (each chunk sorts the matches again, so there is one more
 * at most). MariaDB and PostgreSQL check a driving word's matches for the other words through
 * their `(object_id, term)` index, a seek a row, which SQLite's terms lack (its plan gathers
 * each other word's matches whole instead: 59 ms a page for `website 12` over 110,000 deals,
 * 4 ms checked on the rows). Measured there, checking on the rows won a third where the other
 * words are common and lost as much where they are rare, so they keep the database's check.
 */
export const DRIVEN_WALK: Walk = { rows: DRIVING_MATCHES + 1, growth: Infinity };

const COLUMNS = ['workspace_id', 'resource', 'term', 'created_at', 'object_id'] as const;
/** Past every character: `term >= word AND term < word + END` holds the terms that start with word. */
const END = '\u{10FFFF}';

/** The rows of `search_terms` for stored rows of `resource`. */
export function termRows(resource: CompiledResource, workspaceId: string, rows: readonly Row[]): Row[] {
  const terms: Row[] = [];
  for (const row of rows) {
    for (const term of termsOf(resource.searchable, row)) terms.push({ workspace_id: workspaceId, resource: resource.def.name, term, created_at: row.created_at, object_id: row.id });
  }
  return terms;
}

/** The search index of a resource with searchable fields (undefined for one without). */
export function searchIndexOf(db: Knex, reads: Reads, resource: CompiledResource): SearchIndex | undefined {
  if (resource.searchable.length === 0) return undefined;
  const name = resource.def.name;
  // Whether the terms have their (object_id, term) index (migrations/20261125000000_search.ts).
  const dialect = dialectFor(db);
  const seeksByObject = dialect.termsByObject;
  const starting = (q: Knex.QueryBuilder, workspaceId: Knex.Value, resourceName: Knex.Value, word: Knex.Value, end: Knex.Value) =>
    q.from('search_terms').where('workspace_id', workspaceId).andWhere('resource', resourceName).andWhere('term', '>=', word).andWhere('term', '<', end);
  // How many objects a word starts a term of, counted up to one past DRIVING_MATCHES: one index range, cut short.
  const counted = preparedOnce(db, 'search_terms:count', () =>
    db.count({ n: '*' }).from(starting(db.queryBuilder().select(db.raw('1')), param('workspace_id'), param('resource'), param('word'), param('end')).limit(LIMIT).as('matches')),
  );
  // One object's rows by their whole key: `count` terms (t0, t1, ...).
  const deleteOf = (count: number) =>
    preparedOnce(db, `search_terms:delete:${count}`, () =>
      db('search_terms')
        .where('workspace_id', param('workspace_id'))
        .andWhere('resource', param('resource'))
        .whereIn('term', Array.from({ length: count }, (_, i) => param(`t${i}`)))
        .andWhere('created_at', param('created_at'))
        .andWhere('object_id', param('object_id'))
        .delete(),
    );
  const insert = (tx: Tx, terms: readonly Row[]) => insertRows(db, tx, 'search_terms', COLUMNS, terms);
  const remove = async (tx: Tx, workspaceId: string, row: Row, terms: readonly string[]) => {
    for (let at = 0; at < terms.length; at += ROWS_PER_INSERT) {
      const chunk = terms.slice(at, at + ROWS_PER_INSERT);
      const statement = deleteOf(chunk.length);
      const values: Row = { workspace_id: workspaceId, resource: name, created_at: row.created_at, object_id: row.id };
      chunk.forEach((term, i) => (values[`t${i}`] = term));
      await tx.run(statement.sql, args(statement, values));
    }
  };
  return {
    add: (tx, workspaceId, rows) => insert(tx, termRows(resource, workspaceId, rows)),
    async change(tx, workspaceId, before, after) {
      if (sameTerms(resource.searchable, before, after)) return;
      const had = termsOf(resource.searchable, before);
      const has = termsOf(resource.searchable, after);
      await remove(tx, workspaceId, before, [...had].filter((term) => !has.has(term)));
      await insert(tx, termRows(resource, workspaceId, [after]).filter((row) => !had.has(row.term as string)));
    },
    drop: (tx, workspaceId, before) => remove(tx, workspaceId, before, [...termsOf(resource.searchable, before)]),
    async match(from, workspaceId, words) {
      const counts = await Promise.all(
        words.map(async (word) => {
          const [row] = await reads.all(counted.sql, args(counted, { workspace_id: workspaceId, resource: name, word, end: word + END, limit: DRIVING_MATCHES + 1 }));
          return { word, n: Number(row?.n) };
        }),
      );
      counts.sort((a, b) => a.n - b.n);
      if (counts[0]?.n === 0) return undefined;
      const matches = (word: string) => starting(db.queryBuilder().select('object_id'), workspaceId, name, word, word + END);
      const checked = (some: readonly string[], walk: Walk): CheckedWords => ({
        walk,
        has: (row) => hasEveryWord(termsOf(resource.searchable, row), some),
        narrow: (q) => some.reduce((narrowed, word) => narrowed.whereIn('id', matches(word)), q),
      });
      const rarestFirst = counts.map((c) => c.word);
      if ((counts[0]?.n ?? Infinity) > DRIVING_MATCHES) return { q: from(false), checked: checked(rarestFirst, COMMON_WALK) };
      const [rarest, ...others] = rarestFirst;
      // The rarest word's matches drive; the others are checked on them.
      const q = dialect.drivenBy(from(true), 'id', matches(rarest!));
      if (others.length === 0) return { q };
      if (!seeksByObject) return { q, checked: checked(others, DRIVEN_WALK) };
      for (const word of others) q.whereIn('id', matches(word));
      return { q };
    },
  };
}

/** Objects indexed per transaction when a resource's terms are made again. */
const REINDEX_CHUNK = 500;

/**
 * Makes the terms of every resource whose searchable fields are not those its terms were made
 * from (a database from before search, a plugin that now searches another field), and drops
 * those of resources that search nothing any more. Run by the one process that prepares the
 * database, before it serves; a resource whose terms are current costs one read. Says which
 * resources it indexed, and how many objects each had.
 */
export async function reindexStale(db: Knex, registry: Registry, now: number): Promise<Array<{ resource: string; objects: number }>> {
  const indexed = new Map(((await db('search_indexed').select('resource', 'fields')) as Array<{ resource: string; fields: string }>).map((r) => [r.resource, r.fields]));
  const done: Array<{ resource: string; objects: number }> = [];
  for (const resource of registry.resources) {
    // What the terms are made of: the fields, and how words are made of them.
    const fields = resource.searchable.length === 0 ? '' : `${WORDS_VERSION}:${resource.searchable.join(',')}`;
    if ((indexed.get(resource.def.name) ?? '') === fields) continue;
    await db('search_terms').where('resource', resource.def.name).delete();
    const objects = fields === '' ? 0 : await reindex(db, resource);
    await db('search_indexed').where('resource', resource.def.name).delete();
    if (fields !== '') await db('search_indexed').insert({ resource: resource.def.name, fields, indexed_at: now });
    done.push({ resource: resource.def.name, objects });
  }
  return done;
}

/**
 * Every object's terms, a chunk of objects per transaction, each chunk locked while it is indexed
 * (a term already there, written by another process doing the same, is left as it is).
 */
async function reindex(db: Knex, resource: CompiledResource): Promise<number> {
  const { table } = resource.def;
  let after = '';
  let objects = 0;
  for (;;) {
    const rows = await transaction(db, async (trx) => {
      const chunk = (await trx(table).where('id', '>', after).orderBy('id').limit(REINDEX_CHUNK).select('id', 'workspace_id', 'created_at', ...resource.searchable).forUpdate()) as Row[];
      if (chunk.length === 0) return chunk;
      const terms = chunk.flatMap((row) => termRows(resource, String(row.workspace_id), [row]));
      for (let at = 0; at < terms.length; at += ROWS_PER_INSERT) await trx('search_terms').insert(terms.slice(at, at + ROWS_PER_INSERT)).onConflict([...COLUMNS]).ignore();
      return chunk;
    });
    objects += rows.length;
    if (rows.length < REINDEX_CHUNK) return objects;
    after = String(rows[rows.length - 1]?.id);
  }
}
