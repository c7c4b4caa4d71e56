import type { JsonSchema, Row } from './define.js';
import { isRequired } from './fields.js';
import { unknownKeyOf } from '../../common/words.js';

/**
 * A version change of a resource (docs/reference.md section 19): what changed in `version`, and
 * how to convert between the shape before it and the shape from it on. A plugin's `fields`
 * always describe the latest shape; its changes say how older callers saw it.
 */
export interface ChangeDeclaration {
  /** The version (a date, `YYYY-MM-DD`) from which the newer shape holds. */
  version: string;
  /** One sentence, for GET /v1/versions and the documents. */
  description: string;
  /** The kind of change, for GET /v1/versions; by default what the rest of the change says (see changeKind). */
  kind?: ChangeKind;
  /** Fields renamed in this version: older name -> newer name. Needs no code. */
  rename?: Readonly<Record<string, string>>;
  /** Gets a body in the older shape (the fields sent: a PATCH's are a few) and returns it in the newer one. */
  request?: (body: Row) => Row;
  /** Gets an object in the newer shape (or part of one: an event's `previous`) and returns it in the older one. */
  response?: (object: Row) => Row;
  /** Fields the older shape lacks (answers to an older caller leave them out). */
  added?: readonly string[];
  /** Fields the older shape has and the newer lacks, with their schemas (field kinds: `text(10)`). */
  had?: Readonly<Record<string, JsonSchema>>;
}

export const CHANGE_KINDS = ['field_renamed', 'field_removed', 'field_added', 'type_changed', 'value_changed', 'custom'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

const CHANGE_KEYS: Record<keyof ChangeDeclaration, true> = { version: true, description: true, kind: true, rename: true, request: true, response: true, added: true, had: true };

/** `YYYY-MM-DD`, a day the calendar has. */
export function isVersionDate(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const day = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === value;
}

/** The first version: the API as built before versions existed. Every change is of a later one. */
export const FIRST_VERSION = '2026-11-21';

/** What a change's kind is when it does not say: a rename, a field added, one removed, or one whose type changed. */
export function changeKind(change: ChangeDeclaration): ChangeKind {
  if (change.kind) return change.kind;
  if (change.rename) return 'field_renamed';
  const added = (change.added ?? []).length > 0;
  const had = Object.keys(change.had ?? {}).length > 0;
  if (added && had) return 'type_changed';
  if (added) return 'field_added';
  if (had) return 'field_removed';
  return 'custom';
}

/** The fields and the names that follow them, as one version of a resource has them. */
export interface Shape {
  fields: Record<string, JsonSchema>;
  /** Each field of this shape that is a latest field under another name (or its own): shape name -> latest name. Fields only `had` are not in it. */
  latestName: Map<string, string>;
}

/** The latest shape: the plugin's fields, each its own name. */
export const latestShape = (fields: Readonly<Record<string, JsonSchema>>): Shape => ({ fields: { ...fields }, latestName: new Map(Object.keys(fields).map((f) => [f, f])) });

/**
 * The shape before `change`, given the shape from it on (`after`): its renames undone, its
 * `added` fields taken away, its `had` fields put back. Says what in the change does not fit
 * the shape it follows (a rename of a field that is not there) by throwing `refuse(message)`.
 */
export function shapeBefore(after: Shape, change: ChangeDeclaration, refuse: (message: string) => never): Shape {
  const fields: Record<string, JsonSchema> = {};
  const latestName = new Map<string, string>();
  const newerToOlder = new Map(Object.entries(change.rename ?? {}).map(([older, newer]) => [newer, older]));
  for (const newer of newerToOlder.keys()) if (!(newer in after.fields)) refuse(`renames "${newerToOlder.get(newer)}" to "${newer}", which is not a field at that version`);
  for (const field of change.added ?? []) if (!(field in after.fields)) refuse(`adds "${field}", which is not a field at that version`);
  const dropped = new Set(change.added ?? []);
  for (const [field, schema] of Object.entries(after.fields)) {
    if (dropped.has(field)) continue;
    const name = newerToOlder.get(field) ?? field;
    if (name in fields) refuse(`renames "${field}" back to "${name}", which another field already is at that version`);
    fields[name] = schema;
    const latest = after.latestName.get(field);
    if (latest !== undefined) latestName.set(name, latest);
  }
  for (const [field, schema] of Object.entries(change.had ?? {})) {
    if (field in fields) refuse(`had "${field}", which the older shape has already`);
    fields[field] = schema;
  }
  return { fields, latestName };
}

/**
 * A plugin's changes, checked where it declares them: known keys, a real date after the first
 * version, a description, either a rename or code, names of fields. What the changes say of
 * the fields is checked with them (shapeBefore), newest first, by `checkChangeShapes`.
 */
export function checkChangeDeclarations(changes: unknown, check: (condition: unknown, message: string) => asserts condition): asserts changes is readonly ChangeDeclaration[] {
  check(Array.isArray(changes), 'changes must be a list of { version, description, ... }');
  changes.forEach((change: ChangeDeclaration, i) => {
    const where = `change ${i + 1}${isVersionDate(change?.version) ? ` (${change.version})` : ''}`;
    check(typeof change === 'object' && change !== null, `${where} must be an object`);
    const unknown = unknownKeyOf(change, CHANGE_KEYS);
    check(unknown === undefined, `${where}: ${unknown}`);
    check(isVersionDate(change.version), `${where}: version ${JSON.stringify(change.version)} must be a date written YYYY-MM-DD`);
    check(change.version > FIRST_VERSION, `${where}: version ${change.version} must be after the first version, ${FIRST_VERSION}`);
    check(typeof change.description === 'string' && change.description.length > 0, `${where} needs a description`);
    check(change.kind === undefined || CHANGE_KINDS.includes(change.kind), `${where}: kind must be one of ${CHANGE_KINDS.join(', ')}`);
    const coded = change.request !== undefined || change.response !== undefined;
    check(!(change.rename && coded), `${where} renames and converts with code: make them two changes`);
    check(change.rename || coded || change.added || change.had, `${where} changes nothing: give it rename, or request() and response()`);
    check(change.request === undefined || typeof change.request === 'function', `${where}: request must be a function`);
    check(change.response === undefined || typeof change.response === 'function', `${where}: response must be a function`);
    check(change.rename === undefined || (typeof change.rename === 'object' && Object.keys(change.rename).length > 0 && Object.values(change.rename).every((v) => typeof v === 'string')), `${where}: rename must map older names to newer ones`);
    check(change.added === undefined || (Array.isArray(change.added) && change.added.every((f) => typeof f === 'string')), `${where}: added must list field names`);
    check(change.had === undefined || (typeof change.had === 'object' && Object.values(change.had).every((s) => typeof s === 'object' && s !== null)), `${where}: had must map field names to field kinds (text(10))`);
    check(Object.keys(change.had ?? {}).length === 0 || change.response !== undefined, `${where} says the older shape had ${Object.keys(change.had ?? {}).join(', ')}: it needs response() to give older callers them`);
  });
}

/** The changes, newest first (a stable order within a version: as declared). */
export const newestFirst = (changes: readonly ChangeDeclaration[]): ChangeDeclaration[] => changes.map((c, i) => ({ c, i })).sort((x, y) => (x.c.version === y.c.version ? y.i - x.i : x.c.version < y.c.version ? 1 : -1)).map(({ c }) => c);

/** Every shape the changes make: the latest fields walked back through each change (refusing one that does not fit, naming it). */
export function checkChangeShapes(fields: Readonly<Record<string, JsonSchema>>, changes: readonly ChangeDeclaration[], check: (condition: unknown, message: string) => asserts condition): void {
  let shape = latestShape(fields);
  for (const change of newestFirst(changes)) {
    shape = shapeBefore(shape, change, (message) => {
      check(false, `change of ${change.version} ${message}`);
      throw new Error(message);
    });
  }
}

/** The fields of a shape a create must carry: those its schemas mark required. */
export const requiredOf = (shape: Shape, latestRequired: readonly string[]): string[] => {
  const latest = new Set(latestRequired);
  return Object.keys(shape.fields).filter((f) => (shape.latestName.has(f) ? latest.has(shape.latestName.get(f)!) : isRequired(shape.fields[f])));
};
