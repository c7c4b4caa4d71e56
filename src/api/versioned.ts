import { ApiError, type ErrorItem } from '../common/errors.js';
import type { CompiledResource } from '../kernel/registry/index.js';
import type { Row } from '../kernel/model/index.js';
import type { Answer, Rendering } from '../kernel/write/index.js';
import type { BodySpec, Handle, Reply, RouteInput } from '../http/route.js';
import type { Conversion, OlderShape, Versions } from '../versions/index.js';

/**
 * A resource's routes at older API versions (docs/reference.md section 19): the handlers are
 * written for the latest shape; a caller at an older version has its input checked in its own
 * shape (olderInput) and converted up, and its answers and errors converted down. At the
 * latest version nothing is converted.
 */

/** What a route's body is: an object's fields, a batch of them, an action's own, or none. */
export type BodyKind = 'create' | 'update' | 'batch' | 'action' | 'none';

/** How the object answers of a caller at `version` are rendered: down to its shape (the latest: as they are). */
export function renderingOf(versions: Versions, resource: CompiledResource, version: string): Rendering {
  if (version === '' || version === versions.latest) return { version: version || null, object: asItIs };
  return { version, object: (object) => versions.objectDown(resource.def.name, object, version) };
}

const asItIs = (object: Row) => object;

/** The headers of a write's answer: Location, and for a replay Idempotent-Replayed and the version it was first sent in (the request's is set already). */
export function answerHeaders(answer: Answer, replayed: boolean): Record<string, string> | undefined {
  if (!replayed) return answer.location ? { Location: answer.location } : undefined;
  return { ...(answer.location ? { Location: answer.location } : {}), 'Idempotent-Replayed': 'true', ...(answer.version ? { 'Api-Version': answer.version } : {}) };
}

/**
 * A body in the latest shape: converted up, then, where a change's code converted it, checked
 * against the latest schema (422 by the latest names, which errorDown says in the older ones).
 */
function bodyUp(shape: OlderShape, kind: BodyKind, body: Record<string, unknown>): Record<string, unknown> {
  const { conversion, checkUp } = shape;
  if (kind === 'action') return conversion.renameUp(body);
  if (kind === 'none') return body;
  const items = kind === 'batch' ? (body.data as Row[]) : [body];
  const converted = items.map((item) => conversion.bodyUp(item));
  const problems = checkUp ? converted.flatMap((item, i) => checkUp(item, kind !== 'update').map((p) => (kind === 'batch' ? { ...p, pointer: `/data/${i}${p.pointer ?? ''}` } : p))) : [];
  if (problems.length > 0) throw new ApiError('validation_failed', `The body does not match the schema: ${problems.map((e) => `${e.pointer} ${e.message}`).join('; ')}.`, { errors: problems });
  return kind === 'batch' ? { ...body, data: converted } : converted[0]!;
}

/** An error about the latest shape's fields, said by the older shape's names: its pointers, its parameters and its detail. */
function errorDown(caught: unknown, conversion: Conversion): unknown {
  if (!(caught instanceof ApiError) || !caught.extras.errors) return caught;
  let detail = caught.detail;
  const errors = caught.extras.errors.map((item): ErrorItem => {
    const pointer = item.pointer === undefined ? undefined : conversion.pointerDown(item.pointer);
    const parameter = item.parameter === undefined ? undefined : conversion.parameterDown(item.parameter);
    if (pointer !== undefined && pointer !== item.pointer) detail = detail.split(item.pointer!).join(pointer);
    if (parameter !== undefined && parameter !== item.parameter) detail = detail.split(item.parameter!).join(parameter);
    return { ...item, ...(pointer !== undefined ? { pointer } : {}), ...(parameter !== undefined ? { parameter } : {}) };
  });
  return new ApiError(caught.code, detail, { ...caught.extras, errors });
}

/** An answer's objects in the caller's version: a page's, or the one object; a text answer is rendered already (renderingOf). */
function replyDown(reply: Reply, render: (object: Row) => Row): Reply {
  const body = reply.body as Row | undefined;
  if (body === undefined || body === null || typeof body !== 'object') return reply;
  if (Array.isArray(body.data)) return { ...reply, body: { ...body, data: (body.data as Row[]).map(render) } };
  return { ...reply, body: render(body) };
}

/** The handler, converting for callers at older versions; at the latest, the handler itself is called (no frame of its own). */
export function versioned<Q, B>(versions: Versions, resource: CompiledResource, kind: BodyKind, handle: Handle<Q, B>): Handle<Q, B> {
  const converting = async (input: RouteInput<Q, B>): Promise<Reply> => {
    const render = (object: Row) => versions.objectDown(resource.def.name, object, input.version);
    const shape = versions.shapeAt(resource.def.name, input.version);
    let reply: Reply;
    try {
      reply = await handle(shape ? { ...input, query: shape.conversion.queryUp(input.query as Record<string, unknown>) as Q, body: bodyUp(shape, kind, input.body as Record<string, unknown>) as B } : input);
    } catch (caught) {
      throw shape ? errorDown(caught, shape.conversion) : caught;
    }
    return replyDown(reply, render);
  };
  return (input) => (input.version === '' || input.version === versions.latest ? handle(input) : converting(input));
}

/** An action's body properties by an older shape's names: the fields it renamed, as they were called. */
export function actionBodyAt(shape: OlderShape, body: BodySpec): BodySpec {
  const schema = body.schema as { properties?: Record<string, unknown>; required?: string[] };
  const names = shape.olderName;
  const renamedKeys = Object.keys(schema.properties ?? {}).filter((p) => names.has(p) && names.get(p) !== p);
  if (renamedKeys.length === 0) return body;
  const rename = (p: string) => names.get(p) ?? p;
  return {
    ...body,
    schema: {
      ...schema,
      properties: Object.fromEntries(Object.entries(schema.properties ?? {}).map(([p, s]) => [rename(p), s])),
      ...(schema.required ? { required: schema.required.map(rename) } : {}),
    },
  };
}
