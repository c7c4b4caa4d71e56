import { loadConfig } from '../config.js';
import { createDb } from '../db/connect.js';
import { migrateLatest } from '../db/migrate.js';

/** npm run migrate: brings the database at DATABASE_URL to the latest schema. */
const config = loadConfig();
const db = createDb(config.database);
try {
  const applied = await migrateLatest(db, config.migrationsDirs);
  console.log(applied.length > 0 ? `applied ${applied.join(', ')}` : 'already up to date');
} catch (err) {
  console.error(`migration failed: ${(err as Error).message}`);
  process.exitCode = 1;
} finally {
  await db.destroy();
}
