import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createDb } from '../../src/db/connect.js';
import { writeTransaction } from '../../src/db/tx.js';
import { backend } from '../helpers/backend.js';

describe('a SQLite connection', function () {
  let dir: string;
  before(function () {
    if (backend().kind !== 'embedded') this.skip();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-connection-'));
  });
  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps its temporary files in memory, so that the statement journal of a multi-row INSERT is no file to write', async () => {
    const db = createDb({ client: 'sqlite', filename: path.join(dir, 'db.sqlite') });
    try {
      await db.schema.createTable('items', (t) => {
        t.string('id', 64).primary();
        t.string('body', 200);
      });
      // A transaction of the driver's (db/tx.ts), as the API's writes run, on the pool's connection.
      const settings = await writeTransaction(db, async (tx) => {
        await tx.run(`INSERT INTO items (id, body) VALUES ${Array.from({ length: 100 }, () => '(?, ?)').join(', ')}`, Array.from({ length: 100 }, (_, i) => [`item_${i}`, 'x'.repeat(150)]).flat());
        return tx.all('PRAGMA temp_store', []);
      });
      // 2 is MEMORY (0, the default, leaves it to the build: a file past 64 KiB).
      expect(settings).to.deep.equal([{ temp_store: 2 }]);
      const [row] = (await db('items').count({ n: '*' })) as Array<{ n: number }>;
      expect(row?.n).to.equal(100);
    } finally {
      await db.destroy();
    }
  });
});
