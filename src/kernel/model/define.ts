import { isRequired, referenceOf } from './fields.js';
import { kindOf } from './kinds.js';
import type { Handle, Reply, RouteInput } from '../../http/route.js';
import { unknownKeyOf } from '../../common/words.js';
import { checkChangeDeclarations, checkChangeShapes, type ChangeDeclaration } from './changes.js';

export type JsonSchema = Record<string, unknown>;

declare const instances: unique symbol;

/**
 * A schema built at start-up (a resource's list query, from its plugin's fields) with the type
 * of what it admits written on it, where the compiler cannot read the schema itself (a route
 * reads it as its input's type: http/route.ts InputOf).
 */
export type Typed<T> = JsonSchema & { readonly [instances]: T };

/** Marks `schema` as admitting `T`s (see Typed): nothing changes at run time. */
export const typed = <T>(schema: JsonSchema): Typed<T> => schema as Typed<T>;
export type Row = Record<string, unknown>;
export type SortField = 'created_at' | 'updated_at';

declare const holds: unique symbol;

/**
 * A field's schema with the type of the value it holds written on it: what the field helpers
 * (text(), money(), states(), ...) answer, so that a plugin's hooks and actions read and write
 * its fields by their types and a misspelt field name is a compile error. A plain JSON Schema
 * holds `unknown`.
 */
export type Field<T = unknown> = JsonSchema & { readonly [holds]?: T };

/** The value a field holds: what its helper wrote on it, or unknown for a plain JSON Schema. */
export type ValueOf<S> = S extends { readonly [holds]?: infer T } ? T : unknown;

/**
 * The object a resource's `fields` make, as clients read it (and a `beforeWrite` hook gets it);
 * a Row where the fields are not known by name (the kernel's own view).
 */
export type ObjectOf<F> = string extends keyof F ? Row : { -readonly [K in keyof F]: ValueOf<F[K]> } & { id: string; created_at: string; updated_at: string; version: number };

/** What a write may set of a resource's `fields` (a body, an action's changes): any of them; a Row where they are not known by name. */
export type ChangesOf<F> = string extends keyof F ? Row : { -readonly [K in keyof F]?: ValueOf<F[K]> };

/** The fields of a declaration that says nothing of their types (the kernel's own view). */
type AnyFields = Record<string, JsonSchema>;

/** What a write changed: `before` is null on create, `after` is null on delete. */
export interface Change {
  before: Row | null;
  after: Row | null;
}

export interface EventDeclaration {
  description: string;
  /** Emits the event for a change when this returns true. */
  when: (change: Change) => boolean;
}

/**
 * A plugin's own handler for one of its routes. `next` is the generated handler: call it (with
 * the input as it is, or changed) to extend the default, or answer alone to replace it.
 */
export type Handler = (input: RouteInput, next: Handle) => Reply | Promise<Reply>;

/** What a hook knows of the write: the workspace and the moment it is stamped with. */
export interface HookContext {
  workspaceId: string;
  /** The write's moment (its `updated_at`). */
  now: Date;
}

/**
 * An action: `POST /v1/<path>/{id}/<name>`. `handle` runs in a transaction with the object
 * locked; `update(changes)` applies changes exactly as a PATCH would (validation, hooks, state
 * machine, events) and returns the object after them. `handle` may instead return the changes.
 */
export interface ActionDeclaration<F = AnyFields, B extends AnyFields = AnyFields> {
  summary: string;
  description?: string;
  /** The scope it needs: `write:<resource>` (the default) or `read:<resource>`. */
  scope?: 'write' | 'read';
  /** JSON Schema of the body's properties; without it, the action takes no body fields. */
  body?: B;
  /** Body properties the call must carry, beyond those whose kind is marked required (`text(200, { required: true })`). */
  required?: readonly string[];
  handle: (args: { object: ObjectOf<F>; body: ChangesOf<B>; update: (changes: ChangesOf<F>) => Promise<ObjectOf<F>>; ctx: HookContext }) => ChangesOf<F> | void | Promise<ChangesOf<F> | void>;
}

/** A problem a `validate` hook finds: a 422 `validation_failed` names each by its JSON Pointer. */
export interface Problem {
  pointer: string;
  detail: string;
}

/** Returns the problems with a write (none: an empty list or nothing). `before` is undefined on create. */
export type ValidateHook<F = AnyFields> = (args: { input: ChangesOf<F>; before: ObjectOf<F> | undefined; ctx: HookContext }) => Problem[] | void | Promise<Problem[] | void>;

/** Gets the whole object about to be stored (as clients read it), may set its fields, and returns it. */
export type BeforeWriteHook<F = AnyFields> = (args: { row: ObjectOf<F>; before: ObjectOf<F> | undefined; ctx: HookContext }) => ChangesOf<F> | Promise<ChangesOf<F>>;

/** A plugin's declaration; `F`, its fields, types its hooks' and actions' rows (see Field). */
export interface ResourceDeclaration<F extends AnyFields = AnyFields, A extends Record<string, unknown> = Record<string, AnyFields>> {
  /** Singular, lower case: `deal`. Events are named `<name>.<event>`. */
  name: string;
  /** Under /v1: `/deals`. */
  path: string;
  table: string;
  /** Every id starts with it: `deal_`. */
  idPrefix: string;
  description: string;
  /** Default: `read:<path>` and `write:<path>` (`/price-lists` -> `read:price_lists`). */
  scopes?: { read: string; write: string };
  /**
   * JSON Schema (2020-12) of each field, as clients see it. `readOnly` fields are set by the
   * service; `text(..., { required: true })` or `required(schema)` makes a field required on
   * create; `ref('client', ...)` makes it a reference.
   */
  fields: F;
  /** More fields a create must carry, beyond those marked required in `fields`. */
  required?: readonly string[];
  /** Fields holding another resource's id, by that resource's name, beyond those declared with ref(). */
  references?: Record<string, string>;
  /** Default: both sorts, and a filter on the state field and on each reference. */
  list?: { sorts?: readonly SortField[]; filters?: readonly string[] };
  /**
   * The state field, its machine, and the moments that follow it: `stamps: { sent: 'sent_at' }`
   * sets `sent_at` (a read-only date-time field) when the state reaches `sent`. A new object
   * starts in the field's `default` state.
   */
  state?: { field: string; transitions: 'free' | Record<string, readonly string[]>; stamps?: Record<string, string> };
  /** Events beyond the `created`, `updated` and `deleted` every resource emits. */
  events?: Record<string, EventDeclaration>;
  /** A function of the plugin's own for a route; it gets the generated handler as `next`. */
  handlers?: { list?: Handler; get?: Handler; create?: Handler; update?: Handler; delete?: Handler };
  /** Operations beyond the five: `POST /v1/<path>/{id}/<name>`. */
  actions?: { [K in keyof A]: ActionDeclaration<F, A[K] extends AnyFields ? A[K] : AnyFields> };
  /** Checks a create or update in the write's transaction: its problems answer 422. */
  validate?: ValidateHook<F>;
  /** Sets fields of the object about to be stored, in the write's transaction (after validate). */
  beforeWrite?: BeforeWriteHook<F>;
  /**
   * How the resource's shape changed from one API version to the next (docs/reference.md
   * section 19): `fields` describe the latest shape, and each change how older callers saw it.
   */
  changes?: readonly ChangeDeclaration[];
}

export interface ReservedDeclaration {
  name: string;
  path: string;
  description: string;
}

/** A declaration with its defaults filled in: what the kernel works from. */
export type Resource = Readonly<
  Omit<ResourceDeclaration, 'scopes' | 'required' | 'references' | 'list'> & {
    scopes: { read: string; write: string };
    required: readonly string[];
    references: Record<string, string>;
    list: { sorts: readonly SortField[]; filters: readonly string[] };
  }
> & { readonly kind: 'resource' };
export type Reserved = Readonly<ReservedDeclaration> & { readonly kind: 'reserved' };
export type PluginExport = Resource | Reserved;

export class PluginError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PluginError';
  }
}

/**
 * Marks what defineResource()/reservePath() returned. A registered symbol, not a WeakSet: a
 * plugin may reach this module through another loader (ESM vs CJS) and get a second copy of it.
 */
const BRAND = Symbol.for('workspace-api.plugin');

function brand<T extends object>(value: T): T {
  Object.defineProperty(value, BRAND, { value: true, enumerable: false });
  return value;
}

export function isPlugin(value: unknown): value is PluginExport {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new PluginError(message);
}

/**
 * A field's bounds leave it a value: a minimum at most its maximum, a minLength at most its
 * maxLength, a maxLength of 1 or more (integer({ min: 10, max: 1 }) and text(0) loaded, and
 * no write could ever set them). `where` names the field for the message.
 */
function checkBounds(where: string, schema: JsonSchema): void {
  const { minimum, maximum, minLength, maxLength } = schema as Record<string, unknown>;
  if (typeof minimum === 'number' && typeof maximum === 'number') check(minimum <= maximum, `${where}: its minimum ${minimum} is above its maximum ${maximum}, so no value fits`);
  if (typeof minLength === 'number' && typeof maxLength === 'number') check(minLength <= maxLength, `${where}: its minLength ${minLength} is above its maxLength ${maxLength}, so no text fits`);
  if (typeof maxLength === 'number') check(maxLength >= 1, `${where}: its maxLength ${maxLength} holds no text; give it 1 or more`);
}

const NAME = /^[a-z][a-z0-9_]*$/;
const SORTS: readonly SortField[] = ['created_at', 'updated_at'];

/** A sort by the kernel's own times (each has its keyset index on every table), not by a field. */
export const isKernelSort = (sort: string): sort is SortField => (SORTS as readonly string[]).includes(sort);

/**
 * What the kernel keeps on every object, said once: `id` first, the plugin's fields, then these
 * (docs/reference.md section 16 for `version`). Every table also has `workspace_id` after the id.
 */
export const KERNEL_TAIL = ['created_at', 'updated_at', 'version'] as const;
/** An object's columns in the order answers give them: the id, the plugin's `fields`, the kernel's tail. */
export const objectColumns = (fields: readonly string[]): string[] => ['id', ...fields, ...KERNEL_TAIL];
/** An object's properties in the order answers give them: its columns, then `livemode` (its workspace's mode, not a column: common/modes.ts). */
export const objectKeys = (fields: readonly string[]): string[] => [...objectColumns(fields), 'livemode'];
/** Names no field may take: the kernel's own. */
const KERNEL_FIELDS: readonly string[] = [...objectKeys([]), 'workspace_id'];
const HANDLERS = ['list', 'get', 'create', 'update', 'delete'];

function enumOf(schema: JsonSchema | undefined): unknown[] | undefined {
  return Array.isArray(schema?.enum) ? (schema.enum as unknown[]) : undefined;
}

/** `/price-lists` -> `price_lists`: the resource part of its default scopes. */
const scopeName = (path: string) => path.slice(1).replace(/-/g, '_');

/** Fills in what a declaration leaves to its defaults, each from the one place that says it. */
function normalize(d: ResourceDeclaration): Omit<Resource, 'kind'> {
  const fields = d.fields ?? {};
  const references: Record<string, string> = { ...(d.references ?? {}) };
  for (const [field, schema] of Object.entries(fields)) {
    const target = referenceOf(schema);
    if (target) references[field] = target;
  }
  const required = [...new Set([...Object.keys(fields).filter((f) => isRequired(fields[f])), ...(d.required ?? [])])];
  const filters = d.list?.filters ?? [...(d.state ? [d.state.field] : []), ...Object.keys(references)];
  return {
    ...d,
    scopes: d.scopes ?? { read: `read:${scopeName(d.path ?? '/')}`, write: `write:${scopeName(d.path ?? '/')}` },
    required,
    references,
    list: { sorts: d.list?.sorts ?? ['created_at', 'updated_at'], filters },
  };
}

/** The keys each part of a declaration takes, each listed once: the compiler holds them to the types. */
const DECLARATION_KEYS: Record<keyof ResourceDeclaration, true> = { name: true, path: true, table: true, idPrefix: true, description: true, scopes: true, fields: true, required: true, references: true, list: true, state: true, events: true, handlers: true, actions: true, validate: true, beforeWrite: true, changes: true };
const PART_KEYS = {
  scopes: { read: true, write: true } satisfies Record<keyof NonNullable<ResourceDeclaration['scopes']>, true>,
  list: { sorts: true, filters: true } satisfies Record<keyof NonNullable<ResourceDeclaration['list']>, true>,
  state: { field: true, transitions: true, stamps: true } satisfies Record<keyof NonNullable<ResourceDeclaration['state']>, true>,
};
const EVENT_KEYS: Record<keyof EventDeclaration, true> = { description: true, when: true };
const ACTION_KEYS: Record<keyof ActionDeclaration, true> = { summary: true, description: true, scope: true, body: true, required: true, handle: true };

/** Each key of `value` is one of `known`'s, or the declaration stops boot naming it and the nearest known one. */
function checkKeys(where: string, value: unknown, known: Record<string, true>): void {
  const problem = unknownKeyOf(value, known);
  check(problem === undefined, `${where}${problem}`);
}

/**
 * A key the kernel does not know stops boot (`validat` was accepted, and the hook never ran):
 * the declaration's own, its parts', each event's and each action's.
 */
function checkDeclarationKeys(d: ResourceDeclaration): void {
  checkKeys('', d, DECLARATION_KEYS);
  for (const [part, known] of Object.entries(PART_KEYS)) checkKeys(`${part}: `, d[part as keyof typeof PART_KEYS], known);
  for (const [event, declared] of Object.entries(d.events ?? {})) checkKeys(`event "${event}": `, declared, EVENT_KEYS);
  for (const [action, declared] of Object.entries(d.actions ?? {})) checkKeys(`action "${action}": `, declared, ACTION_KEYS);
}

/** Checks a resource declaration's shape, fills in its defaults and returns it frozen. Schemas are compiled by the registry. */
export function defineResource<const F extends AnyFields, const A extends Record<string, unknown> = Record<string, AnyFields>>(typedDeclaration: ResourceDeclaration<F, A>): Resource {
  // The kernel calls the hooks with rows it checked against these very fields: it holds them as any declaration's.
  const declaration = typedDeclaration as unknown as ResourceDeclaration;
  checkDeclarationKeys(declaration);
  const d = normalize(declaration);
  checkNames(d);
  checkFields(d);
  checkList(d);
  checkState(d);
  checkEventsAndActions(d);
  if (d.changes !== undefined) {
    checkChangeDeclarations(d.changes, check);
    checkChangeShapes(d.fields, d.changes, check);
  }
  return deepFreeze(brand({ ...d, kind: 'resource' as const }));
}

type Normalized = ReturnType<typeof normalize>;

/** Its name, path, table, id prefix, description and scopes have their forms. */
function checkNames(d: Normalized): void {
  check(NAME.test(d.name), `name "${d.name}" must match ${NAME}`);
  check(/^\/[a-z][a-z0-9-]*$/.test(d.path), `path "${d.path}" must look like /things`);
  check(NAME.test(d.table), `table "${d.table}" must match ${NAME}`);
  check(/^[a-z][a-z0-9]*_$/.test(d.idPrefix), `idPrefix "${d.idPrefix}" must be lower case letters and digits ending in _`);
  check(typeof d.description === 'string' && d.description.length > 0, 'description is required');
  check(/^read:[a-z][a-z0-9_]*$/.test(d.scopes.read), `scopes.read "${d.scopes.read}" must look like read:<resource>`);
  check(/^write:[a-z][a-z0-9_]*$/.test(d.scopes.write), `scopes.write "${d.scopes.write}" must look like write:<resource>`);
  check(d.fields && Object.keys(d.fields).length > 0, 'fields must declare at least one field');
}

/** Its fields: names of their own, bounds that hold a value; what is required or a reference is a field. */
function checkFields(d: Normalized): void {
  for (const field of Object.keys(d.fields)) {
    check(NAME.test(field), `field "${field}" must match ${NAME}`);
    check(!KERNEL_FIELDS.includes(field), `field "${field}" is kept by the kernel`);
    check(!(d.required.includes(field) && d.fields[field]?.readOnly), `field "${field}" cannot be both required and readOnly`);
    checkBounds(`field "${field}"`, d.fields[field] ?? {});
  }
  for (const field of d.required) check(field in d.fields, `required field "${field}" is not declared in fields`);
  for (const [field, target] of Object.entries(d.references)) {
    check(field in d.fields, `reference "${field}" is not declared in fields`);
    check(NAME.test(target), `reference "${field}" names an invalid resource "${target}"`);
  }
}

/** Its sorts and filters: ones the kernel can keep with an index. */
function checkList(d: Normalized): void {
  for (const sort of d.list.sorts) check(SORTS.includes(sort), `sort "${sort}" must be one of ${SORTS.join(', ')}`);
  check(d.list.sorts.includes('created_at'), 'sorts must include created_at (the default sort)');
  for (const filter of d.list.filters) {
    check(filter in d.fields, `filter "${filter}" is not declared in fields`);
    // Filters compare whole values, with an index (migrate:make): a text up to 255 characters, an email, a state, a reference, a boolean.
    const filterKind = kindOf(d.fields[filter] ?? {});
    const comparable = filterKind?.name === 'boolean' || (filterKind?.operators.includes('in') === true && filterKind.column.type !== 'text');
    check(filter === d.state?.field || filter in d.references || comparable, `filter "${filter}" must be the state field, a reference, an email, a boolean or a text of at most 255 characters`);
  }
}

/** Its state machine: an enum field with a default, moves and stamps between its states. */
function checkState(d: Normalized): void {
  if (d.state) {
    const values = enumOf(d.fields[d.state.field]);
    check(values, `state field "${d.state.field}" must be declared with an enum`);
    check(values.includes(d.fields[d.state.field]?.default), `state field "${d.state.field}" must have a default: the state a new ${d.name} starts in`);
    if (d.state.transitions !== 'free') {
      for (const [from, targets] of Object.entries(d.state.transitions)) {
        check(values.includes(from), `transition from unknown state "${from}"`);
        for (const to of targets) check(values.includes(to), `transition ${from} -> unknown state "${to}"`);
      }
    }
    for (const [state, field] of Object.entries(d.state.stamps ?? {})) {
      check(values.includes(state), `stamp for unknown state "${state}"`);
      const schema = d.fields[field];
      check(schema?.readOnly === true && schema.format === 'date-time', `stamp field "${field}" must be a read-only date-time field (see moment())`);
    }
  }
}

/** Its events, actions, hooks and handlers: named as routes and events are, functions where they run. */
function checkEventsAndActions(d: Normalized): void {
  for (const [event, declared] of Object.entries(d.events ?? {})) {
    check(NAME.test(event), `event "${event}" must match ${NAME}`);
    check(!['created', 'updated', 'deleted'].includes(event), `event "${event}" is emitted by every resource already`);
    check(typeof declared.when === 'function', `event "${event}" needs a when() function`);
    check(typeof declared.description === 'string' && declared.description.length > 0, `event "${event}" needs a description`);
  }
  for (const [name, action] of Object.entries(d.actions ?? {})) {
    check(/^[a-z][a-z0-9-]*$/.test(name), `action "${name}" must be lower case letters, digits and dashes`);
    check(typeof action.handle === 'function', `action "${name}" needs a handle() function`);
    check(typeof action.summary === 'string' && action.summary.length > 0, `action "${name}" needs a summary`);
    check(action.scope === undefined || action.scope === 'write' || action.scope === 'read', `action "${name}" scope must be 'write' or 'read'`);
    for (const field of action.required ?? []) check(field in (action.body ?? {}), `action "${name}" requires "${field}", which its body does not declare`);
    for (const [field, schema] of Object.entries(action.body ?? {})) checkBounds(`action "${name}" field "${field}"`, schema);
  }
  for (const hook of ['validate', 'beforeWrite'] as const) check(d[hook] === undefined || typeof d[hook] === 'function', `${hook} must be a function`);
  for (const [name, handler] of Object.entries(d.handlers ?? {})) {
    check(HANDLERS.includes(name), `handler "${name}" is not one of ${HANDLERS.join(', ')}`);
    check(typeof handler === 'function', `handler "${name}" must be a function`);
  }
}

/** A path that is part of the contract but not built yet: every method on it answers 501. */
export function reservePath(declaration: ReservedDeclaration): Reserved {
  check(NAME.test(declaration.name), `name "${declaration.name}" must match ${NAME}`);
  check(/^\/[a-z][a-z0-9-]*$/.test(declaration.path), `path "${declaration.path}" must look like /things`);
  return deepFreeze(brand({ ...declaration, kind: 'reserved' as const }));
}

/** The field changed in an update (not on create or delete). */
export function changed(field: string): (change: Change) => boolean {
  return ({ before, after }) => before !== null && after !== null && before[field] !== after[field];
}

/** The field holds a value after the write that it did not hold before (create included). */
export function isSet(field: string): (change: Change) => boolean {
  return ({ before, after }) => after !== null && after[field] != null && (before === null || before[field] !== after[field]);
}

/** The field reached this value with the write. */
export function reached(field: string, value: unknown): (change: Change) => boolean {
  return ({ before, after }) => after !== null && after[field] === value && (before === null || before[field] !== value);
}

/** A plugin that cannot load, or whose table does not fit it: boot stops naming its file. */
export class PluginLoadError extends Error {
  constructor(file: string, message: string) {
    super(`plugin ${file}: ${message}`);
    this.name = 'PluginLoadError';
  }
}
