import { fits, type TablePlan } from './table-plan.js';

/**
 * What migrate:make cannot tell by itself: a field renamed, or one removed and another added.
 * Either way the table has a column no field declares and lacks a column a field needs; adding
 * the new one (as it once did) left the old one behind, and a NOT NULL one failed every create.
 * So a missing column is written only when no undeclared column of the table could hold its
 * field; otherwise migrate:make writes nothing for it and says what to do, unless the author
 * said `--rename table.old:new`, which it writes as a renameColumn.
 */

/** `--rename table.old:new`, as given. */
export interface Rename {
  table: string;
  from: string;
  to: string;
}

const RENAME = /^([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*):([a-z][a-z0-9_]*)$/;

/** The renames of the command line, or why an argument is not one. */
export function parseRenames(args: readonly string[]): { renames: Rename[] } | { problem: string } {
  const renames: Rename[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = arg === '--rename' ? args[++i] : arg.startsWith('--rename=') ? arg.slice('--rename='.length) : undefined;
    if (value === undefined) return { problem: arg === '--rename' ? '--rename needs table.old:new' : `unknown argument ${arg}` };
    const match = RENAME.exec(value);
    if (!match) return { problem: `--rename ${value}: write it as table.old_column:new_field, such as tasks.title:headline` };
    renames.push({ table: match[1]!, from: match[2]!, to: match[3]! });
  }
  return { renames };
}

/**
 * Applies the renames asked for to the plans (a column renamed is not added), then holds back
 * every missing column that an undeclared column could be the old name of. Answers what it
 * refused, in words (a plan's problems after `where` names its plugin); the plans are left with
 * what may be written.
 */
export function settleRenames(plans: readonly TablePlan[], renames: readonly Rename[], where: (plan: TablePlan) => string = (plan) => plan.resource.file): string[] {
  const problems: string[] = [];
  for (const rename of renames) {
    const plan = plans.find((p) => p.resource.def.table === rename.table);
    const problem = plan ? applyRename(plan, rename) : `--rename ${rename.table}.${rename.from}:${rename.to}: no plugin has the table "${rename.table}"`;
    if (problem) problems.push(problem);
  }
  for (const plan of plans) problems.push(...holdAmbiguous(plan).map((problem) => `${where(plan)}: ${problem}`));
  return problems;
}

function applyRename(plan: TablePlan, { table, from, to }: Rename): string | undefined {
  const asked = `--rename ${table}.${from}:${to}`;
  const old = plan.undeclared.find((c) => c.name === from);
  const wanted = plan.columns.find((c) => c.name === to);
  if (!old) return `${asked}: table "${table}" has no column "${from}" that no field declares`;
  if (!wanted) return `${asked}: table "${table}" has a column for every field; "${to}" is not one it lacks`;
  if (!fits(old.info, wanted.column)) return `${asked}: column "${from}" cannot hold field "${to}" (a ${plan.resource.kinds[to]?.name ?? 'kernel'} field): write that migration yourself`;
  plan.renames.push({ from, to });
  plan.columns = plan.columns.filter((c) => c !== wanted);
  plan.undeclared = plan.undeclared.filter((c) => c !== old);
  plan.strays = plan.strays.filter((name) => name !== from);
  return undefined;
}

/** The missing columns of an existing table that an undeclared column could hold: held back, each with what to do. */
function holdAmbiguous(plan: TablePlan): string[] {
  if (plan.create) return [];
  const { table } = plan.resource.def;
  const problems: string[] = [];
  for (const wanted of [...plan.columns]) {
    const candidates = plan.undeclared.filter((c) => fits(c.info, wanted.column)).map((c) => c.name);
    if (candidates.length === 0) continue;
    plan.columns = plan.columns.filter((c) => c !== wanted);
    // Said here, with what to do: not again as a column every create fails on.
    plan.strays = plan.strays.filter((name) => !candidates.includes(name));
    const [first] = candidates;
    problems.push(
      `table "${table}" has no column for field "${wanted.name}", and ${candidates.map((c) => `"${c}"`).join(', ')} no field declares: was "${first}" renamed "${wanted.name}", or removed and "${wanted.name}" added? migrate:make cannot tell, and wrote nothing for "${wanted.name}". ` +
        `Renamed: run \`npm run migrate:make -- --rename ${table}.${first}:${wanted.name}\`. Removed: drop it in a migration of your own (t.dropColumn('${first}')), then run migrate:make again.`,
    );
  }
  return problems;
}
