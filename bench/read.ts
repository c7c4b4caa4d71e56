/**
 * Read path benchmark: a page of GET /v1/deals?limit=50 100,000 rows deep vs the first page,
 * both through the whole chain, one connection, in alternating rounds: time per request and
 * the ratio of each round, their median and spread (target <= 1.1, issue 13). On MariaDB +
 * Redis, or on the embedded default with BENCH_DATABASE_URL=sqlite:FILE. (The chain against
 * a bare route is bench:peer.) Then the same for a filtered list (issue 26): a page of
 * GET /v1/deals?amount[gte]=0&limit=50 2,000 matching rows deep vs its first page (target <= 1.2),
 * and for a search (q=1, a word that starts the number of one deal in nine; q=website, a word
 * of every deal; q=12, 1,111 deals, whose matches drive the query), the same. Then a list sorted
 * by a field (issue 56): a page of GET /v1/deals?sort=-amount&limit=50 5,000 rows deep vs its
 * first page (target <= 1.15). BENCH_ONLY=sort runs that one alone.
 * Usage: npm run bench:read   [BENCH_DATABASE_URL=mysql://root@127.0.0.1:3306/test BENCH_REDIS_URL=redis://127.0.0.1:6379 | postgres://postgres@127.0.0.1:5432/test | BENCH_DATABASE_URL=sqlite:/tmp/bench.db]
 */
import { encodeCursor } from '../src/kernel/query/cursor.js';
import { termRows } from '../src/kernel/storage/search-index.js';
import { sampleRow, seededRandom } from '../src/demo/samples.js';
import { loadRegistry } from '../src/kernel/registry/registry.js';
import { loadConfig } from '../src/common/config.js';
import { BACKEND, EMBEDDED, DURATION, env, freshDatabase, load, medianOf, ROUNDS, start } from './lib.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 110_000);

async function prepare() {
  const { db, workspaceId, tokens } = await freshDatabase(['read:deals']);
  const registry = await loadRegistry(loadConfig(env).pluginsDir);
  const deals = registry.byName.get('deal');
  if (!deals) throw new Error('no deal plugin');
  const random = seededRandom(42);
  const start = Date.UTC(2025, 0, 1);
  process.stdout.write(`inserting ${ROWS} deals`);
  // SQLite takes at most 500 rows in one INSERT.
  const chunk = EMBEDDED ? 400 : 2000;
  for (let done = 0; done < ROWS; done += chunk) {
    const rows = Array.from({ length: Math.min(chunk, ROWS - done) }, (_, i) => sampleRow(deals, workspaceId, done + i, new Map(), random, start + (done + i) * 1000));
    await db('deals').insert(rows);
    const terms = termRows(deals, workspaceId, rows);
    for (let at = 0; at < terms.length; at += chunk) await db('search_terms').insert(terms.slice(at, at + chunk));
    if (done % 20_000 < chunk) process.stdout.write('.');
  }
  console.log(' done');
  // PostgreSQL: the statistics and visibility map autovacuum brings up to date within a minute
  // of a load this size (its planner, told nothing of 110,000 new rows, chose to sort them all
  // for a filtered first page: 58 ms instead of 0.05).
  if (db.client.config.client === 'pg') for (const table of ['deals', 'search_terms']) await db.raw('VACUUM ANALYZE ??', [table]);
  const deep = (await db('deals').select('created_at', 'id').where('workspace_id', workspaceId).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).offset(99_999).limit(1).first()) as { created_at: number; id: string };
  const cursor = encodeCursor({ resource: 'deal', sort: '-created_at', value: Number(deep.created_at), id: deep.id });
  const deepMatch = (await db('deals').select('created_at', 'id').where('workspace_id', workspaceId).where('amount', '>=', 0).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).offset(1_999).limit(1).first()) as { created_at: number; id: string };
  const filteredCursor = encodeCursor({ resource: 'deal', sort: '-created_at', value: Number(deepMatch.created_at), id: deepMatch.id });
  const searched = (word: string) => db('search_terms').select('object_id').where({ workspace_id: workspaceId, resource: 'deal' }).andWhere('term', '>=', word).andWhere('term', '<', `${word}\u{10FFFF}`);
  const searchCursor = async (word: string, deep: number) => {
    const row = (await db('deals').select('created_at', 'id').where('workspace_id', workspaceId).whereIn('id', searched(word)).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).offset(deep).limit(1).first()) as { created_at: number; id: string };
    return encodeCursor({ resource: 'deal', sort: '-created_at', value: Number(row.created_at), id: row.id });
  };
  const searchCursors = { rare: await searchCursor(RARE, 1_999), common: await searchCursor(COMMON, 1_999), few: await searchCursor(FEW, 999) };
  const byAmount = (await db('deals').select('amount', 'id').where('workspace_id', workspaceId).whereNotNull('amount').orderBy([{ column: 'amount', order: 'desc' }, { column: 'id', order: 'desc' }]).offset(4_999).limit(1).first()) as { amount: number; id: string };
  const amountCursor = encodeCursor({ resource: 'deal', sort: '-amount', value: Number(byAmount.amount), id: byAmount.id });
  await db.destroy();
  return { workspaceId, tokens, cursor, filteredCursor, searchCursors, amountCursor };
}

/**
 * Sample titles are "Website redesign <n>": "1" starts the number of one deal in nine, "website"
 * every title: more than DRIVING_MATCHES, so the list's index is walked. "12" starts 1,111
 * numbers, so its matches drive the query.
 */
const RARE = '1';
/** BENCH_ONLY=sort: the sorted list's depth alone. */
class Stop extends Error {}
const COMMON = 'website';
const FEW = '12';
const { tokens, cursor, filteredCursor, searchCursors, amountCursor } = await prepare();
const chain = await start('src/server.ts');

/**
 * The first page and a deep one, both warmed alike (JIT, pool, prepared statements, key cache),
 * then alternated. One connection: each request waits for the previous, so the time of one is
 * 1 / (req/s), which resolves microseconds where autocannon's latency histogram counts whole ms.
 */
async function depth(firstPage: string, deepPage: string, deepLabel: string, target: number, title: string): Promise<void> {
  await load(firstPage, tokens, 2, { connections: 1 });
  await load(deepPage, tokens, 2, { connections: 1 });
  const firsts: number[] = [];
  const deeps: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    firsts.push(1000 / (await load(firstPage, tokens, DURATION, { connections: 1 })).rps);
    deeps.push(1000 / (await load(deepPage, tokens, DURATION, { connections: 1 })).rps);
    console.log('  round %d: first page %s ms, %s %s ms, ratio %s', round + 1, firsts[round]!.toFixed(3), deepLabel, deeps[round]!.toFixed(3), (deeps[round]! / firsts[round]!).toFixed(2));
  }
  const ratios = deeps.map((d, i) => d / firsts[i]!);
  console.log('\n%s on %s, whole chain, one connection, %d rounds of %d s (time per request = 1 / req/s, medians)', title, BACKEND, ROUNDS, DURATION);
  console.log('  first page                     %s ms', medianOf(firsts).toFixed(3));
  console.log('  %s %s ms', deepLabel.padEnd(30), medianOf(deeps).toFixed(3));
  const ratio = medianOf(ratios);
  console.log('  ratio deep / first: median %s, spread %s-%s   (target <= %s: %s)\n', ratio.toFixed(2), Math.min(...ratios).toFixed(2), Math.max(...ratios).toFixed(2), target.toFixed(2), ratio <= target ? 'met' : 'MISSED');
}

try {
  await depth(`${chain.url}/v1/deals?sort=-amount&limit=50`, `${chain.url}/v1/deals?sort=-amount&limit=50&cursor=${amountCursor}`, 'page 5,000 rows deep', 1.15, 'Sorted by a field (sort=-amount)');
  if (process.env.BENCH_ONLY === 'sort') throw new Stop();
  await depth(`${chain.url}/v1/deals?limit=50`, `${chain.url}/v1/deals?limit=50&cursor=${cursor}`, 'page 100,000 rows deep', 1.1, 'Page depth');
  await depth(`${chain.url}/v1/deals?amount[gte]=0&limit=50`, `${chain.url}/v1/deals?amount[gte]=0&limit=50&cursor=${filteredCursor}`, 'page 2,000 matches deep', 1.2, 'Filtered page depth (amount[gte]=0)');
  for (const [which, word, deep, says] of [
    ['rare', RARE, '2,000', 'one deal in nine'],
    ['common', COMMON, '2,000', 'every deal'],
    ['few', FEW, '1,000', '1,111 deals'],
  ] as const) {
    await depth(`${chain.url}/v1/deals?q=${word}&limit=50`, `${chain.url}/v1/deals?q=${word}&limit=50&cursor=${searchCursors[which]}`, `page ${deep} matches deep`, 1.2, `Search page depth (q=${word}: ${says})`);
  }
} catch (err) {
  if (!(err instanceof Stop)) throw err;
} finally {
  chain.child.kill('SIGTERM');
}
