import { createBatch, createObject, deleteObject, etagOf, expectedVersion, IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY, idempotentRequest, IF_MATCH, IF_NONE_MATCH, knownVersions, MAX_BATCH, runAction, unchanged, updateObject } from '../kernel/write/index.js';
import { expand, expansionsOf, getObject, listPage } from '../kernel/query/index.js';
import type { CompiledResource, Registry } from '../kernel/registry/index.js';
import { actionBodySchema, batchBodySchema, type Handler, type JsonSchema, objectKeys, type Row } from '../kernel/model/index.js';
import { type BodySpec, caller, type Handle, headerOf, type Route, route } from '../http/route.js';
import { ref } from '../openapi/operation.js';
import { header } from '../openapi/problems.js';
import { pascal } from '../openapi/resources.js';
import { a } from '../common/words.js';
import { JSON_TYPES } from '../common/wire.js';
import type { OlderShape, Versions } from '../versions/index.js';
import { actionBodyAt, answerHeaders, type BodyKind, renderingOf, versioned } from './versioned.js';

function machineText(resource: CompiledResource): string {
  const state = resource.def.state;
  if (!state) return '';
  if (state.transitions === 'free') return ` \`${state.field}\` moves freely between its values.`;
  const moves = Object.entries(state.transitions).map(([from, to]) => (to.length > 0 ? `${from} → ${to.join(' | ')}` : `${from} is final`));
  return ` \`${state.field}\` follows its state machine: ${moves.join('; ')}. A refused move is 409 \`invalid_transition\`.`;
}

const IDEMPOTENCY_PARAMETER = {
  name: IDEMPOTENCY_HEADER,
  in: 'header',
  required: false,
  description: 'Makes the POST safe to retry: the same key with the same body within 24 h replays the first answer (with Idempotent-Replayed: true); with another body or endpoint, 409 idempotency_conflict.',
  schema: { type: 'string', pattern: IDEMPOTENCY_KEY.source },
};

/** An optional header carrying an ETag (`"3"`), described for the document. */
const tagHeader = (name: string, description: string) => ({ name, in: 'header', required: false, description, schema: { type: 'string', examples: ['"3"'] } });

const IF_MATCH_PARAMETER = tagHeader(
  IF_MATCH,
  'The ETag of the version this change is meant for (`"3"`, from a GET or the last change): if the object has moved on since, nothing is changed and the answer is 412 version_mismatch with its current version. `*` admits any version.',
);

const IF_NONE_MATCH_PARAMETER = tagHeader(
  IF_NONE_MATCH,
  'The ETag of the version you hold (`"3"`; `W/"3"`, a list, or `*` also): if the object is still at it, the answer is 304 with no body. Not with `expand`, whose objects the ETag does not cover.',
);

/** What a batch's body holds beside `data`: nothing. */
const BATCH_ENVELOPE = 'is not part of a batch, whose body is { "data": [...] } and nothing else';

/** The generated handler, or the plugin's own given the generated one as `next`. */
function extend<Q extends Record<string, unknown>, B extends Record<string, unknown>>(own: Handler | undefined, generated: Handle<Q, B>): Handle<Q, B> {
  // The plugin's handler sees the input as checked and hands it on to the generated one, which reads its types.
  return own ? (input) => own(input, generated as Handle) : generated;
}

/** The five routes of one resource: list and create on the collection; get, update and delete on an item. */
function routesOf(resource: CompiledResource, base: string, versions: Versions): Route[] {
  const { def } = resource;
  /** Its input at an older version, where the resource's shape differs there. */
  const olderInput = (input: (shape: OlderShape) => { query?: JsonSchema; body?: BodySpec }) => (version: string) => {
    const shape = versions.shapeAt(def.name, version);
    return shape && input(shape);
  };
  const at = <Q, B>(kind: BodyKind, handle: Handle<Q, B>) => versioned(versions, resource, kind, handle);
  const name = pascal(def.name);
  const plural = pascal(def.path);
  const tag = def.path.slice(1);
  const item = `${def.path}/{id}`;
  const pathParams = { id: { type: 'string', description: `The ${def.name}'s id (\`${def.idPrefix}...\`).`, examples: [`${def.idPrefix}0123456789abcdef`] } };
  const machine = def.state && def.state.transitions !== 'free' ? (['invalid_transition'] as const) : [];
  const readOnly = [...objectKeys([]), ...Object.keys(def.fields).filter((f) => def.fields[f]?.readOnly)];
  const own = def.handlers ?? {};
  return [
    route({
      method: 'get',
      path: def.path,
      operationId: `list${plural}`,
      summary: `List ${tag}`,
      description: `A page of ${tag}, newest first by default. Walk the pages with \`cursor\`; rows that exist for the whole walk appear exactly once. Unknown parameters are refused.`,
      tag,
      access: def.scopes.read,
      query: resource.listQuerySchema,
      success: { status: 200, description: `A page of ${tag}.`, schema: ref(`${name}List`) },
      errors: ['invalid_parameter', 'invalid_cursor', 'insufficient_scope'],
      olderInput: olderInput((shape) => ({ query: shape.listQuerySchema })),
      handle: at('none', extend(own.list, async (input) => {
        const store = input.deps.stores.of(resource);
        const { workspace, scopes } = caller(input);
        const expansions = expansionsOf(store, input.query.expand, scopes);
        const page = await listPage(store, workspace.id, input.query);
        return { body: expansions.length === 0 ? page : { ...page, data: await expand(expansions, workspace.id, page.data) } };
      })),
    }),
    route({
      method: 'post',
      path: def.path,
      operationId: `create${name}`,
      summary: `Create ${a(def.name)}`,
      description: `Creates ${a(def.name)} and emits \`${def.name}.created\` in the same transaction. Unknown fields are refused.${machineText(resource)}`,
      tag,
      access: def.scopes.write,
      headerParams: [IDEMPOTENCY_PARAMETER],
      body: { schema: resource.createBodySchema, ref: ref(`${name}Create`), readOnly },
      success: { status: 201, description: `The new ${def.name}.`, schema: ref(name), headers: { Location: header('Location'), 'Idempotent-Replayed': header('Idempotent-Replayed') } },
      errors: ['invalid_parameter', 'insufficient_scope', 'idempotency_conflict', ...machine],
      olderInput: olderInput((shape) => ({ body: { schema: shape.createBodySchema, readOnly: shape.readOnly } })),
      handle: at('create', extend(own.create, async (input) => {
        const idempotent = idempotentRequest(headerOf(input, IDEMPOTENCY_HEADER), input.method, input.path, input.body);
        const rendering = renderingOf(versions, resource, input.version);
        const { answer, replayed } = await createObject(input.deps, input.deps.stores.of(resource), caller(input).workspace.id, input.body, idempotent, (id) => `${base}${def.path}/${id}`, rendering);
        return { status: answer.status, text: answer.body, headers: answerHeaders(answer, replayed) };
      })),
    }),
    route({
      method: 'post',
      path: `${def.path}/batch`,
      operationId: `create${plural}Batch`,
      summary: `Create up to ${MAX_BATCH} ${tag} at once`,
      description: `Creates 1 to ${MAX_BATCH} ${tag} in one transaction, all or none, and emits \`${def.name}.created\` for each. A refused item refuses the batch: its errors point into it (\`/data/3/title\`). An Idempotency-Key covers the batch as a whole; the batch counts as one request against the rate limit.${machineText(resource)}`,
      tag,
      access: def.scopes.write,
      headerParams: [IDEMPOTENCY_PARAMETER],
      body: { schema: batchBodySchema(resource.createBodySchema, MAX_BATCH), ref: ref(`${name}BatchCreate`), readOnly, required: def.required, unknownAtTop: BATCH_ENVELOPE },
      success: { status: 201, description: `The new ${tag}, in the order sent.`, schema: ref(`${name}Batch`), headers: { 'Idempotent-Replayed': header('Idempotent-Replayed') } },
      errors: ['invalid_parameter', 'insufficient_scope', 'idempotency_conflict', ...machine],
      olderInput: olderInput((shape) => ({ body: { schema: batchBodySchema(shape.createBodySchema, MAX_BATCH), readOnly: shape.readOnly, required: shape.required, unknownAtTop: BATCH_ENVELOPE } })),
      handle: at<Record<string, unknown>, { data: Row[] }>('batch', async (input) => {
        const idempotent = idempotentRequest(headerOf(input, IDEMPOTENCY_HEADER), input.method, input.path, input.body);
        const bodies = input.body.data;
        const { answer, replayed } = await createBatch(input.deps, input.deps.stores.of(resource), caller(input).workspace.id, bodies, idempotent, renderingOf(versions, resource, input.version));
        return { status: answer.status, text: answer.body, headers: answerHeaders(answer, replayed) };
      }),
    }),
    route({
      method: 'get',
      path: item,
      operationId: `get${name}`,
      summary: `Get ${a(def.name)}`,
      tag,
      access: def.scopes.read,
      pathParams,
      ...(resource.getQuerySchema ? { query: resource.getQuerySchema } : {}),
      headerParams: [IF_NONE_MATCH_PARAMETER],
      success: { status: 200, description: `The ${def.name}, its version as the ETag.`, schema: ref(name), headers: { ETag: header('ETag') } },
      otherAnswers: [{ status: 304, description: `The ${def.name} is still at the version If-None-Match names: nothing is sent again.`, headers: { ETag: header('ETag') } }],
      errors: ['invalid_parameter', 'insufficient_scope', 'not_found'],
      olderInput: olderInput((shape) => (shape.getQuerySchema ? { query: shape.getQuerySchema } : {})),
      handle: at('none', extend(own.get, async (input) => {
        const store = input.deps.stores.of(resource);
        const { workspace, scopes } = caller(input);
        const expansions = expansionsOf(store, input.query.expand, scopes);
        const known = knownVersions(headerOf(input, IF_NONE_MATCH));
        const object = await getObject(store, workspace.id, String(input.params.id));
        const headers = { ETag: etagOf(object.version) };
        if (expansions.length === 0 && unchanged(known, object.version)) return { status: 304, headers };
        return { headers, body: expansions.length === 0 ? object : (await expand(expansions, workspace.id, [object]))[0] };
      })),
    }),
    route({
      method: 'patch',
      path: item,
      operationId: `update${name}`,
      summary: `Update ${a(def.name)}`,
      description: `Changes the fields sent (a field sent as null is cleared), adds one to \`version\` and emits \`${def.name}.updated\` with the changed fields' old values in \`data.previous\`. A PATCH that changes nothing emits nothing and keeps the version. With If-Match, only the version named is changed (412 version_mismatch otherwise).${machineText(resource)}`,
      tag,
      access: def.scopes.write,
      pathParams,
      headerParams: [IF_MATCH_PARAMETER],
      body: { schema: resource.updateBodySchema, ref: ref(`${name}Update`), types: JSON_TYPES, readOnly, required: def.required },
      success: { status: 200, description: `The ${def.name} after the change, its version as the ETag.`, schema: ref(name), headers: { ETag: header('ETag') } },
      errors: ['invalid_parameter', 'insufficient_scope', 'not_found', 'version_mismatch', ...machine],
      olderInput: olderInput((shape) => ({ body: { schema: shape.updateBodySchema, types: JSON_TYPES, readOnly: shape.readOnly, required: shape.required } })),
      handle: at('update', extend(own.update, async (input) => {
        const expected = expectedVersion(headerOf(input, IF_MATCH));
        const object = await updateObject(input.deps, input.deps.stores.of(resource), caller(input).workspace.id, String(input.params.id), input.body, expected);
        return { headers: { ETag: etagOf(object.version) }, body: object };
      })),
    }),
    {
      method: 'delete',
      path: item,
      operationId: `delete${name}`,
      summary: `Delete ${a(def.name)}`,
      description: `Deletes the ${def.name} and emits \`${def.name}.deleted\` (its object at the version it last had). With If-Match, only the version named is deleted (412 version_mismatch otherwise).`,
      tag,
      access: def.scopes.write,
      pathParams,
      headerParams: [IF_MATCH_PARAMETER],
      success: { status: 204, description: 'Deleted.' },
      errors: ['invalid_parameter', 'insufficient_scope', 'not_found', 'version_mismatch'],
      handle: extend(own.delete, async (input) => {
        await deleteObject(input.deps, input.deps.stores.of(resource), caller(input).workspace.id, String(input.params.id), expectedVersion(headerOf(input, IF_MATCH)));
        return { status: 204 };
      }),
    },
  ];
}

/** `mark-paid` -> `MarkPaid`. */
const camel = (name: string) => name.replace(/(^|-)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());

/** A plugin's actions: `POST /v1/<path>/{id}/<action>`, each validated, idempotent and documented. */
function actionRoutes(resource: CompiledResource, versions: Versions): Route[] {
  const { def } = resource;
  const name = pascal(def.name);
  const machine = def.state && def.state.transitions !== 'free' ? (['invalid_transition'] as const) : [];
  return Object.entries(def.actions ?? {}).map(([action, declared]): Route => {
    const body: BodySpec = { schema: actionBodySchema(declared) };
    return {
    method: 'post' as const,
    path: `${def.path}/{id}/${action}`,
    operationId: `${camel(action).charAt(0).toLowerCase()}${camel(action).slice(1)}${name}`,
    summary: declared.summary,
    description: `${declared.description ?? declared.summary} Answers the ${def.name} as it then stands; the changes it makes are written, with their events, as a PATCH writes them.${machineText(resource)}`,
    tag: def.path.slice(1),
    access: declared.scope === 'read' ? def.scopes.read : def.scopes.write,
    pathParams: { id: { type: 'string', description: `The ${def.name}'s id (\`${def.idPrefix}...\`).`, examples: [`${def.idPrefix}0123456789abcdef`] } },
    headerParams: [IDEMPOTENCY_PARAMETER],
    body,
    olderInput: (version) => {
      const shape = versions.shapeAt(def.name, version);
      const older = shape && actionBodyAt(shape, body);
      return older && older !== body ? { body: older } : undefined;
    },
    success: { status: 200, description: `The ${def.name} after the ${action}.`, schema: ref(name), headers: { 'Idempotent-Replayed': header('Idempotent-Replayed') } },
    errors: ['invalid_parameter', 'insufficient_scope', 'not_found', 'idempotency_conflict', ...machine],
    handle: versioned(versions, resource, 'action', async (input) => {
      const idempotent = idempotentRequest(headerOf(input, IDEMPOTENCY_HEADER), input.method, input.path, input.body);
      const { answer, replayed } = await runAction(input.deps, input.deps.stores.of(resource), action, caller(input).workspace.id, String(input.params.id), input.body, idempotent, renderingOf(versions, resource, input.version));
      return { status: answer.status, text: answer.body, headers: answerHeaders(answer, replayed) };
    }),
  };
  });
}

/** Every plugin's routes, in plugin order; `base` is where the API lives (a new object's Location). */
export function resourceRoutes(registry: Registry, base: string, versions: Versions): Route[] {
  return registry.resources.flatMap((resource) => [...routesOf(resource, base, versions), ...actionRoutes(resource, versions)]);
}
