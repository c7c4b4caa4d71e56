import fs from 'node:fs';
import path from 'node:path';
import { loadPlugins } from '../boot.js';
import { loadConfig } from '../common/config.js';
import { createDb } from '../db/connect.js';
import { migrateCreating } from '../db/create.js';
import { columnProblems, migrationName, migrationText, parseRenames, planTable, settleRenames, summary } from '../kernel/storage/index.js';
import { loadKeyring } from '../secrets/load.js';
import { runMain } from '../startup.js';
import { StartupError } from '../common/errors.js';

/**
 * `npm run migrate:make`: compares the plugins' declarations with the database DATABASE_URL
 * names (its pending migrations applied first) and writes one migration that creates the
 * tables missing and adds the columns and indexes missing, into MIGRATIONS_DIR (else
 * migrations/). It prints what it wrote; with nothing to do it writes nothing and says so. A
 * column of the wrong kind is named, never changed: that takes a migration of the author's own.
 * A column it cannot tell from a renamed one is not added (kernel/storage/renames.ts): `--rename
 * table.old:new` renames it instead. Exit 1 when it left anything for the author to do.
 */
runMain(async () => {
  const asked = parseRenames(process.argv.slice(2));
  if ('problem' in asked) {
    console.error(`${asked.problem}\nUsage: npm run migrate:make [-- --rename table.old_column:new_field ...]`);
    return 2;
  }
  const config = loadConfig();
  const registry = await loadPlugins(config.pluginsDir);
  const db = createDb(config.database);
  try {
    try {
      await migrateCreating(db, config.database, config.migrationsDirs, { keyring: loadKeyring(config) });
    } catch (err) {
      if (err instanceof StartupError) throw err;
      throw new StartupError(`migration failed: ${(err as Error).message}`);
    }
    const plans = await Promise.all(registry.resources.map((resource) => planTable(db, resource)));
    const relative = (file: string) => path.relative(process.cwd(), file);
    const held = settleRenames(plans, asked.renames, (plan) => relative(plan.resource.file));
    const problems = [...held, ...plans.flatMap((plan) => columnProblems(plan).map((problem) => `${relative(plan.resource.file)}: ${problem}`))];
    for (const problem of problems) console.error(problem);
    const todo = plans.filter((plan) => plan.create || plan.columns.length > 0 || plan.renames.length > 0 || plan.indexes.length > 0);
    if (todo.length === 0) {
      console.log("nothing to do: every plugin's table has its columns and indexes; no file written");
      return problems.length > 0 ? 1 : 0;
    }
    const when = new Date();
    const dir = config.migrationsDirs.at(-1)!;
    const file = path.join(dir, migrationName(todo, when));
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(file, migrationText(todo, when, relative), { flag: 'wx' });
    console.log(`wrote ${relative(file)}:\n${todo.map((plan) => `  ${summary(plan)}`).join('\n')}\nRead it, commit it, then start the server (it migrates) or run \`npm run migrate\`.`);
    return problems.length > 0 ? 1 : 0;
  } finally {
    await db.destroy();
  }
});
