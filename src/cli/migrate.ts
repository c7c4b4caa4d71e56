import { loadConfig } from '../config.js';
import { createDb } from '../db/connect.js';
import { migrateCreating } from '../db/create.js';
import { loadKeyring } from '../secrets/load.js';
import { refuseUnopenable } from '../secrets/stored.js';
import { runMain, StartupError } from '../startup.js';

/** npm run migrate: brings the database at DATABASE_URL to the latest schema. */
runMain(async () => {
  const config = loadConfig();
  const db = createDb(config.database);
  try {
    const keyring = loadKeyring(config);
    const { applied, created } = await migrateCreating(db, config.database, config.migrationsDirs, { keyring });
    await refuseUnopenable(db, keyring, config);
    if (created) console.log(`created the database ${created}`);
    console.log(applied.length > 0 ? `applied ${applied.join(', ')}` : 'already up to date');
    return 0;
  } catch (err) {
    if (err instanceof StartupError) throw err;
    throw new StartupError(`migration failed: ${(err as Error).message}`);
  } finally {
    await db.destroy();
  }
});
