/**
 * API versions (issue 57): a page of GET /v1/gadgets?limit=50 read by keys pinned two versions
 * behind (2026-11-21: every object through a rename and a conversion by code, test/versions/gadgets)
 * against the same page read by keys at the latest version, in alternating rounds of the same
 * run, through the whole chain. Target: the older version's throughput >= 0.87 of the latest's.
 * Usage: npm run bench:versions   [BENCH_DATABASE_URL=mysql://root@127.0.0.1:3306/test BENCH_REDIS_URL=redis://127.0.0.1:6379 | postgres://postgres@127.0.0.1:5432/test]
 */
import path from 'node:path';
import { createKey, createWorkspace } from '../src/auth/keys.js';
import { scopeCatalog } from '../src/auth/scopes.js';
import { loadConfig, ROOT_DIR } from '../src/common/config.js';
import { createDb } from '../src/db/connect.js';
import { migrateLatest } from '../src/db/migrate.js';
import { sampleRow, seededRandom } from '../src/demo/samples.js';
import { loadRegistry } from '../src/kernel/registry/registry.js';
import { Versions } from '../src/versions/index.js';
import { besidePlugins } from '../test/helpers/beside-plugins.js';
import { BACKEND, DURATION, emptyDatabase, env, fmt, KEYS, load, medianOf, ROUNDS, start } from './lib.js';

const ROWS = 500;
const OLDEST = '2026-11-21';

async function prepare(folders: ReturnType<typeof besidePlugins>) {
  await emptyDatabase();
  const own = { PLUGINS_DIR: folders.plugins, MIGRATIONS_DIR: folders.migrations };
  const config = loadConfig({ ...env, ...own });
  const db = createDb(config.database);
  await migrateLatest(db, config.migrationsDirs);
  const registry = await loadRegistry(folders.plugins);
  const versions = new Versions(registry);
  const gadgets = registry.byName.get('gadget');
  if (!gadgets) throw new Error('no gadget plugin');
  const ws = await createWorkspace(db, { name: 'bench', plan: 'enterprise' });
  const scopes = scopeCatalog(registry).map((s) => s.name);
  const tokensAt = async (version: string) => {
    const tokens: string[] = [];
    for (let i = 0; i < KEYS / 2; i++) tokens.push((await createKey(db, { scopes, versions }, { workspace: ws.id, name: `bench ${version} ${i}`, scopes: ['read:gadgets'], rate_limit: 6000, api_version: version })).token);
    return tokens;
  };
  const random = seededRandom(57);
  const rows = Array.from({ length: ROWS }, (_, i) => ({ ...sampleRow(gadgets, ws.id, i, new Map(), random, Date.UTC(2026, 0, 1) + i * 1000), size_cm: i % 300, close_date: '2027-03-01' }));
  for (let at = 0; at < rows.length; at += 100) await db('gadgets').insert(rows.slice(at, at + 100));
  const latest = await tokensAt(versions.latest);
  const oldest = await tokensAt(OLDEST);
  await db.destroy();
  return { own, latest, oldest, latestVersion: versions.latest };
}

async function main(): Promise<void> {
  const folders = besidePlugins('bench-versions');
  const fixture = path.join(ROOT_DIR, 'test', 'versions', 'gadgets');
  for (const file of ['gadgets.ts', '20261202130000_gadgets.ts']) folders.place(path.join(fixture, file));
  try {
    const { own, latest, oldest, latestVersion } = await prepare(folders);
    const server = await start('src/server.ts', own);
    try {
      const url = `${server.url}/v1/gadgets?limit=50`;
      // Warm both paths once, then alternate: latest, oldest, ...
      await load(url, latest, 1);
      await load(url, oldest, 1);
      const ratios: number[] = [];
      const rps = { latest: [] as number[], oldest: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        const atLatest = await load(url, latest, DURATION, { pid: server.child.pid });
        const atOldest = await load(url, oldest, DURATION, { pid: server.child.pid });
        rps.latest.push(atLatest.rps);
        rps.oldest.push(atOldest.rps);
        ratios.push(atOldest.rps / atLatest.rps);
        console.log(`round ${round + 1}: latest (${latestVersion}) ${fmt(atLatest.rps)} req/s, ${OLDEST} ${fmt(atOldest.rps)} req/s: ${ratios[round]!.toFixed(3)}`);
      }
      console.log(`\n${BACKEND}, a page of 50 gadgets, ${ROUNDS} rounds of ${DURATION} s each:`);
      console.log(`  latest ${fmt(medianOf(rps.latest))} req/s, two versions behind ${fmt(medianOf(rps.oldest))} req/s`);
      console.log(`  two versions behind / latest: median ${medianOf(ratios).toFixed(3)} (spread ${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)}; target >= 0.87)`);
    } finally {
      server.child.kill('SIGTERM');
    }
  } finally {
    folders.remove();
  }
}

await main();
