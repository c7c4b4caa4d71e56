import { AUDIT_ACTIONS } from '../audit/log.js';
import { KEY_CREATE_SCHEMA, KEY_PATCH_SCHEMA, KEY_ROLL_SCHEMA, MAX_KEY_LIFETIME_DAYS, MAX_RATE_LIMIT, WORKSPACE_PATCH_SCHEMA } from '../auth/keys.js';
import { TOKEN_PATTERN } from '../auth/tokens.js';
import { JOB_KINDS, JOB_STATUSES } from '../admin/jobs.js';
import type { JsonSchema } from '../kernel/model/index.js';
import { int, obj, scopeList, str, versionList } from './meta.js';
import { ref } from './operation.js';
import { pageSchema } from './resources.js';
import { time } from './webhooks.js';
import { idPattern } from '../common/ids.js';

const nullableStr = { type: ['string', 'null'] };

const actor = obj(
  {
    type: { type: 'string', enum: ['user', 'api_key', 'operator', 'system'] },
    id: { ...nullableStr, description: 'The user or key id; null for an operator or the service.' },
    label: { type: 'string', description: "The user's email, the key's name and prefix, `admin command`, or `Workspace API`." },
  },
  'Who did it.',
);

const keyProperties: Record<string, JsonSchema> = {
  id: { type: 'string', pattern: idPattern('key_') },
  name: str,
  prefix: { type: 'string', description: 'The first characters of the token: enough to recognise it, never enough to use it.' },
  mode: { type: 'string', enum: ['live', 'test'], description: 'Which objects and events it reaches: `live`, or `test` (its token begins `wsk_test_`).' },
  scopes: { type: 'array', items: str },
  rate_limit: { type: 'integer', minimum: 1, maximum: MAX_RATE_LIMIT, description: 'Requests a minute.' },
  api_version: { type: 'string', format: 'date', description: 'The API version it is pinned to: its requests without an Api-Version header are answered in it.', examples: ['2026-11-21'] },
  created_at: time('When it was made.'),
  created_by: { oneOf: [{ type: 'null' }, { $ref: '#/components/schemas/Actor' }], description: 'Who made it; null for keys made before this was recorded.' },
  last_used_at: time('Its last request (to the minute); null if never used.', true),
  expires_at: time('When it stops working (401 key_expired from then on); null: it lives until revoked.', true),
  allowed_ips: { type: ['array', 'null'], items: { type: 'string' }, description: 'The addresses and CIDR ranges it may be used from (403 ip_not_allowed elsewhere); null: anywhere.' },
  revoked_at: time('When it was revoked, or, for a rolled key, when it is refused from (ahead of now during the overlap); null while it is live.', true),
};

export const SIGN_IN_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'password'],
  properties: { email: { type: 'string', minLength: 1, maxLength: 254 }, password: { type: 'string', minLength: 1, maxLength: 1024 } },
} as const satisfies JsonSchema;

/** The internal API's own schemas (docs/reference.md section 10); webhooks reuse the public ones. */
export const INTERNAL_SCHEMAS: Record<string, JsonSchema> = {
  VersionList: versionList(false),
  SignIn: SIGN_IN_SCHEMA,
  EventTypeList: obj({
    data: {
      type: 'array',
      items: obj({
        name: { type: 'string', examples: ['deal.stage_changed'] },
        resource: str,
        description: str,
        example: { type: 'object', description: 'An example payload, from the public document (`x-payload-example` of the webhook).' },
      }),
    },
  }),
  LoggedEvent: obj(
    {
      id: { type: 'string', pattern: idPattern('evt_') },
      type: { type: 'string', examples: ['deal.created'] },
      created_at: time('When it happened.'),
      livemode: { type: 'boolean', description: 'false for an event of test mode.' },
      data: { type: 'object', required: ['object'], properties: { object: { type: 'object', description: 'The object after the change (before it, for a delete).' }, previous: { type: 'object', description: "The changed fields' old values." } } },
    },
    'An event, as delivered to webhooks in the latest API version.',
  ),
  LoggedEventPage: pageSchema({ $ref: '#/components/schemas/LoggedEvent' }, 'A page of the event log, newest first.'),
  Session: obj(
    {
      user: obj({ id: { type: 'string', pattern: idPattern('usr_') }, email: str, name: str, role: { type: 'string', enum: ['admin', 'viewer'] } }),
      workspace: obj({ id: str, name: str, plan: str }),
    },
    'Who is signed in, and their workspace.',
  ),
  Workspace: obj(
    {
      id: str,
      mode: { type: 'string', enum: ['live', 'test'], description: 'The mode `usage` counts.' },
      name: str,
      plan: obj({ name: str, api_access: { type: 'string', enum: ['none', 'read_only', 'read_write'] }, max_keys: int(0), webhooks_per_month: int(0) }, "The plan's limits."),
      usage: obj({ live_keys: int(0), webhooks_this_month: int(0) }, 'How much of them the mode uses: its keys neither revoked nor expired, and its subscriptions created this UTC calendar month (deleted ones included).'),
      max_key_lifetime_days: { type: ['integer', 'null'], minimum: 1, maximum: MAX_KEY_LIFETIME_DAYS, description: 'Every new key must expire within this many days; null: no limit.' },
    },
    'The workspace of the signed-in user.',
  ),
  WorkspacePatch: WORKSPACE_PATCH_SCHEMA,
  Job: obj(
    {
      id: { type: 'string', pattern: idPattern('job_') },
      kind: { type: 'string', enum: [...JOB_KINDS] },
      status: { type: 'string', enum: [...JOB_STATUSES], description: '`queued`, then `running`, then `succeeded` or `failed`.' },
      progress: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 }, description: 'What it has done so far: for delete_test_data, `objects` and `events` deleted.', examples: [{ objects: 1200, events: 3400 }] },
      error: { type: ['string', 'null'], description: 'Why it failed; null unless failed.' },
      created_by: { $ref: '#/components/schemas/Actor' },
      created_at: time('When it was asked for.'),
      started_at: time('When a process first took it; null while queued.', true),
      finished_at: time('When it succeeded or failed; null until then.', true),
    },
    'Work that runs off the request path, polled by its id.',
  ),
  ScopeAllowedList: scopeList('allowed', "Whether the workspace's plan allows a key to hold it."),
  UsageList: obj({
    data: {
      type: 'array',
      items: obj(
        {
          start: time("The hour's first instant (UTC)."),
          key_id: { type: 'string', pattern: idPattern('key_') },
          requests: int(0),
          rate_limited: { type: 'integer', minimum: 0, description: 'Refused by the key\'s rate limit (429).' },
          client_errors: { type: 'integer', minimum: 0, description: 'Other 4xx answers.' },
          server_errors: { type: 'integer', minimum: 0, description: '5xx answers.' },
        },
        "One key's answers in one hour.",
      ),
    },
  }),
  Actor: actor,
  Key: obj(keyProperties, 'An API key, never its token or its hash.'),
  KeyWithToken: obj({ ...keyProperties, token: { type: 'string', pattern: `^${TOKEN_PATTERN}$`, description: 'The token, shown only in this answer: keep it. Its last 6 characters are a checksum of the rest.' } }, 'A new API key and its token.'),
  KeyCreate: KEY_CREATE_SCHEMA,
  KeyRoll: KEY_ROLL_SCHEMA,
  KeyPatch: KEY_PATCH_SCHEMA,
  RolledKey: obj(
    {
      ...keyProperties,
      token: { type: 'string', pattern: `^${TOKEN_PATTERN}$`, description: 'The new token, shown only in this answer: keep it.' },
      replaces: obj({ id: { type: 'string', pattern: idPattern('key_') }, revoked_at: time('When the old key is refused from: now plus overlap_seconds.') }, 'The old key.'),
    },
    'The new key of a roll, its token, and the key it replaces.',
  ),
  KeyList: pageSchema(ref('Key'), 'A page of keys, newest first.'),
  KeyRequest: obj(
    {
      at: time('When it arrived.'),
      method: { type: 'string', examples: ['GET'] },
      route: { type: 'string', description: 'The route as the OpenAPI document writes it, or `unmatched` for a path no route serves.', examples: ['/v1/deals/{id}'] },
      path: { type: 'string', description: 'The path asked for, without the query string.', examples: ['/v1/deals/deal_01jd2'] },
      status: { type: 'integer', minimum: 100, maximum: 599 },
      error_code: { ...nullableStr, description: 'The `code` of the problem answered; null for a success.', examples: ['not_found'] },
      duration_ms: { type: 'number', minimum: 0, description: 'From its arrival to its answer, to the microsecond.' },
      request_id: { type: 'string', description: 'Its X-Request-Id, as answered (and as the server logged it).' },
      ip: { type: 'string', description: 'The client address (as TRUST_PROXY says).' },
    },
    'One request made with the key.',
  ),
  KeyRequestList: pageSchema(ref('KeyRequest'), "A page of the key's requests, newest first."),
  KeyRequestSummary: obj(
    Object.fromEntries(
      (['last_24_hours', 'last_7_days'] as const).map((window) => [
        window,
        obj(
          {
            since: time('The first hour counted (UTC): the window is whole hours, the current one included.'),
            errors: int(0),
            by: {
              type: 'array',
              items: obj({ status: { type: 'integer', minimum: 400, maximum: 599 }, error_code: { ...nullableStr, description: 'null for an error answered without a code.' }, count: int(1) }),
              description: 'The errors by status and code, most frequent first.',
            },
          },
          window === 'last_24_hours' ? 'The last 24 hours.' : 'The last 7 days.',
        ),
      ]),
    ),
    "The key's errors (answers with status 400 and up) counted by status and error code.",
  ),
  AuditEntry: obj(
    {
      id: { type: 'string', pattern: idPattern('aud_') },
      at: time('When it happened.'),
      actor: ref('Actor'),
      action: { type: 'string', enum: [...AUDIT_ACTIONS] },
      target: obj({ type: str, id: str }, 'What it happened to.'),
      ip: { ...nullableStr, description: "The client's address; null for an operator's command or the service." },
      details: { type: 'object', description: 'What changed (never a token, password or secret).' },
    },
    'One change, recorded in the same transaction as the change itself.',
  ),
  AuditList: pageSchema(ref('AuditEntry'), 'A page of the audit log, newest first.'),
  RecentDeliveries: obj(
    {
      data: {
        type: 'array',
        items: obj({ webhook_id: str, deliveries: { type: 'array', maxItems: 5, items: ref('Delivery'), description: 'Its latest deliveries, newest first (at most 5).' } }),
        description: 'One entry per subscription asked for, in the order asked.',
      },
    },
    "Each subscription's latest deliveries.",
  ),
};
