import { iso } from '../../db/iso.js';
import { isLiveWorkspace } from '../../common/modes.js';
import type { Row } from '../model/index.js';
import type { CompiledResource } from '../registry/index.js';

type Decode = (stored: unknown) => unknown;
type ToObject = (row: Row, livemode: boolean) => Row;
const compiled = new WeakMap<CompiledResource, ToObject>();

/**
 * A resource's row-to-object function, written once per resource: one object literal with
 * its columns in order, each decoded by its field's kind (times, booleans, wide integers; a
 * plain kind's value is read as it is), instead of loops over the fields for every row. Column
 * names are the plugin's identifiers, checked at load; they are written as JSON strings all
 * the same.
 */
function compile(resource: CompiledResource): ToObject {
  const decoders: Decode[] = [];
  const members = resource.columns.map((column) => {
    const key = JSON.stringify(column);
    const fieldKind = resource.kinds[column];
    let value = `row[${key}] ?? null`;
    if (column === 'created_at' || column === 'updated_at') value = `iso(row[${key}])`;
    else if (fieldKind && !fieldKind.plain) value = `decoders[${decoders.push(fieldKind.decode) - 1}](row[${key}])`;
    return `${key}: ${value}`;
  });
  const literal = new Function('row', 'iso', 'decoders', 'livemode', `return { ${members.join(', ')}, livemode };`) as (row: Row, iso: Decode, decoders: readonly Decode[], livemode: boolean) => Row;
  return (row, livemode) => literal(row, iso, decoders, livemode);
}

/**
 * The stored row of an array of `columns`' values (a page read as arrays, db/reads.ts): one
 * object literal, compiled once per column list.
 */
export function rowOfArray(columns: readonly string[]): (values: unknown[]) => Row {
  const members = columns.map((column, i) => `${JSON.stringify(column)}: values[${i}]`);
  return new Function('values', `return { ${members.join(', ')} };`) as (values: unknown[]) => Row;
}

/**
 * A stored row as clients see it: each field decoded by its kind, times as RFC 3339 UTC with
 * milliseconds, and `livemode`, the mode of the workspace it was read in (common/modes.ts).
 */
export function toObject(resource: CompiledResource, row: Row, workspaceId: string): Row {
  let map = compiled.get(resource);
  if (!map) compiled.set(resource, (map = compile(resource)));
  return map(row, isLiveWorkspace(workspaceId));
}

/** Values as clients send them, as the database stores them (each by its field's kind); fields without a kind pass as they are. */
export function toStored(resource: CompiledResource, values: Row): Row {
  const stored: Row = {};
  for (const [field, value] of Object.entries(values)) {
    const fieldKind = resource.kinds[field];
    stored[field] = fieldKind && !fieldKind.plain ? fieldKind.encode(value) : value;
  }
  return stored;
}

/** The plugin's own fields of an object (not the kernel's id and times). */
export function pickFields(resource: CompiledResource, object: Row): Row {
  const fields: Row = {};
  for (const field of Object.keys(resource.def.fields)) if (field in object) fields[field] = object[field];
  return fields;
}
