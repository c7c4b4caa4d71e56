import type { Knex } from 'knex';
import { newId } from '../common/ids.js';
import { type JsonSchema, type Row, validatorPerKey } from '../kernel/model/index.js';
import type { CompiledResource, Registry } from '../kernel/registry/index.js';
import { pickFields, termRows, toStored } from '../kernel/storage/index.js';

/** A small deterministic generator, so a seed gives the same sample data every time. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(values: readonly T[], random: () => number): T {
  return values[Math.floor(random() * values.length)] as T;
}

function sampleValue(schema: JsonSchema, i: number, random: () => number): unknown {
  if (schema.readOnly) return null;
  if (Array.isArray(schema.enum)) return pick(schema.enum.filter((v) => v !== null), random);
  const examples = Array.isArray(schema.examples) ? (schema.examples as unknown[]) : [];
  const types = ([] as unknown[]).concat(schema.type);
  if (types.includes('boolean')) return random() < 0.5;
  if (types.includes('integer') || types.includes('number')) {
    const min = typeof schema.minimum === 'number' ? schema.minimum : 0;
    const max = Math.min(typeof schema.maximum === 'number' ? schema.maximum : 1_000_000, min + 5_000_000);
    return min + Math.floor(random() * (max - min + 1));
  }
  if (schema.format === 'email') return `contact${i}@example.com`;
  if (schema.format === 'date-time') return new Date(Date.UTC(2026, Math.floor(random() * 12), 1 + Math.floor(random() * 28), 8 + Math.floor(random() * 10), 30 * Math.floor(random() * 2))).toISOString();
  if (schema.format === 'date') return `2026-${String(1 + Math.floor(random() * 12)).padStart(2, '0')}-${String(1 + Math.floor(random() * 28)).padStart(2, '0')}`;
  if (schema.pattern || examples.length === 0) return examples.length > 0 ? examples[0] : `sample ${i}`;
  const text = `${String(examples[0])} ${i}`;
  return typeof schema.maxLength === 'number' ? text.slice(0, schema.maxLength) : text;
}

/** Each field schema's validator, compiled at its first sample. */
const validatorOf = validatorPerKey((schema: JsonSchema) => schema);

/**
 * A field's sample as clients would send it: one its schema refuses (a text of a `pattern` with
 * no example, one shorter than its `minLength`) is left out, as null, when the field may be null.
 */
function sampleOf(schema: JsonSchema, i: number, random: () => number): unknown {
  const value = sampleValue(schema, i, random);
  if (value === null || validatorOf(schema)(value)) return value;
  return validatorOf(schema)(null) ? null : value;
}

/**
 * A plausible row of a resource, from nothing but its declaration: examples, enums, ranges,
 * and ids of rows already made for its references. State machines start in their initial state.
 * The row is as stored: each field's sample encoded by its kind (a datetime as epoch
 * milliseconds, a boolean as 0 or 1), as a write through the API stores it.
 */
export function sampleRow(resource: CompiledResource, workspaceId: string, i: number, refs: ReadonlyMap<string, readonly string[]>, random: () => number, at: number): Row {
  const { def } = resource;
  const row: Row = { id: newId(def.idPrefix), workspace_id: workspaceId };
  for (const [field, schema] of Object.entries(def.fields)) {
    const target = def.references?.[field];
    if (target) {
      const ids = refs.get(target) ?? [];
      row[field] = ids.length > 0 && random() < 0.8 ? pick(ids, random) : null;
    } else if (def.state?.field === field && def.state.transitions !== 'free') {
      row[field] = schema.default;
    } else {
      row[field] = sampleOf(schema, i, random);
    }
  }
  Object.assign(row, toStored(resource, pickFields(resource, row)));
  row.created_at = at;
  row.updated_at = at;
  row.version = 1;
  return row;
}

/** Resources ordered so that every reference points to one that comes before it. */
export function referenceOrder(registry: Registry): CompiledResource[] {
  const done = new Set<string>();
  const order: CompiledResource[] = [];
  const visit = (r: CompiledResource, path: string[]) => {
    if (done.has(r.def.name) || path.includes(r.def.name)) return;
    for (const target of Object.values(r.def.references ?? {})) {
      const other = registry.byName.get(target);
      if (other) visit(other, [...path, r.def.name]);
    }
    done.add(r.def.name);
    order.push(r);
  };
  for (const r of registry.resources) visit(r, []);
  return order;
}

/** Inserts `count` sample rows of every resource into a workspace, spread over the last `spanMs`, with their search terms. */
export async function insertSamples(db: Knex, registry: Registry, workspaceId: string, count: number, options: { seed?: number; now?: number; spanMs?: number } = {}): Promise<Map<string, string[]>> {
  const random = seededRandom(options.seed ?? 1);
  const now = options.now ?? Date.now();
  const span = options.spanMs ?? 90 * 24 * 3600 * 1000;
  const refs = new Map<string, string[]>();
  for (const resource of referenceOrder(registry)) {
    const rows = Array.from({ length: count }, (_, i) => sampleRow(resource, workspaceId, i + 1, refs, random, now - Math.floor(random() * span)));
    await db.batchInsert(resource.def.table, rows, 100);
    await db.batchInsert('search_terms', termRows(resource, workspaceId, rows), 100);
    refs.set(resource.def.name, rows.map((r) => String(r.id)));
  }
  return refs;
}
