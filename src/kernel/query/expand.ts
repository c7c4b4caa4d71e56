import { ApiError } from '../../common/errors.js';
import type { FieldKind, JsonSchema, Resource, Row } from '../model/index.js';
import type { ResourceStore } from '../storage/index.js';

/**
 * `expand=client` (docs/reference.md section 14): the object a `ref` field names, beside its id
 * (`client_id` and `client`), null when the id is null or names nothing any more. A reference
 * is expandable when its field is named `<name>_id`; the key needs the read scope of the
 * resource it names. A page expands with one query per expanded field, never one per row.
 */

/** A resource's expandable references: expand name (`client`) -> field (`client_id`). */
export function expandable(def: Resource, kinds: Readonly<Record<string, FieldKind>>): Map<string, string> {
  const names = new Map<string, string>();
  for (const field of Object.keys(def.references)) {
    if (field.endsWith('_id') && kinds[field]?.expandable) names.set(field.slice(0, -'_id'.length), field);
  }
  return names;
}

/** The query parameter `expand`, for a resource that has something to expand. */
export function expandParameter(def: Resource, kinds: Readonly<Record<string, FieldKind>>): Record<string, JsonSchema> {
  const names = [...expandable(def, kinds).keys()];
  if (names.length === 0) return {};
  return { expand: { type: 'string', minLength: 1, description: `Comma-separated: ${names.join(', ')}. Adds the object each names beside its id (null when there is none); needs the read scope of its resource.`, examples: [names.join(',')] } };
}

interface Expansion {
  name: string;
  field: string;
  store: ResourceStore;
}

/**
 * What `expand` asks for, checked: 400 for a name this resource cannot expand, 403 naming the
 * read scope the key lacks.
 */
export function expansionsOf(store: ResourceStore, raw: unknown, scopes: ReadonlySet<string>): Expansion[] {
  if (raw === undefined) return [];
  const names = expandable(store.resource.def, store.resource.kinds);
  const offered = [...names.keys()].join(', ') || 'nothing';
  const wanted = [...new Set(String(raw).split(','))];
  const expansions: Expansion[] = [];
  for (const name of wanted) {
    const field = names.get(name);
    const target = field === undefined ? undefined : store.references.get(field);
    if (field === undefined || !target) {
      throw new ApiError('invalid_parameter', `Invalid query parameter: expand.`, { errors: [{ parameter: 'expand', message: `cannot expand ${JSON.stringify(name.slice(0, 100))}; ${store.resource.def.name} expands ${offered}` }] });
    }
    const scope = target.resource.def.scopes.read;
    if (!scopes.has(scope)) throw new ApiError('insufficient_scope', `expand=${name} needs the ${scope} scope, which this key does not have.`);
    expansions.push({ name, field, store: target });
  }
  return expansions;
}

/** The object with `name` set to `value` right after `field` (`client_id`, then `client`). */
function beside(object: Row, field: string, name: string, value: unknown): Row {
  const out: Row = {};
  for (const [key, v] of Object.entries(object)) {
    if (key === name) continue;
    out[key] = v;
    if (key === field) out[name] = value;
  }
  return out;
}

/** `objects` with each expansion added: one query per expansion for all of them. */
export async function expand(expansions: readonly Expansion[], workspaceId: string, objects: Row[]): Promise<Row[]> {
  let expanded = objects;
  for (const { name, field, store } of expansions) {
    const ids = [...new Set(expanded.map((o) => o[field]).filter((id): id is string => typeof id === 'string'))];
    const found = new Map((await store.findMany(workspaceId, ids)).map((o) => [String(o.id), o]));
    expanded = expanded.map((object) => {
      const id = object[field];
      return beside(object, field, name, typeof id === 'string' ? (found.get(id) ?? null) : null);
    });
  }
  return expanded;
}
