import { changeKind, type ChangeDeclaration, type ChangeKind, FIRST_VERSION, isVersionDate, PluginLoadError, type Row } from '../kernel/model/index.js';
import { type CompiledResource, type Registry } from '../kernel/registry/index.js';
import { expandable } from '../kernel/query/index.js';
import { type OlderShape, olderShapes } from './shapes.js';
import { SERVICE_CHANGES, type ServiceChange } from './service.js';

/** One change as GET /v1/versions lists it. */
export interface ListedChange {
  description: string;
  resource?: string;
  kind: ChangeKind;
}

/** One version and what changed in it. */
export interface ListedVersion {
  version: string;
  changes: ListedChange[];
}

/** What a resource's objects expand into: the expansion's name beside its reference, and the resource it names. */
interface Expansion {
  name: string;
  target: string;
}

/**
 * The API's versions (docs/reference.md section 19): the first, and every date the service's
 * changes (versions/service.ts) and the plugins' declare; each resource's older shapes; and
 * the conversions between a caller's version and the latest. Built once at start-up.
 */
export class Versions {
  /** Oldest first. */
  readonly known: readonly string[];
  readonly latest: string;
  private readonly listed: readonly ListedVersion[];
  private readonly shapes: ReadonlyMap<string, readonly OlderShape[]>;
  private readonly expansions: ReadonlyMap<string, readonly Expansion[]>;

  constructor(registry: Registry, service: readonly ServiceChange[] = SERVICE_CHANGES) {
    const byVersion = new Map<string, ListedChange[]>([[FIRST_VERSION, []]]);
    const list = (change: ChangeDeclaration, resource?: string) => {
      const listed = byVersion.get(change.version) ?? [];
      listed.push({ description: change.description, ...(resource ? { resource } : {}), kind: changeKind(change) });
      byVersion.set(change.version, listed);
    };
    for (const change of service) list(change, change.resource);
    const shapes = new Map<string, OlderShape[]>();
    const expansions = new Map<string, Expansion[]>();
    for (const resource of registry.resources) {
      const own = resource.def.changes ?? [];
      for (const change of own) list(change, resource.def.name);
      const changes = [...service.filter((c) => c.resource === undefined || c.resource === resource.def.name), ...own];
      shapes.set(resource.def.name, olderShapes(resource, changes));
      expansions.set(resource.def.name, [...expandable(resource.def, resource.kinds)].map(([name, field]) => ({ name, target: resource.def.references[field]! })));
    }
    for (const change of service) {
      if (change.resource !== undefined && !registry.byName.has(change.resource)) throw new PluginLoadError('src/versions/service.ts', `a change of ${change.version} names the resource "${change.resource}", which no plugin declares`);
    }
    this.known = [...byVersion.keys()].sort();
    this.latest = this.known[this.known.length - 1]!;
    this.listed = this.known.map((version) => ({ version, changes: byVersion.get(version)! }));
    this.shapes = shapes;
    this.expansions = expansions;
  }

  /** A version a caller may ask for: one of the known dates. */
  has(version: string): boolean {
    return this.known.includes(version);
  }

  /** Every version, oldest first, with its changes (GET /v1/versions). */
  listing(): readonly ListedVersion[] {
    return this.listed;
  }

  /** The versions after `version`, with their changes: what moving a pin from it to the latest changes. */
  since(version: string): ListedVersion[] {
    return this.listed.filter((v) => v.version > version);
  }

  /** How a caller at `version` sees the resource: its older shape, or undefined when it sees the latest. */
  shapeAt(resource: string, version: string): OlderShape | undefined {
    if (version >= this.latest) return undefined;
    let found: OlderShape | undefined;
    // Newest first: the last one that began after the version is the one it sees.
    for (const shape of this.shapes.get(resource) ?? []) {
      if (shape.until > version) found = shape;
      else break;
    }
    return found;
  }

  /**
   * An object of the resource (latest shape) as a caller at `version` reads it: the objects it
   * has expanded (`client` beside `client_id`) each in its own resource's older shape, then its own.
   */
  objectDown(resource: string, object: Row, version: string): Row {
    let out = object;
    for (const { name, target } of this.expansions.get(resource) ?? []) {
      if (!(name in object)) continue;
      const nested = object[name];
      if (out === object) out = { ...object };
      if (nested !== null && typeof nested === 'object' && !Array.isArray(nested)) out[name] = this.objectDown(target, nested as Row, version);
    }
    const shape = this.shapeAt(resource, version);
    if (!shape) return out;
    // An object with its expansions beside its fields goes key by key; one of the resource's fields alone, by the compiled pass.
    return out === object ? shape.conversion.objectDown(out) : shape.conversion.anyDown(out);
  }

  /**
   * An event (its stored JSON text, in the latest shape) as a caller or a subscription at
   * `version` reads it: its object, and its `previous` values, in the resource's shape there.
   * The text as it is at the latest version.
   */
  eventDown(text: string, version: string): string {
    if (version >= this.latest) return text;
    const event = JSON.parse(text) as { type?: string; data?: { object?: Row; previous?: Row } };
    const resource = String(event.type ?? '').split('.')[0] ?? '';
    const data = event.data;
    if (!data || !this.shapes.has(resource)) return text;
    const shape = this.shapeAt(resource, version);
    if (data.object) data.object = this.objectDown(resource, data.object, version);
    if (data.previous && shape) data.previous = shape.conversion.partialDown(data.previous);
    return JSON.stringify(event);
  }

  /** The registry as a caller at `version` sees it: each resource in its shape there (for that version's documents). */
  registryAt(registry: Registry, version: string): Registry {
    if (version >= this.latest) return registry;
    const resources = registry.resources.map((r) => this.shapeAt(r.def.name, version)?.resource ?? r);
    return { ...registry, resources, byName: new Map(resources.map((r) => [r.def.name, r])) };
  }

  /** The older shapes of every resource, for the documents of each version. */
  shapesOf(resource: CompiledResource): readonly OlderShape[] {
    return this.shapes.get(resource.def.name) ?? [];
  }
}

export { FIRST_VERSION, isVersionDate };
