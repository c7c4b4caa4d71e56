import { loadConfig } from '../common/config.js';
import { createDb } from '../db/connect.js';
import { migrateCreating } from '../db/create.js';
import { rollbackLast } from '../db/migrate.js';
import { loadKeyring } from '../secrets/load.js';
import { refuseUnopenable } from '../secrets/stored.js';
import { runMain } from '../startup.js';
import { StartupError } from '../common/errors.js';

const USAGE = `Usage:
  npm run migrate                 apply every pending migration (creating a MySQL database that does not exist yet)
  npm run migrate -- rollback     undo the last batch applied (each migration's down), newest first`;

/** npm run migrate: brings the database at DATABASE_URL to the latest schema, or undoes the last batch. */
runMain(async () => {
  const args = process.argv.slice(2);
  if (args.length > 1 || (args.length === 1 && args[0] !== 'rollback')) {
    console.error(`Unknown arguments: ${args.join(' ')}\n${USAGE}`);
    return 2;
  }
  const config = loadConfig();
  const db = createDb(config.database);
  try {
    const keyring = loadKeyring(config);
    if (args[0] === 'rollback') {
      const undone = await rollbackLast(db, config.migrationsDirs, { keyring });
      console.log(undone.length > 0 ? `rolled back ${undone.join(', ')}` : 'nothing to roll back');
      return 0;
    }
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
