import { type Registry, WEBHOOKS_SCOPE } from '../kernel/registry/index.js';
import { eventCatalog } from '../events/catalog.js';
import { eventLogPage, findEvent } from '../events/log.js';
import { matches, patternErrors } from '../events/patterns.js';
import { ApiError } from '../common/errors.js';
import { caller, type Route, route, type RouteInput } from '../http/route.js';
import { PAGE_PARAMETERS } from '../kernel/model/index.js';
import { ref } from '../openapi/operation.js';
import { count } from '../common/words.js';
import { readWindow, windowProperties } from '../common/window.js';

const JSON_TEXT = 'application/json; charset=utf-8';

/** How the caller reads events: in its API version when that is an older one (events are stored in the latest shape); undefined: as stored. */
function renderEvents(input: RouteInput): ((event: string) => string) | undefined {
  const { versions } = input.deps;
  return input.version === versions.latest ? undefined : (event) => versions.eventDown(event, input.version);
}

/**
 * The event log (docs/reference.md section 11): the workspace's events, each exactly as it was signed and
 * delivered, narrowed to the resources the key may read (`read:deals` sees `deal.*`).
 */
export function eventLogRoutes(registry: Registry, retentionDays: number): Route[] {
  const catalog = eventCatalog(registry);
  const readScope = new Map([...registry.resources.map(({ def }) => [def.path.slice(1), def.scopes.read] as const), ['webhooks', WEBHOOKS_SCOPE] as const]);
  /** The catalog's event types this key may read. */
  const readable = (input: RouteInput) => {
    const scopes = caller(input).scopes;
    return catalog.filter((e) => scopes.has(readScope.get(e.resource) ?? '')).map((e) => e.name);
  };
  const base = { tag: 'events', access: null } as const;
  return [
    route({
      ...base,
      method: 'get',
      path: '/event-log',
      operationId: 'listEventLog',
      summary: 'The event log',
      description:
        `The events of the workspace, page by page, each in the caller's API version: at the version a subscription renders in, exactly as it was delivered (the same bytes that were signed), so what a receiver missed can be fetched. A key sees only the events of resources it can read: \`read:deals\` gives \`deal.*\`. Events are kept ${count(retentionDays, 'day', 'days')} (RETENTION_DAYS), then deleted with their deliveries.`,
      query: {
        type: 'object',
        additionalProperties: false,
        properties: {
          ...PAGE_PARAMETERS,
          type: { type: 'string', minLength: 1, maxLength: 1000, description: 'Comma-separated patterns as for webhooks: an event name, `*` or `<resource>.*`.', examples: ['deal.*,invoice.paid'] },
          ...windowProperties('Events created at or after this time (RFC 3339).', 'Events created before this time (RFC 3339).'),
          sort: { type: 'string', enum: ['created_at', '-created_at'], default: '-created_at', description: 'Oldest first, or newest first (the default).' },
        },
      },
      success: { status: 200, description: 'A page of events.', schema: ref('EventLogPage') },
      errors: ['invalid_parameter', 'invalid_cursor'],
      handle: async (input) => {
        const query = input.query;
        let types = readable(input);
        if (query.type !== undefined) {
          const patterns = query.type.split(',').map((p) => p.trim());
          const errors = patternErrors(patterns, catalog).map((e) => ({ parameter: 'type', message: e.message }));
          if (errors.length > 0) throw new ApiError('invalid_parameter', `type: ${errors.map((e) => e.message).join('; ')}.`, { errors });
          types = types.filter((t) => matches(patterns, t));
        }
        const text = await eventLogPage(input.deps.db, caller(input).workspace.id, {
          limit: query.limit,
          types,
          sort: query.sort,
          ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
          ...readWindow(query, 'query'),
        }, renderEvents(input));
        return { text, type: JSON_TEXT };
      },
    }),
    {
      ...base,
      method: 'get',
      path: '/event-log/{id}',
      operationId: 'getEvent',
      summary: 'One event',
      description: "The event in the caller's API version: at a subscription's version, exactly as delivered to it (the same bytes that were signed); 404 for an event of a resource the key cannot read.",
      pathParams: { id: { type: 'string', description: 'The event id (`evt_...`), also the `webhook-id` of its deliveries.' } },
      success: { status: 200, description: 'The event.', schema: ref('Event') },
      errors: ['invalid_parameter', 'not_found'],
      handle: async (input) => {
        const id = String(input.params.id);
        const text = await findEvent(input.deps.db, caller(input).workspace.id, id, readable(input));
        if (text === undefined) throw new ApiError('not_found', `No event with id ${id} that this key can read.`);
        return { text: renderEvents(input)?.(text) ?? text, type: JSON_TEXT };
      },
    },
  ];
}
