import type { ValidateFunction } from 'ajv';
import { asNumber } from '../db/decode.js';
import type { Knex } from 'knex';
import { transaction } from '../db/dialects/index.js';
import type { Redis } from '../db/redis.js';
import { newId } from '../common/ids.js';
import { compileOnUse, createSchemaAjv } from '../kernel/model/index.js';
import { iso } from '../db/iso.js';
import { OPERATOR, recordAudit } from '../audit/log.js';
import type { Actor, AuditContext } from '../common/who.js';
import { ApiError } from '../common/errors.js';
import { keysetPage } from '../kernel/query/index.js';
import { markRevoked, type Propagation } from './revocation.js';
import { type Plan, writes } from './plans.js';
import { displayPrefix, generateToken, hashToken } from './tokens.js';
import { allowlistProblems, MAX_ALLOWED_IPS } from './allowlist.js';
import { noteAuthChange } from '../db/changes.js';
import { FIRST_VERSION } from '../kernel/model/index.js';
import { isLiveWorkspace, liveWorkspaceOf, type Mode, MODES, modeOf, testWorkspaceOf, workspaceIn } from '../common/modes.js';

/** A refused operator request: the message is the reason, shown as is. */
export class RefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedError';
  }
}

export const DEFAULT_RATE_LIMIT = 60;
export const MAX_RATE_LIMIT = 6000;
/** The longest a key may be made to live, and a workspace's longest policy: ten years. */
export const MAX_KEY_LIFETIME_DAYS = 3650;
const DAY_MS = 24 * 3600 * 1000;

const ajv = createSchemaAjv();

const validateWorkspace = compileOnUse(ajv, {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'plan'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, plan: { type: 'string', minLength: 1, maxLength: 32 } },
});

/** A key's allowlist as the internal API takes it: each entry is checked further by auth/allowlist.ts. */
const ALLOWED_IPS_SCHEMA = {
  type: ['array', 'null'],
  maxItems: MAX_ALLOWED_IPS,
  uniqueItems: true,
  items: { type: 'string', minLength: 1, maxLength: 49 },
  description: `Up to ${MAX_ALLOWED_IPS} IPv4 or IPv6 addresses or CIDR ranges (203.0.113.7, 198.51.100.0/24, 2001:db8::/32): a request from any other address is 403 ip_not_allowed. Null or left out: anywhere.`,
  examples: [['203.0.113.7', '2001:db8::/32']],
} as const;

/** A key's API version: a date the service has (docs/reference.md section 19). */
const API_VERSION_SCHEMA = {
  type: 'string',
  pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
  description: 'The API version the key is pinned to (YYYY-MM-DD, one of GET /v1/versions): its requests without an Api-Version header are answered in it. Left out on creation: the latest.',
  examples: ['2026-11-21'],
} as const;

/** PATCH /internal/v1/keys/{id}. */
export const KEY_PATCH_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { allowed_ips: ALLOWED_IPS_SCHEMA, api_version: API_VERSION_SCHEMA },
} as const;

/** A new key as the internal API takes it: its workspace is the caller's. */
export const KEY_CREATE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'scopes'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    scopes: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 64 }, description: 'From GET /scopes; a read_only plan allows no write: scope.' },
    rate_limit: { type: 'integer', minimum: 1, maximum: MAX_RATE_LIMIT, default: DEFAULT_RATE_LIMIT, description: `Requests a minute (default ${DEFAULT_RATE_LIMIT}).` },
    expires_in_days: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_KEY_LIFETIME_DAYS,
      description: `The key expires this many days (of 24 hours) from now. Left out, it lives until revoked, unless the workspace's max_key_lifetime_days asks for it (1 to that many).`,
    },
    allowed_ips: ALLOWED_IPS_SCHEMA,
    api_version: API_VERSION_SCHEMA,
    mode: {
      type: 'string',
      enum: [...MODES],
      default: 'live',
      description: '`live` (the default) or `test`: a test key (`wsk_test_...`) reads and writes only test objects and events, a live key only live ones. The plan caps live and test keys apart.',
    },
  },
} as const;

/** PATCH /internal/v1/workspace: the workspace's key policy. */
export const WORKSPACE_PATCH_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    max_key_lifetime_days: {
      type: ['integer', 'null'],
      minimum: 1,
      maximum: MAX_KEY_LIFETIME_DAYS,
      description: 'Every key made from now on must expire within this many days (keys already made keep their expiry); null lifts the limit.',
    },
  },
} as const;

/** What createKey() checks, whatever the door: the same, naming the workspace. */
const validateKey = compileOnUse(ajv, {
  ...KEY_CREATE_SCHEMA,
  required: ['workspace', ...KEY_CREATE_SCHEMA.required],
  properties: { workspace: { type: 'string', minLength: 1, maxLength: 64 }, ...KEY_CREATE_SCHEMA.properties },
});


/** A request checked the same way for every door: 422 naming the first field that is wrong (ajv's message). */
function refuseInvalid(validate: ValidateFunction, input: unknown): void {
  if (validate(input)) return;
  const first = validate.errors?.[0];
  const pointer = first?.instancePath || '';
  const where = pointer ? pointer.slice(1).replace(/\//g, '.') : 'input';
  const message = first?.message ?? 'is invalid';
  throw new ApiError('validation_failed', `${where === 'rate_limit' ? 'rate limit' : where} ${message}`, { errors: [{ pointer: pointer || '/', message }] });
}

export async function findPlan(db: Knex, name: string): Promise<Plan | undefined> {
  return (await db('plans').first('*').where('name', name)) as Plan | undefined;
}

export interface WorkspaceRecord {
  id: string;
  name: string;
  plan: string;
  created_at: string;
}

export async function createWorkspace(db: Knex, input: { name: string; plan: string }, now = Date.now()): Promise<WorkspaceRecord> {
  refuseInvalid(validateWorkspace(), input);
  const plan = await findPlan(db, input.plan);
  if (!plan) {
    const known = (await db('plans').pluck('name')) as string[];
    throw new RefusedError(`unknown plan "${input.plan}" (plans: ${known.join(', ')})`);
  }
  const id = newId('ws_');
  // With its test twin (common/modes.ts), which keeps the same plan and key policy.
  await db('workspaces').insert([
    { id, name: input.name, plan: plan.name, created_at: now, updated_at: now },
    { id: testWorkspaceOf(id), name: input.name, plan: plan.name, created_at: now, updated_at: now, test_of: id },
  ]);
  return { id, name: input.name, plan: plan.name, created_at: new Date(now).toISOString() };
}

export interface KeyInput {
  workspace: string;
  name: string;
  scopes: string[];
  rate_limit?: number;
  expires_in_days?: number;
  allowed_ips?: string[] | null;
  api_version?: string;
  /** Live (the default) or test (common/modes.ts). */
  mode?: Mode;
}

/**
 * What keys are made from beside their input: the scopes there are, and the API versions (a
 * plain list of scopes: the service's first version alone, for callers from before versions).
 */
export type KeyCatalog = readonly string[] | { scopes: readonly string[]; versions: ApiVersionList };

/** The API versions a key may be pinned to, and the one a new key gets. */
export interface ApiVersionList {
  readonly known: readonly string[];
  readonly latest: string;
}

const FIRST_ONLY: ApiVersionList = { known: [FIRST_VERSION], latest: FIRST_VERSION };

const scopesOf = (catalog: KeyCatalog) => ('scopes' in catalog ? catalog.scopes : (catalog as readonly string[]));
const versionsOf = (catalog: KeyCatalog) => ('versions' in catalog ? catalog.versions : FIRST_ONLY);

/** 422 naming /api_version when the service has no such version. */
function checkVersion(versions: ApiVersionList, version: string): void {
  if (versions.known.includes(version)) return;
  const message = `must be one of this API's versions: ${versions.known.join(', ')}`;
  throw new ApiError('validation_failed', `api_version ${message}`, { errors: [{ pointer: '/api_version', message }] });
}

export interface KeyRecord {
  id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  scopes: string[];
  rate_limit: number;
  /** The API version it is pinned to. */
  api_version: string;
  created_at: string;
  /** Who made it; null for a key made before this was recorded. */
  created_by: Actor | null;
  last_used_at: string | null;
  /** When it stops working; null: it lives until revoked. */
  expires_at: string | null;
  /** The addresses and ranges it may be used from; null: anywhere. */
  allowed_ips: string[] | null;
  revoked_at: string | null;
  /** Which objects and events it reaches: live or test (its row is then in the workspace's test twin; workspace_id is the workspace's all the same). */
  mode: Mode;
}


/** 422 naming /expires_in_days when the workspace's max_key_lifetime_days refuses it (none given, or more). */
function checkLifetime(workspace: { max_key_lifetime_days: number | null }, days: number | undefined): void {
  const lifetime = workspace.max_key_lifetime_days == null ? null : asNumber(workspace.max_key_lifetime_days);
  if (lifetime !== null && (days === undefined || days > lifetime)) {
    const message = `must be from 1 to ${lifetime}: this workspace's keys must expire within ${lifetime} ${lifetime === 1 ? 'day' : 'days'} (max_key_lifetime_days)`;
    throw new ApiError('validation_failed', `expires_in_days ${message}`, { errors: [{ pointer: '/expires_in_days', message }] });
  }
}

/** Writes a new key (its token's hash only) in `trx`: the record, and the token to show once. */
async function insertKey(trx: Knex.Transaction, workspaceId: string, key: { name: string; scopes: string[]; rate_limit: number; api_version: string; expires_in_days: number | undefined; allowed_ips: string[] | null }, actor: Actor, now: number): Promise<{ record: KeyRecord; token: string }> {
  const mode = modeOf(workspaceId);
  const token = generateToken(mode);
  const expiresAt = key.expires_in_days === undefined ? null : now + key.expires_in_days * DAY_MS;
  const record: KeyRecord = {
    id: newId('key_'),
    workspace_id: liveWorkspaceOf(workspaceId),
    name: key.name,
    prefix: displayPrefix(token),
    scopes: key.scopes,
    rate_limit: key.rate_limit,
    api_version: key.api_version,
    created_at: new Date(now).toISOString(),
    created_by: actor,
    last_used_at: null,
    expires_at: expiresAt === null ? null : new Date(expiresAt).toISOString(),
    allowed_ips: key.allowed_ips,
    revoked_at: null,
    mode,
  };
  await trx('api_keys').insert({
    id: record.id,
    workspace_id: workspaceId,
    name: record.name,
    prefix: record.prefix,
    token_hash: hashToken(token),
    scopes: JSON.stringify(key.scopes),
    rate_limit: key.rate_limit,
    api_version: key.api_version,
    created_at: now,
    created_by: JSON.stringify(actor),
    expires_at: expiresAt,
    allowed_ips: key.allowed_ips === null ? null : JSON.stringify(key.allowed_ips),
  });
  return { record, token };
}

/** What a new key must keep to: its workspace's plan and key lifetime. */
type KeyPolicy = { id: string; plan: string; max_key_lifetime_days: number | null };
const KEY_POLICY = ['plan', 'max_key_lifetime_days'] as const;

/**
 * The workspace's row, locked for the rest of the transaction: the first lock of every change to
 * what its keys may do. Such changes lock in one order, the workspace, then the key, then
 * auth_changes, then the audit row (whose foreign key shares the workspace's lock): a revocation
 * that locked its key first and a roll that locked the workspace first waited on each other, and
 * 8 concurrent flows deadlocked 77 times on PostgreSQL. A test twin's changes lock its live
 * workspace first, as its audit rows name the live one.
 */
export async function lockWorkspace<Row extends { id: string } = { id: string }>(trx: Knex.Transaction, workspaceId: string, columns: ReadonlyArray<Exclude<keyof Row, 'id'> & string> = []): Promise<Row | undefined> {
  // A test twin's live workspace first (common/modes.ts): a plan change locks the live row, then the twin's.
  const live = liveWorkspaceOf(workspaceId);
  if (live !== workspaceId) await trx('workspaces').first('id').where('id', live).forUpdate();
  return (await trx('workspaces').first(['id', ...columns]).where('id', workspaceId).forUpdate()) as Row | undefined;
}

/**
 * Creates a key if the workspace's plan allows it: API access at all, the scopes (a read_only
 * plan refuses every write:, delete: and admin: scope), and the number of live keys. The one
 * function behind every door (the internal API, the admin command), so a rule changed here
 * changes both. The token is returned here and never again; only its hash is stored. The
 * audit entry commits with the key.
 */
export async function createKey(db: Knex, keyCatalog: KeyCatalog, input: KeyInput, context: AuditContext = OPERATOR, now = Date.now()): Promise<KeyRecord & { token: string }> {
  refuseInvalid(validateKey(), input);
  const scopes = [...new Set(input.scopes)];
  const rateLimit = input.rate_limit ?? DEFAULT_RATE_LIMIT;
  const catalog = scopesOf(keyCatalog);
  const versions = versionsOf(keyCatalog);
  const apiVersion = input.api_version ?? versions.latest;
  checkVersion(versions, apiVersion);
  return transaction(db, async (trx) => {
    // Locked, so two concurrent creations cannot both pass the cap; a test key's in its workspace's test twin, which has its own cap.
    const workspace = isLiveWorkspace(input.workspace) ? await lockWorkspace<KeyPolicy>(trx, workspaceIn(input.workspace, input.mode ?? 'live'), KEY_POLICY) : undefined;
    if (!workspace) throw new ApiError('not_found', `unknown workspace "${input.workspace}"`);
    checkLifetime(workspace, input.expires_in_days);
    const plan = (await findPlan(trx, workspace.plan)) as Plan;
    if (plan.api_access === 'none') throw new ApiError('plan_forbids_scope', `plan "${plan.name}" has no API access: it creates no keys`);
    if (plan.api_access === 'read_only') {
      const refused = scopes.filter(writes);
      if (refused.length > 0) throw new ApiError('plan_forbids_scope', `plan "${plan.name}" is read_only: scope ${refused.join(', ')} is not allowed (no write:, delete: or admin: scopes)`);
    }
    const unknown = scopes.filter((s) => !catalog.includes(s));
    if (unknown.length > 0) {
      throw new ApiError('validation_failed', `unknown scope ${unknown.join(', ')} (scopes: ${catalog.join(' ')})`, {
        errors: unknown.map((s) => ({ pointer: `/scopes/${input.scopes.indexOf(s)}`, message: `${s} is not a scope of the catalog` })),
      });
    }
    const live = await liveKeys(trx, workspace.id, now);
    if (live >= plan.max_keys) {
      throw new ApiError('key_limit_reached', `plan "${plan.name}" allows ${plan.max_keys} live keys and the workspace has ${live}: revoke one first`);
    }
    const { record, token } = await insertKey(trx, workspace.id, { name: input.name, scopes, rate_limit: rateLimit, api_version: apiVersion, expires_in_days: input.expires_in_days, allowed_ips: allowedIps(input.allowed_ips) }, context.actor, now);
    await recordAudit(trx, context, { workspaceId: workspace.id, action: 'key.created', target: { type: 'api_key', id: record.id }, details: { name: record.name, prefix: record.prefix, scopes, rate_limit: rateLimit, api_version: apiVersion, expires_at: record.expires_at, allowed_ips: record.allowed_ips } }, now);
    return { ...record, token };
  });
}

const KEY_COLUMNS = ['id', 'workspace_id', 'name', 'prefix', 'scopes', 'rate_limit', 'api_version', 'created_at', 'created_by', 'last_used_at', 'expires_at', 'allowed_ips', 'revoked_at'];

/** A key's allowlist as given (undefined or null: anywhere), each entry checked: 422 naming the entry. */
function allowedIps(entries: string[] | null | undefined): string[] | null {
  if (entries == null) return null;
  const problems = allowlistProblems(entries);
  if (problems.length > 0) {
    throw new ApiError('validation_failed', `allowed_ips/${problems[0]?.index}: ${problems[0]?.message}`, { errors: problems.map((p) => ({ pointer: `/allowed_ips/${p.index}`, message: p.message })) });
  }
  return [...entries];
}

/**
 * Narrows a query on api_keys (`table` as it is named there) to live keys: neither revoked nor
 * expired by `now`. A rolled key is live until its overlap ends.
 */
export function whereLive(q: Knex.QueryBuilder, now: number, table = 'api_keys'): Knex.QueryBuilder {
  return q.andWhere((w) => w.whereNull(`${table}.revoked_at`).orWhere(`${table}.revoked_at`, '>', now)).andWhere((w) => w.whereNull(`${table}.expires_at`).orWhere(`${table}.expires_at`, '>', now));
}

/** How many live keys the workspace has: what the plan's max_keys counts. */
export async function liveKeys(db: Knex, workspaceId: string, now: number): Promise<number> {
  const row = (await whereLive(db('api_keys').count({ n: '*' }).where('workspace_id', workspaceId), now).first()) as { n: number | string } | undefined;
  return asNumber(row?.n ?? 0);
}

function toKey(r: Record<string, unknown>): KeyRecord {
  return {
    id: String(r.id),
    workspace_id: liveWorkspaceOf(String(r.workspace_id)),
    name: String(r.name),
    prefix: String(r.prefix),
    scopes: JSON.parse(String(r.scopes)) as string[],
    rate_limit: asNumber(r.rate_limit),
    api_version: String(r.api_version),
    created_at: iso(r.created_at) as string,
    created_by: r.created_by == null ? null : (JSON.parse(String(r.created_by)) as Actor),
    last_used_at: iso(r.last_used_at),
    expires_at: iso(r.expires_at),
    allowed_ips: r.allowed_ips == null ? null : (JSON.parse(String(r.allowed_ips)) as string[]),
    revoked_at: iso(r.revoked_at),
    mode: modeOf(String(r.workspace_id)),
  };
}

/** A key as the administration area shows it (docs/reference.md section 10): its workspace is the caller's own. */
export function keyView(key: KeyRecord) {
  const { id, name, prefix, mode, scopes, rate_limit, api_version, created_at, created_by, last_used_at, expires_at, allowed_ips, revoked_at } = key;
  return { id, name, prefix, mode, scopes, rate_limit, api_version, created_at, created_by, last_used_at, expires_at, allowed_ips, revoked_at };
}

/** A page of a workspace's keys, newest first, without tokens or hashes. */
export function listKeyPage(db: Knex, workspaceId: string, query: { limit: number; cursor?: string }) {
  return keysetPage(db('api_keys').select(KEY_COLUMNS).where('workspace_id', workspaceId), query, { resource: 'key', sort: '-created_at' }, (r: Record<string, unknown>) => keyView(toKey(r)));
}

/** Every key of a live workspace, live and test, oldest first: what the admin command lists. */
export async function listKeys(db: Knex, workspaceId: string): Promise<KeyRecord[]> {
  const workspace = isLiveWorkspace(workspaceId) ? await db('workspaces').first('id').where('id', workspaceId) : undefined;
  if (!workspace) throw new RefusedError(`unknown workspace "${workspaceId}"`);
  const rows = (await db('api_keys').select(KEY_COLUMNS).whereIn('workspace_id', [workspaceId, testWorkspaceOf(workspaceId)]).orderBy([{ column: 'created_at' }, { column: 'id' }])) as Record<string, unknown>[];
  return rows.map(toKey);
}

/**
 * Revokes a key: committed in the database first (that alone ends it), with its audit entry,
 * then announced through Redis so that every process refuses it from its next request on.
 * `propagation` says which. With `workspaceId`, a key of another workspace is not found.
 */
export async function revokeKey(
  db: Knex,
  redis: Redis | undefined,
  redisPrefix: string,
  keyId: string,
  options: { workspaceId?: string; context?: AuditContext; now?: number } = {},
): Promise<{ id: string; revoked_at: string; already: boolean; propagation?: Propagation }> {
  const { context = OPERATOR, now = Date.now() } = options;
  const unknown = () => new ApiError('not_found', options.workspaceId === undefined ? `unknown key "${keyId}"` : `No key with id ${keyId}.`);
  const result = await transaction(db, async (trx) => {
    // The operator's command names the key alone: its workspace is read first, to lock in order (lockWorkspace).
    const workspaceId = options.workspaceId ?? ((await trx('api_keys').first('workspace_id').where('id', keyId)) as { workspace_id: string } | undefined)?.workspace_id;
    if (workspaceId === undefined || !(await lockWorkspace(trx, workspaceId))) throw unknown();
    const row = (await trx('api_keys').first('id', 'workspace_id', 'name', 'prefix', 'revoked_at').where({ id: keyId, workspace_id: workspaceId }).forUpdate()) as { id: string; workspace_id: string; name: string; prefix: string; revoked_at: number | null } | undefined;
    if (!row) throw unknown();
    // A rolled key still in its overlap (revoked_at ahead) is revoked now.
    if (row.revoked_at != null && asNumber(row.revoked_at) <= now) return { id: row.id, revoked_at: iso(row.revoked_at) as string, already: true };
    await trx('api_keys').update({ revoked_at: now }).where('id', keyId);
    await noteAuthChange(trx);
    await recordAudit(trx, context, { workspaceId: row.workspace_id, action: 'key.revoked', target: { type: 'api_key', id: row.id }, details: { name: row.name, prefix: row.prefix } }, now);
    return { id: row.id, revoked_at: new Date(now).toISOString(), already: false };
  });
  if (result.already) return result;
  return { ...result, propagation: await markRevoked(redis, redisPrefix, keyId) };
}

/** The longest overlap of a roll: 7 days. */
export const MAX_ROLL_OVERLAP_SECONDS = 7 * 24 * 3600;

/** POST /internal/v1/keys/{id}/roll. */
export const KEY_ROLL_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    overlap_seconds: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_ROLL_OVERLAP_SECONDS,
      default: 0,
      description: 'How long the old token keeps working, 0 (default: refused at once) to 604800 (7 days).',
    },
    expires_in_days: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_KEY_LIFETIME_DAYS,
      description: "The new key's expiry. Left out: as long as the old key was made to live (rounded up to whole days), or none if it had none, within the workspace's max_key_lifetime_days.",
    },
  },
} as const;

/**
 * Rolls a live key: a new key (new token) with its name, scopes and rate limit, and the old
 * one refused like a revoked one once `overlap_seconds` have passed (at once with 0). One
 * transaction, audited as key.rolled naming both; with no overlap the revocation is announced
 * through Redis as revokeKey() does. With an overlap, every process learns the old key's end
 * when its key cache next reloads it (within a second; at once on SQLite), and refuses it
 * from that moment on.
 */
export async function rollKey(
  db: Knex,
  redis: Redis | undefined,
  redisPrefix: string,
  keyId: string,
  input: { overlap_seconds?: number; expires_in_days?: number },
  options: { workspaceId: string; context: AuditContext; now: number },
): Promise<KeyRecord & { token: string; replaces: { id: string; revoked_at: string } }> {
  const { workspaceId, context, now } = options;
  const overlap = input.overlap_seconds ?? 0;
  const rolled = await transaction(db, async (trx) => {
    const workspace = (await lockWorkspace<KeyPolicy>(trx, workspaceId, KEY_POLICY))!;
    const plan = (await findPlan(trx, workspace.plan)) as Plan;
    if (plan.api_access === 'none') throw new ApiError('plan_forbids_scope', `plan "${plan.name}" has no API access: it makes no keys`);
    const old = (await trx('api_keys').first('id', 'name', 'prefix', 'scopes', 'rate_limit', 'api_version', 'created_at', 'expires_at', 'allowed_ips', 'revoked_at').where({ id: keyId, workspace_id: workspaceId }).forUpdate()) as
      | { id: string; name: string; prefix: string; scopes: string; rate_limit: number; api_version: string; created_at: number; expires_at: number | null; allowed_ips: string | null; revoked_at: number | null }
      | undefined;
    if (!old) throw new ApiError('not_found', `No key with id ${keyId}.`);
    if (old.revoked_at != null) throw new ApiError('key_not_live', asNumber(old.revoked_at) > now ? `Key ${keyId} was already rolled: roll the key that replaced it.` : `Key ${keyId} is revoked: make a new key instead.`);
    if (old.expires_at != null && asNumber(old.expires_at) <= now) throw new ApiError('key_not_live', `Key ${keyId} has expired: make a new key instead.`);
    const lived = old.expires_at == null ? undefined : Math.ceil((asNumber(old.expires_at) - asNumber(old.created_at)) / DAY_MS);
    const days = input.expires_in_days ?? (lived === undefined ? undefined : Math.min(Math.max(lived, 1), MAX_KEY_LIFETIME_DAYS));
    checkLifetime(workspace, days);
    const scopes = JSON.parse(old.scopes) as string[];
    const { record, token } = await insertKey(trx, workspaceId, { name: old.name, scopes, rate_limit: asNumber(old.rate_limit), api_version: old.api_version, expires_in_days: days, allowed_ips: old.allowed_ips == null ? null : (JSON.parse(old.allowed_ips) as string[]) }, context.actor, now);
    const ends = now + overlap * 1000;
    await trx('api_keys').update({ revoked_at: ends }).where('id', old.id);
    await noteAuthChange(trx);
    const replaces = { id: old.id, revoked_at: new Date(ends).toISOString() };
    await recordAudit(
      trx,
      context,
      { workspaceId, action: 'key.rolled', target: { type: 'api_key', id: old.id }, details: { name: old.name, prefix: old.prefix, overlap_seconds: overlap, old_key_refused_from: replaces.revoked_at, new_key: { id: record.id, prefix: record.prefix, expires_at: record.expires_at } } },
      now,
    );
    return { ...record, token, replaces };
  });
  if (overlap === 0) await markRevoked(redis, redisPrefix, keyId);
  return rolled;
}

/**
 * Changes a key's allowlist or its API version (PATCH /internal/v1/keys/{id}): every process
 * applies it within a second (at once on SQLite), as it does a plan change. Audited as
 * key.updated (the allowlist) and key.version_changed (the version), each only when it changes.
 */
export async function updateKey(
  db: Knex,
  keyId: string,
  input: { allowed_ips?: string[] | null; api_version?: string },
  options: { workspaceId: string; context: AuditContext; now: number; versions?: ApiVersionList },
): Promise<KeyRecord> {
  const { workspaceId, context, now } = options;
  const allowed = allowedIps(input.allowed_ips);
  if (input.api_version !== undefined) checkVersion(options.versions ?? FIRST_ONLY, input.api_version);
  return transaction(db, async (trx) => {
    await lockWorkspace(trx, workspaceId);
    const row = (await trx('api_keys').first(KEY_COLUMNS).where({ id: keyId, workspace_id: workspaceId }).forUpdate()) as Record<string, unknown> | undefined;
    if (!row) throw new ApiError('not_found', `No key with id ${keyId}.`);
    const before = toKey(row);
    const ipsChange = input.allowed_ips !== undefined && JSON.stringify(before.allowed_ips) !== JSON.stringify(allowed);
    const versionChange = input.api_version !== undefined && input.api_version !== before.api_version;
    if (!ipsChange && !versionChange) return before;
    const after = { ...before, ...(ipsChange ? { allowed_ips: allowed } : {}), ...(versionChange ? { api_version: input.api_version! } : {}) };
    await trx('api_keys')
      .update({ ...(ipsChange ? { allowed_ips: allowed === null ? null : JSON.stringify(allowed) } : {}), ...(versionChange ? { api_version: after.api_version } : {}) })
      .where('id', keyId);
    // In the lock order: the workspace, the key, auth_changes, then the audit rows.
    await noteAuthChange(trx);
    const audit = (action: 'key.updated' | 'key.version_changed', details: Record<string, unknown>) => recordAudit(trx, context, { workspaceId, action, target: { type: 'api_key', id: keyId }, details: { name: before.name, prefix: before.prefix, ...details } }, now);
    if (ipsChange) await audit('key.updated', { allowed_ips: { from: before.allowed_ips, to: allowed } });
    if (versionChange) await audit('key.version_changed', { api_version: { from: before.api_version, to: after.api_version } });
    return after;
  });
}
