import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { CHECKPOINT_BACKSTOP_PAGES, LOG_SIZE_LIMIT_BYTES } from '../../src/db/checkpoint.js';
import { createDb } from '../../src/db/connect.js';
import { backend } from '../helpers/backend.js';
import { waitFor } from '../helpers/app.js';

/** Threads of this process now (Linux). */
const threads = () => fs.readdirSync('/proc/self/task').length;

/** Rows the database file holds on its own, without its write-ahead log (a copy of the file alone). */
function rowsInFileAlone(file: string, copy: string): number {
  fs.copyFileSync(file, copy);
  fs.rmSync(`${copy}-wal`, { force: true });
  fs.rmSync(`${copy}-shm`, { force: true });
  const db = new Database(copy, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM notes').get() as { n: number }).n;
  } catch {
    return -1; // copied in the middle of a checkpoint's writes: looked at again
  } finally {
    db.close();
  }
}

describe('SQLite checkpoints run on a thread of their own', function () {
  let dir: string;
  before(function () {
    if (backend().kind !== 'embedded') this.skip();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-checkpoint-'));
  });
  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('copies committed pages into the database file long before the writer would, and stops with the pool', async () => {
    const file = path.join(dir, 'db.sqlite');
    const before = threads();
    const db = createDb({ client: 'sqlite', filename: file });
    expect(threads(), 'a thread started').to.be.greaterThan(before);
    await db.schema.createTable('notes', (t) => {
      t.increments('id');
      t.string('body', 200);
    });
    // The writer's own checkpoint is only a backstop, far above what is written here.
    const [setting] = (await db.raw('PRAGMA wal_autocheckpoint')) as Array<{ wal_autocheckpoint: number }>;
    expect(setting?.wal_autocheckpoint).to.equal(CHECKPOINT_BACKSTOP_PAGES);
    // 300 commits of one row each: about 300 pages of log, well under the backstop.
    for (let i = 0; i < 300; i++) await db('notes').insert({ body: `note ${i}` });
    expect(fs.statSync(`${file}-wal`).size, 'the commits went to the log').to.be.greaterThan(0);
    await waitFor(() => rowsInFileAlone(file, path.join(dir, 'copy.sqlite')) === 300, 5000, 'the file alone to hold the 300 rows');
    const running = threads();
    await db.destroy();
    expect(threads(), 'the thread has exited').to.be.lessThan(running);
  });

  it('cuts the log file back once a burst has been checkpointed, instead of keeping its largest size', async () => {
    const file = path.join(dir, 'burst.sqlite');
    const db = createDb({ client: 'sqlite', filename: file });
    try {
      await db.schema.createTable('blobs', (t) => {
        t.increments('id');
        t.binary('body');
      });
      // One commit of 12 MB: a log three times the limit.
      await db.transaction(async (trx) => {
        for (let i = 0; i < 12; i++) await trx('blobs').insert({ body: Buffer.alloc(1024 * 1024, i) });
      });
      expect(fs.statSync(`${file}-wal`).size).to.be.greaterThan(3 * LOG_SIZE_LIMIT_BYTES);
      // Once the thread has copied it all back, the next write starts the log over, and cuts the file.
      await waitFor(async () => {
        await db('blobs').insert({ body: Buffer.alloc(16) });
        return fs.statSync(`${file}-wal`).size <= LOG_SIZE_LIMIT_BYTES;
      }, 10_000, 'the log file to be cut back');
      // Nothing was lost on the way: the 12 MB are all there.
      const [sum] = (await db('blobs').sum({ bytes: db.raw('length(body)') })) as Array<{ bytes: number }>;
      expect(sum?.bytes).to.be.at.least(12 * 1024 * 1024);
    } finally {
      await db.destroy();
    }
  });

  it('is not started for an in-memory database', async () => {
    const before = threads();
    const db = createDb({ client: 'sqlite', filename: ':memory:' });
    await db.raw('SELECT 1');
    expect(threads()).to.equal(before);
    await db.destroy();
  });
});
