import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { actionBodySchema, createBodySchema, createQueryAjv, createSchemaAjv, deprecationOf, type FieldKind, isPlugin, type JsonSchema, kindOf, listQuerySchema, type MoneyPair, moneyPairs, objectColumns, objectSchema, type PluginExport, PluginLoadError, referenceOf, type Reserved, type Resource, type Row, type Typed, updateBodySchema } from '../model/index.js';
import { expandParameter, type ListQuery, type OperatorFilter, operatorFilters, searchableFields, searchParameter } from '../query/index.js';
import { importFile } from '../../common/modules.js';
import { idPattern } from '../../common/ids.js';

export interface CompiledResource {
  readonly def: Resource;
  readonly file: string;
  readonly objectSchema: JsonSchema;
  readonly listQuerySchema: Typed<ListQuery>;
  /** The query string of GET /<path>/{id}: `expand` when the resource has references to expand, else nothing. */
  readonly getQuerySchema: JsonSchema | undefined;
  readonly createBodySchema: Typed<Row>;
  readonly updateBodySchema: Typed<Row>;
  /** Columns read for the object, in output order. */
  readonly columns: readonly string[];
  /** Each field's kind: its column, its codec, what lists can do with it. */
  readonly kinds: Readonly<Record<string, FieldKind>>;
  /** The list's operator parameters (`amount[gte]`, `stage[in]`), from the fields' kinds. */
  readonly filters: readonly OperatorFilter[];
  /** The fields `q` searches (kernel/query/search.ts), from their kinds; none, and the list takes no `q`. */
  readonly searchable: readonly string[];
  /** Its money fields, each with the currency field its amount needs (kernel/model/money.ts). */
  readonly money: readonly MoneyPair[];
  /** What its lists sort by: the declaration's `created_at`/`updated_at`, then each field whose kind sorts (a number, an amount, a date, a time). */
  readonly sorts: readonly string[];
  /** The sorts whose column may hold null: rows without a value come last, in either order. */
  readonly nullableSorts: ReadonlySet<string>;
}

export interface Registry {
  readonly resources: readonly CompiledResource[];
  readonly reserved: readonly Reserved[];
  readonly byName: ReadonlyMap<string, CompiledResource>;
  /** What plugins declare in a form of an earlier release: it still works, and boot warns once. */
  readonly deprecations: readonly Deprecation[];
}

/** A plugin's use of a form of the plugin API that still works for now (docs/reference.md section 18). */
export interface Deprecation {
  readonly file: string;
  /** What to write instead. */
  readonly message: string;
}

const RELATIVE_IMPORT_DEPRECATION = "imports the kernel by relative path (../src/kernel/...): import from 'workspace-api/plugin' instead; relative imports are deprecated (since 0.1.0) and keep working until 0.4.0 at the soonest";

/** The deprecated forms a plugin file uses: relative imports of the kernel, deprecated field helpers. */
function deprecationsOf(plugin: PluginExport, file: string): Deprecation[] {
  const found: Deprecation[] = importsKernelByPath(file) ? [{ file, message: RELATIVE_IMPORT_DEPRECATION }] : [];
  if (plugin.kind !== 'resource') return found;
  for (const [field, schema] of Object.entries(plugin.fields)) {
    const message = deprecationOf(schema);
    if (message) found.push({ file, message: `field "${field}": ${message}` });
  }
  return found;
}

/** An import of src/kernel/define or fields by relative path, as plugins did before `workspace-api/plugin`. */
const RELATIVE_KERNEL_IMPORT = /\bfrom\s*['"](?:\.\.?\/)+(?:[\w.-]+\/)*src\/kernel\/(?:define|fields)(?:\.[cm]?[jt]s)?['"]/;

/** True when the plugin file imports the kernel by relative path (read as text: a warning, not a check). */
function importsKernelByPath(file: string): boolean {
  try {
    return RELATIVE_KERNEL_IMPORT.test(fs.readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
}

/** The kernel's own scope, beside the plugins' read and write scopes. */
export const WEBHOOKS_SCOPE = 'webhooks:manage';


function pluginFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) throw new PluginLoadError(dir, 'plugins folder does not exist');
  return fs
    .readdirSync(dir)
    .filter((f) => /\.(ts|js|mjs)$/.test(f) && !f.endsWith('.d.ts'))
    .sort()
    .map((f) => path.join(dir, f));
}

/**
 * Where in the plugin file an error of its import arose (`file:line:column`: the `txt` of a
 * ReferenceError, the defineResource() or text() call a declaration check refused), read from the
 * error's stack; the file alone when the stack does not pass through it.
 */
function whereIn(file: string, err: unknown): string {
  const stack = err instanceof Error ? (err.stack ?? '') : '';
  for (const name of [pathToFileURL(file).href, file]) {
    const at = stack.indexOf(`${name}:`);
    const position = at < 0 ? null : /^:(\d+):(\d+)/.exec(stack.slice(at + name.length));
    if (position) return `${file}:${position[1]}:${position[2]}`;
  }
  return file;
}

async function importPlugin(file: string): Promise<PluginExport> {
  let mod: { default?: unknown };
  try {
    mod = (await importFile(file)) as { default?: unknown };
  } catch (err) {
    throw new PluginLoadError(whereIn(file, err), (err as Error).message);
  }
  if (!isPlugin(mod.default)) throw new PluginLoadError(file, 'the default export must come from defineResource() or reservePath()');
  return mod.default;
}

/**
 * A field declared with ref('client', ...) gets the id pattern (and an example) of the resource
 * it names, which only the whole set of plugins knows.
 */
function withReferencePatterns(plugin: Resource, prefixes: ReadonlyMap<string, string>, file: string): Resource {
  let fields: Record<string, JsonSchema> | undefined;
  for (const [field, schema] of Object.entries(plugin.fields)) {
    const target = referenceOf(schema);
    if (!target) continue;
    const prefix = prefixes.get(target);
    if (!prefix) throw new PluginLoadError(file, `reference "${field}" names unknown resource "${target}"`);
    fields ??= { ...plugin.fields };
    const { type, maxLength, description, ...rest } = schema;
    fields[field] = { type, pattern: idPattern(prefix), maxLength, description, examples: [`${prefix}8f2kq0w7m3ab`], ...rest };
  }
  return fields ? Object.freeze({ ...plugin, fields: Object.freeze(fields) }) : plugin;
}

function claim(seen: Map<string, string>, what: string, value: string, file: string): void {
  const other = seen.get(value);
  if (other) throw new PluginLoadError(file, `${what} "${value}" is already taken by ${other}`);
  seen.set(value, file);
}

/** Each declared field's kind; a field no kind fits stops boot, naming it. */
function fieldKinds(plugin: Resource, file: string): Readonly<Record<string, FieldKind>> {
  const found: Record<string, FieldKind> = {};
  for (const [field, schema] of Object.entries(plugin.fields)) {
    const fieldKind = kindOf(schema);
    if (!fieldKind) throw new PluginLoadError(file, `field "${field}" fits no field kind: declare it with text(), email(), integer(), money(), boolean(), date(), datetime(), states() or ref(), or as a plain string, integer or boolean schema`);
    found[field] = fieldKind;
  }
  return Object.freeze(found);
}

/**
 * Every declared default is a value its field takes: `states(['open'], 'opne', ...)` loaded,
 * and each create then stored a state the object's own schema refuses.
 */
function checkDefaults(ajv: Ajv2020, plugin: Resource, file: string): void {
  const fields = [
    ...Object.entries(plugin.fields).map(([field, schema]) => [`field "${field}"`, schema] as const),
    ...Object.entries(plugin.actions ?? {}).flatMap(([name, action]) => Object.entries(action.body ?? {}).map(([field, schema]) => [`action "${name}" field "${field}"`, schema] as const)),
  ];
  for (const [where, schema] of fields) {
    if (schema.default === undefined || ajv.validate(schema, schema.default)) continue;
    throw new PluginLoadError(file, `${where}: its default ${JSON.stringify(schema.default)} is not a value it takes (${ajv.errorsText(ajv.errors, { dataVar: 'the default' })})`);
  }
}

/**
 * Scans the plugins folder, checks every plugin against the others and compiles its schemas
 * once. `checkSchemas: false` skips that compilation (a fifth of a second) for a short command
 * that needs only the names (the admin command's scope catalog); the server never skips it.
 * `servedPaths` are the paths the service serves itself (api/public.ts), each with what serves
 * it: a plugin at one of them stops boot naming both.
 */
export async function loadRegistry(dir: string, { checkSchemas = true, servedPaths = new Map<string, string>() }: { checkSchemas?: boolean; servedPaths?: ReadonlyMap<string, string> } = {}): Promise<Registry> {
  const { declared, reserved, deprecations } = await readPlugins(dir, servedPaths);
  const ajvs = checkSchemas ? { schema: createSchemaAjv(), query: createQueryAjv() } : undefined;
  const prefixes = new Map(declared.map(({ plugin }) => [plugin.name, plugin.idPrefix]));
  const resources = declared.map(({ plugin, file }) => compileResource(plugin, file, prefixes, ajvs));
  const byName = new Map(resources.map((r) => [r.def.name, r]));
  checkReferences(resources, byName);
  return Object.freeze({
    resources: Object.freeze(resources),
    reserved: Object.freeze(reserved),
    byName,
    deprecations: Object.freeze(deprecations),
  });
}

/** Every plugin of the folder, imported, each name, path, table, id prefix and scope claimed by one plugin alone (or the service). */
async function readPlugins(dir: string, servedPaths: ReadonlyMap<string, string>) {
  const seen = { name: new Map<string, string>(), path: new Map<string, string>(), table: new Map<string, string>(), prefix: new Map<string, string>(), scope: new Map<string, string>() };
  for (const [served, by] of servedPaths) seen.path.set(served, by);
  seen.scope.set(WEBHOOKS_SCOPE, 'the kernel');
  const reserved: Reserved[] = [];
  const declared: Array<{ plugin: Resource; file: string }> = [];
  const deprecations: Deprecation[] = [];
  for (const file of pluginFiles(dir)) {
    const plugin = await importPlugin(file);
    deprecations.push(...deprecationsOf(plugin, file));
    claim(seen.name, 'name', plugin.name, file);
    claim(seen.path, 'path', plugin.path, file);
    if (plugin.kind === 'reserved') {
      reserved.push(plugin);
      continue;
    }
    claim(seen.table, 'table', plugin.table, file);
    claim(seen.prefix, 'idPrefix', plugin.idPrefix, file);
    claim(seen.scope, 'scope', plugin.scopes.read, file);
    claim(seen.scope, 'scope', plugin.scopes.write, file);
    declared.push({ plugin, file });
  }
  return { declared, reserved, deprecations };
}

/**
 * One plugin's resource: its schemas (compiled once by `ajvs`, when given, only to stop boot on
 * a bad one naming the plugin: routes compile their own), its fields' kinds, and what follows
 * from them (filters, search, expansions, the list's query string).
 */
function compileResource(declaredPlugin: Resource, file: string, prefixes: ReadonlyMap<string, string>, ajvs: { schema: Ajv2020; query: Ajv2020 } | undefined): CompiledResource {
  const plugin = withReferencePatterns(declaredPlugin, prefixes, file);
  const object = objectSchema(plugin);
  const createBody = createBodySchema(plugin);
  const updateBody = updateBodySchema(plugin);
  const compiled = (compile: () => unknown) => {
    try {
      compile();
    } catch (err) {
      throw new PluginLoadError(file, `invalid JSON Schema: ${(err as Error).message}`);
    }
  };
  compiled(() => {
    for (const schema of [object, createBody, updateBody, ...Object.values(plugin.actions ?? {}).map(actionBodySchema)]) ajvs?.schema.compile(schema);
  });
  if (ajvs) checkDefaults(ajvs.schema, plugin, file);
  // The fields' kinds, once their schemas compile; the list's query string follows from them.
  const kinds = fieldKinds(declaredPlugin, file);
  const filters = operatorFilters(plugin, kinds);
  const expansion = expandParameter(plugin, kinds);
  const searchable = searchableFields(plugin, kinds);
  const fieldSorts = Object.keys(kinds).filter((field) => kinds[field]?.sortable);
  const query = listQuerySchema(plugin, filters, { ...searchParameter(searchable), ...expansion }, fieldSorts);
  compiled(() => ajvs?.query.compile(query));
  return Object.freeze({
    def: plugin,
    file,
    objectSchema: object,
    listQuerySchema: query,
    getQuerySchema: Object.keys(expansion).length > 0 ? { type: 'object', additionalProperties: false, properties: expansion } : undefined,
    createBodySchema: createBody,
    updateBodySchema: updateBody,
    columns: Object.freeze(objectColumns(Object.keys(plugin.fields))),
    kinds,
    filters: Object.freeze(filters),
    searchable: Object.freeze(searchable),
    money: Object.freeze(moneyPairs(kinds)),
    sorts: Object.freeze([...plugin.list.sorts, ...fieldSorts]),
    nullableSorts: new Set(fieldSorts.filter((field) => kinds[field]?.column.nullable)),
  });
}

/** Every reference names a resource that is there, with that resource's id pattern. */
function checkReferences(resources: readonly CompiledResource[], byName: ReadonlyMap<string, CompiledResource>): void {
  for (const r of resources) {
    for (const [field, target] of Object.entries(r.def.references)) {
      const other = byName.get(target);
      if (!other) throw new PluginLoadError(r.file, `reference "${field}" names unknown resource "${target}"`);
      const pattern = r.def.fields[field]?.pattern;
      if (pattern !== idPattern(other.def.idPrefix)) {
        throw new PluginLoadError(r.file, `reference "${field}" must have the pattern of ${target} ids (${idPattern(other.def.idPrefix)})`);
      }
    }
  }
}
