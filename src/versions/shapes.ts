import type { ErrorItem } from '../common/errors.js';
import { bodyErrors, compileOnUse, createSchemaAjv, type Row, type ChangeDeclaration, createBodySchema, type FieldKind, type JsonSchema, kindOf, latestShape, listQuerySchema, newestFirst, objectSchema, PluginLoadError, requiredOf, type Resource, type Shape, shapeBefore, updateBodySchema } from '../kernel/model/index.js';
import { expandParameter, operatorFilters, searchableFields, searchParameter } from '../kernel/query/index.js';
import type { CompiledResource } from '../kernel/registry/index.js';
import { type Conversion, conversionOf } from './convert.js';

/**
 * One resource as callers of an older version see it: its shape (fields by their older names),
 * the schemas their requests are checked with and their documents describe, and the conversion
 * between that shape and the latest.
 */
export interface OlderShape {
  /** The versions it answers: those before `until` (and at or after the next older shape's). */
  readonly until: string;
  readonly shape: Shape;
  /** Each latest field's name in this shape (those it lacks are not in it). */
  readonly olderName: ReadonlyMap<string, string>;
  readonly objectSchema: JsonSchema;
  readonly createBodySchema: JsonSchema;
  readonly updateBodySchema: JsonSchema;
  readonly listQuerySchema: JsonSchema;
  readonly getQuerySchema: JsonSchema | undefined;
  /** Fields the service sets, by this shape's names (refused in a body as read-only). */
  readonly readOnly: readonly string[];
  readonly required: readonly string[];
  readonly conversion: Conversion;
  /**
   * Checks a body converted up by a change's code against the latest schema (a create's or an
   * update's): undefined when no change's code converts it (a rename keeps what the older
   * schema checked). The problems are by the latest names.
   */
  readonly checkUp: ((body: Row, create: boolean) => ErrorItem[]) | undefined;
  /** The resource as this shape has it, for its version's documents (the OpenAPI document, the event schemas). */
  readonly resource: CompiledResource;
}

const ajv = createSchemaAjv();

/** The latest create and update schemas of a resource, compiled when an older shape first needs them. */
function latestCheck(resource: CompiledResource): (body: Row, create: boolean) => ErrorItem[] {
  const create = compileOnUse(ajv, resource.createBodySchema);
  const update = compileOnUse(ajv, resource.updateBodySchema);
  const readOnly = new Set(Object.keys(resource.def.fields).filter((f) => resource.def.fields[f]?.readOnly));
  const required = new Set(resource.def.required);
  return (body, isCreate) => {
    const validate = isCreate ? create() : update();
    return validate(body) ? [] : bodyErrors(validate.errors ?? [], readOnly, required);
  };
}

/** Names renamed through `latestName` (latest -> shape name): a list of names, those the shape lacks left out. */
const inShape = (names: readonly string[], olderName: ReadonlyMap<string, string>) => names.flatMap((n) => (olderName.has(n) ? [olderName.get(n)!] : []));

/**
 * The resource declaration of an older shape: its fields, and every name that follows a field
 * (required, references, filters, the state field and its stamps) by the shape's names; what
 * names a field the shape lacks is left out.
 */
function declarationOf(def: Resource, shape: Shape): Resource {
  const olderName = new Map([...shape.latestName].map(([older, latest]) => [latest, older]));
  const references = Object.fromEntries(Object.entries(def.references).flatMap(([f, target]) => (olderName.has(f) ? [[olderName.get(f)!, target]] : [])));
  const stateField = def.state && olderName.get(def.state.field);
  const state = def.state && stateField !== undefined ? { ...def.state, field: stateField, stamps: Object.fromEntries(Object.entries(def.state.stamps ?? {}).flatMap(([s, f]) => (olderName.has(f) ? [[s, olderName.get(f)!]] : []))) } : undefined;
  const rest: Omit<Resource, 'state'> & { state?: Resource['state'] } = { ...def };
  delete rest.state;
  return { ...rest, ...(state ? { state } : {}), fields: shape.fields, required: requiredOf(shape, def.required), references, list: { sorts: def.list.sorts, filters: inShape(def.list.filters, olderName) } };
}

/** The kinds of a shape's fields that are latest fields (a field only `had` is not filtered, sorted or searched: no conversion up is known for it). */
function convertibleKinds(resource: CompiledResource, shape: Shape): Record<string, FieldKind> {
  const found: Record<string, FieldKind> = {};
  for (const [field, latest] of shape.latestName) {
    const fieldKind = resource.kinds[latest];
    if (fieldKind) found[field] = fieldKind;
  }
  return found;
}

function olderShape(resource: CompiledResource, shape: Shape, until: string, newer: readonly ChangeDeclaration[]): OlderShape {
  for (const [field, schema] of Object.entries(shape.fields)) {
    if (!shape.latestName.has(field) && !kindOf(schema)) throw new PluginLoadError(resource.file, `a change says the older shape had "${field}", which fits no field kind: declare it with text(), integer(), date(), ...`);
  }
  const def = declarationOf(resource.def, shape);
  const kinds = convertibleKinds(resource, shape);
  const searchable = searchableFields(def, kinds);
  const expansion = expandParameter(def, kinds);
  const fieldSorts = Object.keys(kinds).filter((field) => kinds[field]?.sortable);
  const filters = operatorFilters(def, kinds);
  const schemas = {
    objectSchema: objectSchema(def),
    createBodySchema: createBodySchema(def),
    updateBodySchema: updateBodySchema(def),
    listQuerySchema: listQuerySchema(def, filters, { ...searchParameter(searchable), ...expansion }, fieldSorts),
    getQuerySchema: Object.keys(expansion).length > 0 ? { type: 'object', additionalProperties: false, properties: expansion } : undefined,
  };
  return {
    ...schemas,
    until,
    shape,
    olderName: new Map([...shape.latestName].map(([older, latest]) => [latest, older])),
    readOnly: ['id', 'created_at', 'updated_at', 'version', ...Object.keys(def.fields).filter((f) => def.fields[f]?.readOnly)],
    required: def.required,
    conversion: conversionOf(newer, shape, resource.def.fields),
    checkUp: newer.some((change) => !change.rename) ? latestCheck(resource) : undefined,
    resource: Object.freeze({ ...resource, ...schemas, def, kinds, filters, searchable, sorts: [...def.list.sorts, ...fieldSorts], columns: ['id', ...Object.keys(def.fields), 'created_at', 'updated_at', 'version'] }),
  };
}

/**
 * A resource's older shapes, newest first: one before each version in which `changes` (the
 * service's that touch it and its plugin's) changed it. None for a resource that never changed.
 */
export function olderShapes(resource: CompiledResource, changes: readonly ChangeDeclaration[]): OlderShape[] {
  const shapes: OlderShape[] = [];
  let shape = latestShape(resource.def.fields);
  const newer: ChangeDeclaration[] = [];
  const ordered = newestFirst(changes);
  for (let i = 0; i < ordered.length; i++) {
    const change = ordered[i]!;
    shape = shapeBefore(shape, change, (message) => {
      throw new PluginLoadError(resource.file, `change of ${change.version} ${message}`);
    });
    newer.unshift(change);
    // A version's changes are taken together: the shape before it is the one older callers see.
    if (ordered[i + 1]?.version !== change.version) shapes.push(olderShape(resource, shape, change.version, [...newer]));
  }
  return shapes;
}
