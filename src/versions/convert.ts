import { type ChangeDeclaration, latestShape, objectKeys, type Row, type Shape, shapeBefore } from '../kernel/model/index.js';

/**
 * How one older shape of a resource converts to the latest and back: requests go up through
 * every newer change, oldest first; answers come down through them, newest first.
 */
export interface Conversion {
  /** A body in the older shape, in the latest one. */
  bodyUp(body: Row): Row;
  /** A body of the older shape's names (an action's), in the latest names: renames only, no change's code. */
  renameUp(body: Row): Row;
  /** An object in the latest shape, in the older one: exactly the shape's fields (any other key is left out). */
  objectDown(object: Row): Row;
  /** An object with keys beside its fields (an expansion's), or part of one, in the older shape: key by key. */
  anyDown(object: Row): Row;
  /** A list's checked query string in the older names, in the latest ones. */
  queryUp(query: Record<string, unknown>): Record<string, unknown>;
  /** A JSON Pointer into a body or an object by the latest names (`/close_date`, `/data/3/close_date`), by the older ones. */
  pointerDown(pointer: string): string;
  /**
   * Part of an object (an event's `data.previous`: the changed fields' old values) in the older
   * shape: converted as an object is, then only what stands for a field it holds kept.
   */
  partialDown(part: Row): Row;
  /** A query parameter by the latest names (`close_date[lt]`, `sort`), by the older ones. */
  parameterDown(parameter: string): string;
}

/** `client_id` -> `client`: the name an expansion of a reference field takes beside it. */
const expansionName = (field: string) => (field.endsWith('_id') ? field.slice(0, -'_id'.length) : undefined);

/** The object with its keys renamed by `names` (others kept), in the order it had them. */
function renamed(object: Row, names: ReadonlyMap<string, string>): Row {
  const out: Row = {};
  for (const key in object) out[names.get(key) ?? key] = object[key];
  return out;
}

/** A rename's pairs, each reference field's expansion too (`client_id` -> `customer_id` renames `client` -> `customer`). */
function renames(rename: Readonly<Record<string, string>>): Map<string, string> {
  const pairs = new Map(Object.entries(rename));
  for (const [older, newer] of Object.entries(rename)) {
    const from = expansionName(older);
    const to = expansionName(newer);
    if (from !== undefined && to !== undefined && !pairs.has(from)) pairs.set(from, to);
  }
  return pairs;
}

const invert = (pairs: ReadonlyMap<string, string>) => new Map([...pairs].map(([a, b]) => [b, a]));

interface Step {
  rename: boolean;
  up(body: Row): Row;
}

/** One change as a step up: a rename, or the change's code (with `had` kept out of the newer body). */
function stepOf(change: ChangeDeclaration): Step {
  if (change.rename) {
    const up = renames(change.rename);
    return { rename: true, up: (body) => renamed(body, up) };
  }
  const had = Object.keys(change.had ?? {});
  return {
    rename: false,
    up: (body) => {
      const newer = change.request ? change.request({ ...body }) : { ...body };
      for (const field of had) delete newer[field];
      return newer;
    },
  };
}

/** One pass over an object's keys: each renamed, those dropped left out. */
interface Pass {
  names: Map<string, string>;
  drop: ReadonlySet<string>;
}

/** The pass over any object: its keys one by one (an object with expansions beside its fields, an event's `previous`). */
function passed(object: Row, { names, drop }: Pass): Row {
  const out: Row = {};
  for (const key in object) if (!drop.has(key)) out[names.get(key) ?? key] = object[key];
  return out;
}

/** `names` (a key -> its name after the pass) followed by a rename of `newer` to `older`. */
function compose(names: Map<string, string>, newer: string, older: string): void {
  let found = false;
  for (const [key, name] of names) {
    if (name !== newer) continue;
    names.set(key, older);
    found = true;
  }
  if (!found && !names.has(newer)) names.set(newer, older);
}

/** The keys of an object of `shape`, in the order answers give them. */
const keysOf = (shape: Shape): string[] => objectKeys(Object.keys(shape.fields));

/**
 * The pass over an object of a known shape, compiled: one object literal with the keys of the
 * shape it makes (`target`), each read from its name before the pass. A literal is what V8
 * builds and serialises fastest; keys written one by one were five times slower a page.
 */
function compiledPass(target: readonly string[], { names }: Pass): (object: Row) => Row {
  const sourceOf = new Map([...names].map(([from, to]) => [to, from]));
  const members = target.map((key) => `${JSON.stringify(key)}: o[${JSON.stringify(sourceOf.get(key) ?? key)}]`);
  return new Function('o', `return { ${members.join(', ')} };`) as (object: Row) => Row;
}

interface Stage {
  pass: Pass;
  /** The pass for an object with exactly the fields of its shape. */
  fast: (object: Row) => Row;
  response?: (object: Row) => Row;
}

/**
 * Down through the changes, newest first, as few passes as the code allows: the renames between
 * two changes with code are one pass, made when the older change's `response` needs the object
 * in its own names (or at the end), which also leaves out the fields the newer change `added`.
 * `response` gets an object of its own (the pass's), which it may change and return.
 */
function downPlan(newestFirst: readonly ChangeDeclaration[], latestFields: Shape['fields']): { fast: (object: Row) => Row; any: (object: Row) => Row } {
  const stages: Stage[] = [];
  let pass: Pass = { names: new Map(), drop: new Set() };
  let shape = latestShape(latestFields);
  const refuse = (message: string): never => {
    throw new Error(message);
  };
  for (const change of newestFirst) {
    if (change.rename) for (const [newer, older] of invert(renames(change.rename))) compose(pass.names, newer, older);
    else stages.push({ pass, fast: compiledPass(keysOf(shape), pass), response: change.response ?? ((object) => object) });
    const before = shapeBefore(shape, change, refuse);
    if (!change.rename) pass = { names: new Map(), drop: new Set(change.added ?? []) };
    shape = before;
  }
  stages.push({ pass, fast: compiledPass(keysOf(shape), pass) });
  const run = (object: Row, fast: boolean) => {
    let o = object;
    for (const stage of stages) {
      o = fast ? stage.fast(o) : passed(o, stage.pass);
      if (stage.response) o = stage.response(o);
    }
    return o;
  };
  return { fast: (object) => run(object, true), any: (object) => run(object, false) };
}

/** `field[op]` or `field`: the field and what follows it. */
const PARAMETER = /^([^[\]]+)(\[.*\])?$/;

/** The conversion between `shape` (the older) and the latest, through `newer`: every change after the shape, oldest first. */
export function conversionOf(newer: readonly ChangeDeclaration[], shape: Shape, latestFields: Shape['fields']): Conversion {
  const steps = newer.map(stepOf);
  // Names only: a field of the shape and the latest field it is (an expansion's name beside its reference's).
  const latestName = new Map(shape.latestName);
  for (const [older, latest] of shape.latestName) {
    const from = expansionName(older);
    const to = expansionName(latest);
    if (from !== undefined && to !== undefined && !latestName.has(from)) latestName.set(from, to);
  }
  const olderName = invert(latestName);
  // A field a change's code added in place of one it had (size -> size_cm): a problem with it is the old field's to an older caller.
  for (const change of newer) {
    const had = Object.keys(change.had ?? {});
    if (had.length === 1) for (const added of change.added ?? []) if (!olderName.has(added)) olderName.set(added, had[0]!);
  }
  const up = (name: string) => latestName.get(name) ?? name;
  const down = (name: string) => olderName.get(name) ?? name;
  const parameter = (name: string, to: (field: string) => string) => {
    const match = PARAMETER.exec(name);
    return match ? `${to(match[1]!)}${match[2] ?? ''}` : name;
  };
  // A field only an older shape has (`size`) stands for the fields its change added (`size_cm`).
  const standsFor = new Map<string, string[]>();
  for (const change of newer) for (const had of Object.keys(change.had ?? {})) standsFor.set(had, [...(standsFor.get(had) ?? []), ...(change.added ?? [])]);
  const plan = downPlan([...newer].reverse(), latestFields);
  return {
    partialDown: (part) => {
      const converted = plan.any(part);
      const out: Row = {};
      for (const key in converted) {
        const latest = latestName.get(key);
        if (latest !== undefined ? latest in part : (standsFor.get(key) ?? []).some((f) => f in part)) out[key] = converted[key];
      }
      return out;
    },
    bodyUp: (body) => steps.reduce((b, step) => step.up(b), body),
    renameUp: (body) => steps.reduce((b, step) => (step.rename ? step.up(b) : b), body),
    objectDown: plan.fast,
    anyDown: plan.any,
    queryUp: (query) => {
      const out: Record<string, unknown> = {};
      for (const name in query) {
        const value = query[name];
        if (name === 'sort' && typeof value === 'string') out.sort = value.startsWith('-') ? `-${up(value.slice(1))}` : up(value);
        else if (name === 'expand' && typeof value === 'string') out.expand = value.split(',').map(up).join(',');
        else out[parameter(name, up)] = value;
      }
      return out;
    },
    pointerDown: (pointer) => {
      const parts = pointer.split('/');
      // '' first; a batch's items are under /data/<n>.
      const at = parts[1] === 'data' && /^\d+$/.test(parts[2] ?? '') ? 3 : 1;
      if (parts[at] !== undefined) parts[at] = down(parts[at]!);
      return parts.join('/');
    },
    parameterDown: (name) => parameter(name, down),
  };
}
