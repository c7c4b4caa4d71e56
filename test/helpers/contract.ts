import type { ValidateFunction } from 'ajv';
import { AssertionError } from 'chai';
import { createSchemaAjv } from '../../src/kernel/model/ajv.js';

/**
 * Holds every answer a test gets to the served OpenAPI document: the status must be documented
 * for the operation, the body must match that answer's schema (compiled with ajv from the
 * document itself), its media type must be the documented one, and every header the document
 * marks required must be there. A mismatch fails the test that made the request.
 */

type Json = Record<string, unknown>;

interface Route {
  method: string;
  template: string;
  pattern: RegExp;
  operation: Json;
}

const DOC_ID = 'openapi.json';

/** `#/components/responses/A~1B` -> the value it points at. */
export function resolvePointer(doc: Json, pointer: string): unknown {
  return pointer
    .replace(/^#\//, '')
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, key) => (node as Json | undefined)?.[key], doc);
}

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

export class Contract {
  // The document's own keywords (openapi, paths, ...) are not JSON Schema: only its schemas are compiled, on demand.
  private readonly ajv = createSchemaAjv({ strictSchema: false });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly routes: Route[] = [];
  readonly base: string;

  constructor(readonly doc: Json) {
    this.ajv.addSchema(doc, DOC_ID);
    const servers = doc.servers as Array<{ url: string }>;
    this.base = servers[0]?.url ?? '';
    for (const [template, item] of Object.entries(doc.paths as Record<string, Json>)) {
      const pattern = new RegExp(`^${this.base}${template.replace(/\{[^}]+\}/g, '[^/]+').replace(/\./g, '\\.')}$`);
      for (const [method, operation] of Object.entries(item)) {
        this.routes.push({ method: method.toUpperCase(), template, pattern, operation: operation as Json });
      }
    }
  }

  /** The validator of the schema at `pointer` (a JSON Pointer into the document), compiled once. */
  validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOC_ID}${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  private fail(what: string, message: string): never {
    throw new AssertionError(`OpenAPI contract: ${what}: ${message}`);
  }

  /** Checks one JSON value against the schema at `pointer`. */
  checkValue(what: string, pointer: string, value: unknown): void {
    const validate = this.validator(pointer);
    if (!validate(value)) this.fail(what, `${this.ajv.errorsText(validate.errors)} in ${JSON.stringify(value).slice(0, 500)}`);
  }

  /** The operation that answers `method` on `path`: a path the document names literally is its own alone (OpenAPI: concrete paths match before templated ones). */
  route(method: string, path: string): Route | undefined {
    const literal = this.routes.some((r) => !r.template.includes('{') && `${this.base}${r.template}` === path);
    return this.routes.find((r) => r.method === method && (literal ? `${this.base}${r.template}` === path : r.pattern.test(path)));
  }

  /** Checks an answer; `text` is its body. Reads nothing from `res` but status and headers. */
  check(method: string, url: string, res: Response, text: string): void {
    const path = new URL(url, 'http://x').pathname;
    const what = `${method} ${path} answered ${res.status}`;
    const route = this.route(method, path);
    if (!route) {
      // No operation here (an unknown path, or a method the path does not take): only errors may come back.
      if (res.status < 400) this.fail(what, 'no documented operation has this path and method');
      this.checkValue(what, '#/components/schemas/Problem', JSON.parse(text));
      return;
    }
    const responses = route.operation.responses as Json;
    const status = String(res.status);
    const key = status in responses ? status : `${status[0]}XX` in responses ? `${status[0]}XX` : 'default' in responses ? 'default' : undefined;
    if (!key) this.fail(what, `status not documented for ${route.method} ${route.template} (documented: ${Object.keys(responses).join(', ')})`);
    let pointer = `#/paths/${escapePointer(route.template)}/${route.method.toLowerCase()}/responses/${key}`;
    let response = responses[key] as Json;
    if (typeof response.$ref === 'string') {
      pointer = response.$ref;
      response = resolvePointer(this.doc, pointer) as Json;
    }
    for (const [name, declared] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
      const header = (typeof declared.$ref === 'string' ? resolvePointer(this.doc, declared.$ref) : declared) as Json;
      const value = res.headers.get(name);
      if (header.required === true && value === null) this.fail(what, `required header ${name} is missing`);
      const type = (header.schema as Json | undefined)?.type;
      if (value !== null && type === 'integer' && !/^\d+$/.test(value)) this.fail(what, `header ${name} is not an integer: ${value}`);
    }
    const content = response.content as Json | undefined;
    const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
    if (!content) {
      if (text !== '') this.fail(what, `documented without a body, but one came: ${text.slice(0, 200)}`);
      return;
    }
    if (!(mediaType in content)) this.fail(what, `media type ${mediaType || '(none)'} is not documented (documented: ${Object.keys(content).join(', ')})`);
    this.checkValue(what, `${pointer}/content/${escapePointer(mediaType)}/schema`, JSON.parse(text));
  }

  /** Checks a webhook delivery against the document's `webhooks` entry for its event type. */
  checkDelivery(headers: Record<string, string | string[] | undefined>, body: string): void {
    const payload = JSON.parse(body) as { type?: string };
    const type = String(payload.type);
    const what = `delivery of ${type}`;
    const operation = resolvePointer(this.doc, `#/webhooks/${escapePointer(type)}/post`) as Json | undefined;
    if (!operation) this.fail(what, 'the event type is not under webhooks');
    for (const parameter of operation.parameters as Json[]) {
      const value = headers[String(parameter.name).toLowerCase()];
      if (parameter.required === true && typeof value !== 'string') this.fail(what, `header ${String(parameter.name)} is missing`);
      const schema = parameter.schema as Json;
      if (typeof value === 'string' && typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(value)) this.fail(what, `header ${String(parameter.name)} does not match ${schema.pattern}: ${value}`);
    }
    this.checkValue(what, `#/webhooks/${escapePointer(type)}/post/requestBody/content/application~1json/schema`, payload);
  }
}

const contracts = new Map<string, Contract>();

/** The contract of a document served at `origin` (the public one by default); documents with the same text share one. */
export async function contractOf(origin: string, documentPath = '/v1/openapi.json'): Promise<Contract> {
  const res = await fetch(`${origin}${documentPath}`);
  if (res.status !== 200) throw new Error(`GET ${documentPath} answered ${res.status}`);
  const text = await res.text();
  let contract = contracts.get(text);
  if (!contract) {
    contract = new Contract(JSON.parse(text) as Json);
    contracts.set(text, contract);
  }
  return contract;
}

/**
 * fetch() against one server that holds every answer to the document that server serves for its
 * API (the public one, or the internal one under /internal/v1; each read once). The body is checked on a clone, so the caller can still read it.
 */
export async function checkedFetcher(origin: string): Promise<(path: string, init?: RequestInit) => Promise<Response>> {
  const contract = await contractOf(origin);
  const internal = await contractOf(origin, '/internal/v1/openapi.json');
  // An answer of the public API is held to the document of the API version it names (docs/reference.md section 19).
  const versions = new Map<string, Contract>();
  const contractAt = async (version: string | null): Promise<Contract> => {
    if (version === null) return contract;
    let found = versions.get(version);
    if (!found) {
      found = await contractOf(origin, `/v1/openapi.json?version=${version}`);
      versions.set(version, found);
    }
    return found;
  };
  return async (path, init = {}) => {
    const res = await fetch(origin + path, init);
    // Each API is held to its own document.
    const held = path === '/internal/v1' || path.startsWith('/internal/v1/') ? internal : await contractAt(res.headers.get('api-version'));
    held.check((init.method ?? 'GET').toUpperCase(), path, res, await res.clone().text());
    return res;
  };
}
