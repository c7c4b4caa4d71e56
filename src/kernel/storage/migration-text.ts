import { CASELESS_COLLATION, MYSQL_IN_MIGRATION } from '../../db/dialects/index.js';
import { textType, type Column } from '../../db/tables.js';
import { fieldColumns, KERNEL_TIMES, KERNEL_VERSION, VERSION_DEFAULT, type IndexSpec, type NamedColumn, type TablePlan } from './table-plan.js';

/**
 * The text of the knex migration `npm run migrate:make` writes for table plans: plain knex
 * calls, no import from src/, so the file says forever what it did even when a kind's column
 * changes in a later release. It creates a missing table (the kernel's columns, the plugin's,
 * the indexes) or adds what an existing one lacks; `down` undoes exactly that. It never drops
 * or changes a column that is there.
 */

/** A value as a TypeScript literal: names are plugin identifiers; defaults are strings, numbers or 0/1. */
const q = (value: unknown) => (typeof value === 'string' ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : String(value));

/** A column as a knex builder call, `default` written for rows already there; a caseless one's through `caseless()` (see helpers). */
function columnCall(name: string, column: Column, defaultValue: unknown, caseless = false): string {
  const call = column.type === 'string' ? `t.string(${q(name)}, ${column.length ?? 255})` : column.type === 'text' ? `t.text(${q(name)}, ${q(textType(column))})` : `t.${column.type}(${q(name)})`;
  const builder = caseless ? `caseless(${call})` : call;
  const nullability = column.nullable ? '.nullable()' : '.notNullable()';
  return `${builder}${nullability}${defaultValue !== undefined && defaultValue !== null ? `.defaultTo(${q(defaultValue)})` : ''}`;
}

/** An index as a knex call; its lowered column through `lower()` (see helpers). */
const indexCall = (index: IndexSpec) => `t.index([${index.columns.map((c) => (c === index.lowered ? `lower(${q(c)})` : q(c))).join(', ')}], ${q(index.name)})`;

const isCaseless = (plan: TablePlan, name: string) => plan.resource.kinds[name]?.caseless === true;

/**
 * The functions the migration's `up` calls for caseless fields (emails), which filters compare
 * by their lower case (db/dialect.ts caselessAmong), when it has any: PostgreSQL and SQLite index
 * `lower(column)`; MySQL (no such index on MariaDB) indexes the column, whose collation ignores case.
 */
function helpers(plans: readonly TablePlan[]): string[] {
  const columns = plans.some((plan) => plan.columns.some((c) => isCaseless(plan, c.name)));
  const indexes = plans.some((plan) => plan.indexes.some((index) => index.lowered !== undefined));
  if (!columns && !indexes) return [];
  return [
    '  // Emails compare without regard to letter case, by their lower case: PostgreSQL and SQLite',
    '  // index lower(column); MySQL indexes the column, under a collation that ignores case.',
    `  const mysql = ${MYSQL_IN_MIGRATION};`,
    ...(columns ? [`  const caseless = (column: Knex.ColumnBuilder) => (mysql ? column.collate(${q(CASELESS_COLLATION)}) : column);`] : []),
    ...(indexes ? ["  const lower = (column: string) => (mysql ? column : knex.raw('lower(??)', [column]));"] : []),
  ];
}

/** What a field's column holds for rows written before it existed: its default as stored, if it has one. */
function storedDefault(plan: TablePlan, name: string): unknown {
  if (name === KERNEL_VERSION.name) return VERSION_DEFAULT;
  const kind = plan.resource.kinds[name];
  const declared = plan.resource.def.fields[name]?.default;
  return kind && declared !== undefined ? kind.encode(declared) : undefined;
}

function createTable(plan: TablePlan): string[] {
  const { table } = plan.resource.def;
  const lines = [
    `  await knex.schema.createTable(${q(table)}, (t) => {`,
    `    t.string('id', 64).primary();`,
    `    t.string('workspace_id', 64).notNullable().references('id').inTable('workspaces').onDelete('CASCADE');`,
  ];
  for (const { name, column } of fieldColumns(plan.resource)) lines.push(`    ${columnCall(name, column, undefined, isCaseless(plan, name))};`);
  for (const { name, column } of KERNEL_TIMES) lines.push(`    ${columnCall(name, column, undefined)};`);
  lines.push(`    ${columnCall(KERNEL_VERSION.name, KERNEL_VERSION.column, VERSION_DEFAULT)};`);
  for (const index of plan.indexes) lines.push(`    ${indexCall(index)};`);
  lines.push('  });');
  return lines;
}

/** A column added to a table that may hold rows: NOT NULL only with a default to give them. */
function added(plan: TablePlan, { name, column }: NamedColumn): string {
  const defaultValue = storedDefault(plan, name);
  return columnCall(name, { ...column, nullable: column.nullable || defaultValue === undefined }, defaultValue, isCaseless(plan, name));
}

function alterTable(plan: TablePlan): { up: string[]; down: string[] } {
  const { table } = plan.resource.def;
  const up = [`  await knex.schema.alterTable(${q(table)}, (t) => {`];
  for (const { from, to } of plan.renames) up.push(`    t.renameColumn(${q(from)}, ${q(to)});`);
  for (const c of plan.columns) up.push(`    ${added(plan, c)};`);
  for (const index of plan.indexes) up.push(`    ${indexCall(index)};`);
  up.push('  });');
  const down = [`  await knex.schema.alterTable(${q(table)}, (t) => {`];
  for (const index of plan.indexes) down.push(`    t.dropIndex([${index.columns.map(q).join(', ')}], ${q(index.name)});`);
  for (const { name } of plan.columns) down.push(`    t.dropColumn(${q(name)});`);
  for (const { from, to } of plan.renames) down.push(`    t.renameColumn(${q(to)}, ${q(from)});`);
  down.push('  });');
  return { up, down };
}

/** One line per plan, for the file's header and the command's output. */
export function summary(plan: TablePlan): string {
  const { table } = plan.resource.def;
  if (plan.create) return `create table ${table} (${plan.columns.length} columns, ${plan.indexes.length} indexes)`;
  const parts = [...plan.renames.map((r) => `column ${r.from} renamed ${r.to}`), ...plan.columns.map((c) => `column ${c.name}`), ...plan.indexes.map((i) => `index ${i.name}`)];
  return `add to ${table}: ${parts.join(', ')}`;
}

/** The migration for the plans that have something to do; `relative` names each plugin's file as the header shows it. */
export function migrationText(plans: readonly TablePlan[], when: Date, relative: (file: string) => string): string {
  const up: string[] = [];
  const down: string[] = [];
  for (const plan of plans) {
    if (plan.create) {
      up.push(...createTable(plan));
      down.unshift(`  await knex.schema.dropTable(${q(plan.resource.def.table)});`);
    } else {
      const altered = alterTable(plan);
      up.push(...altered.up);
      down.unshift(...altered.down);
    }
  }
  return [
    '/**',
    ` * Written by \`npm run migrate:make\` at ${when.toISOString()} from the plugins' declarations:`,
    ...plans.map((plan) => ` *   ${summary(plan)} (${relative(plan.resource.file)})`),
    ' * Read it, then commit it beside the plugins. `npm run migrate -- rollback` undoes it.',
    ' */',
    "import type { Knex } from 'knex';",
    '',
    'export async function up(knex: Knex): Promise<void> {',
    ...helpers(plans),
    ...up,
    '}',
    '',
    'export async function down(knex: Knex): Promise<void> {',
    ...down,
    '}',
    '',
  ].join('\n');
}

/** The file's name: a UTC timestamp (the order migrations run in) and the tables it touches. */
export function migrationName(plans: readonly TablePlan[], when: Date): string {
  const stamp = when.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `${stamp}_${plans.map((p) => p.resource.def.table).join('_').slice(0, 80)}.ts`;
}
