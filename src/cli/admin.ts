import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { createKey, createWorkspace, listKeys, MAX_KEY_LIFETIME_DAYS, RefusedError, revokeKey } from '../auth/keys.js';
import { scopeCatalog } from '../auth/scopes.js';
import { KEY_CACHE_MS } from '../auth/lookup.js';
import { migrate } from '../boot.js';
import { loadConfig } from '../common/config.js';
import { loadRegistry } from '../kernel/registry/index.js';
import { createUser, disableUser, listUsers, resetPassword } from '../admin/users.js';
import { listWorkspaces, setKeyLifetime, setPlan } from '../admin/workspaces.js';
import { ApiError } from '../common/errors.js';
import { createDeps, createLogger } from '../deps.js';
import { isUnavailable } from '../db/dialect.js';
import { runMain } from '../startup.js';
import { Versions } from '../versions/index.js';
import { resealAll } from '../secrets/stored.js';

class UsageError extends Error {}

function required(value: string | undefined, flag: string): string {
  if (value === undefined) throw new UsageError(`missing --${flag}`);
  if (value.trim() === '') throw new UsageError(`--${flag} is empty: give it a value`);
  return value;
}

/** A whole number given as a flag (--rate-limit, --expires-in-days). */
function parseInteger(raw: string | undefined): number | string | undefined {
  if (raw === undefined) return undefined;
  // Anything but a plain integer goes through as text, so validation names the problem.
  return /^-?\d+$/.test(raw) ? Number(raw) : raw;
}

/** A key's state as `key list` says it: revoked, expired, expiring, or live. */
function keyState(k: { revoked_at: string | null; expires_at: string | null }): string {
  if (k.revoked_at) return `revoked ${k.revoked_at}`;
  if (!k.expires_at) return 'live';
  return Date.parse(k.expires_at) <= Date.now() ? `expired ${k.expires_at}` : `live, expires ${k.expires_at}`;
}

/** What a command gets: its flags and arguments, the service's pieces, and how to print its result. */
interface CommandInput {
  values: Record<string, string | boolean | undefined> & { name?: string; plan?: string; workspace?: string; email?: string; role?: string; scopes?: string; 'rate-limit'?: string; 'expires-in-days'?: string; 'api-version'?: string };
  arg: string | undefined;
  arg2: string | undefined;
  deps: ReturnType<typeof createDeps>;
  config: ReturnType<typeof loadConfig>;
  /** One JSON object with --json, else the text. */
  print(asJson: unknown, text: string): void;
}

/** The commands, each said once: the usage text and the dispatch are both read from here. */
const COMMANDS: Record<string, { usage: string; run(input: CommandInput): Promise<void> }> = {
  'workspace create': {
    usage: '--name NAME --plan PLAN',
    async run({ values, deps, print }) {
      const ws = await createWorkspace(deps.db, { name: required(values.name, 'name'), plan: required(values.plan, 'plan') });
      print(ws, `created workspace ${ws.id} (${ws.name}, plan ${ws.plan})`);
    },
  },
  'workspace list': {
    usage: '',
    async run({ deps, print }) {
      const workspaces = await listWorkspaces(deps.db);
      print({ data: workspaces }, workspaces.length === 0 ? 'no workspaces' : workspaces.map((w) => `${w.id}  ${w.plan}  ${w.live_keys} live keys  ${w.users} users  ${w.name}`).join('\n'));
    },
  },
  'workspace set-plan': {
    usage: 'WS_ID PLAN',
    async run({ arg, arg2, deps, print }) {
      if (!arg || !arg2) throw new UsageError('workspace set-plan takes WS_ID and PLAN');
      const result = await setPlan(deps.db, arg, arg2);
      print(result, result.previous === result.plan ? `workspace ${result.id} is already on plan ${result.plan}` : `workspace ${result.id}: plan ${result.previous} -> ${result.plan}`);
    },
  },
  'workspace set-key-lifetime': {
    usage: 'WS_ID DAYS|none',
    async run({ arg, arg2, deps, print }) {
      if (!arg || !arg2) throw new UsageError('workspace set-key-lifetime takes WS_ID and a number of days (1-3650), or none');
      const days = arg2 === 'none' ? null : /^\d+$/.test(arg2) && Number(arg2) >= 1 && Number(arg2) <= MAX_KEY_LIFETIME_DAYS ? Number(arg2) : undefined;
      if (days === undefined) throw new UsageError(`DAYS must be a whole number from 1 to ${MAX_KEY_LIFETIME_DAYS}, or none (got "${arg2}")`);
      const result = await setKeyLifetime(deps.db, arg, days);
      const say = (d: number | null) => (d === null ? 'no limit' : `${d} days`);
      print({ id: arg, max_key_lifetime_days: result.to, previous: result.from }, result.from === result.to ? `workspace ${arg}: key lifetime already ${say(result.to)}` : `workspace ${arg}: key lifetime ${say(result.from)} -> ${say(result.to)}`);
    },
  },
  'key create': {
    usage: '--workspace WS_ID --name NAME --scopes s1,s2 [--mode live|test] [--rate-limit N] [--expires-in-days N] [--api-version YYYY-MM-DD]',
    async run({ values, deps, config, print }) {
      const registry = await loadRegistry(config.pluginsDir, { checkSchemas: false });
      const catalog = scopeCatalog(registry).map((s) => s.name);
      const scopes = required(values.scopes, 'scopes').split(',').map((s) => s.trim()).filter(Boolean);
      const input = {
        workspace: required(values.workspace, 'workspace'),
        name: required(values.name, 'name'),
        scopes,
        rate_limit: parseInteger(values['rate-limit']),
        expires_in_days: parseInteger(values['expires-in-days']),
        api_version: values['api-version'],
        mode: values.mode,
      };
      if (input.mode === undefined) delete input.mode;
      if (input.rate_limit === undefined) delete input.rate_limit;
      if (input.expires_in_days === undefined) delete input.expires_in_days;
      if (input.api_version === undefined) delete input.api_version;
      const key = await createKey(deps.db, { scopes: catalog, versions: new Versions(registry) }, input as Parameters<typeof createKey>[2]);
      const expiry = key.expires_at ? `, expires ${key.expires_at}` : '';
      print(key, `created ${key.mode === 'test' ? 'test ' : ''}key ${key.id} (${key.name}), scopes ${key.scopes.join(' ')}, ${key.rate_limit} requests/minute, API version ${key.api_version}${expiry}\n\n  ${key.token}\n\nThe token is shown only now; store it safely.`);
    },
  },
  'key list': {
    usage: '--workspace WS_ID',
    async run({ values, deps, print }) {
      const keys = await listKeys(deps.db, required(values.workspace, 'workspace'));
      print(
        { data: keys },
        keys.length === 0
          ? 'no keys'
          : keys.map((k) => `${k.id}  ${k.mode}  ${k.prefix}...  ${k.name}  ${k.rate_limit}/min  ${k.api_version}  ${keyState(k)}  ${k.scopes.join(' ')}`).join('\n'),
      );
    },
  },
  'key revoke': {
    usage: 'KEY_ID',
    async run({ arg, deps, config, print }) {
      if (!arg) throw new UsageError('missing KEY_ID');
      const result = await revokeKey(deps.db, deps.redis, config.redisPrefix, arg);
      const text = result.already ? `key ${result.id} was already revoked at ${result.revoked_at}` : `revoked key ${result.id}`;
      if (result.propagation === 'unreachable') {
        // The revocation is committed, so this is a success; say how the servers will learn of it.
        console.error(
          `Redis (REDIS_URL) could not be reached, so the revocation was not announced there. It is committed: ` +
            `every server refuses the key once its key cache expires (within ${KEY_CACHE_MS / 1000} s), and at once where it has no cache.`,
        );
      }
      print(result, text);
    },
  },
  'user create': {
    usage: '--workspace WS_ID --email E [--name N] [--role admin|viewer]',
    async run({ values, deps, print }) {
      const user = await createUser(deps.db, { workspace: required(values.workspace, 'workspace'), email: required(values.email, 'email'), ...(values.name ? { name: values.name } : {}), ...(values.role ? { role: values.role } : {}) });
      print(
        { id: user.id, email: user.email, name: user.name, role: user.role, workspace_id: user.workspace_id, password: user.password },
        `created user ${user.id} (${user.email}, ${user.role})\n\n  password: ${user.password}\n\nThe password is shown only now; the person signs in at /admin/ with it.`,
      );
    },
  },
  'user list': {
    usage: '--workspace WS_ID',
    async run({ values, deps, print }) {
      const users = await listUsers(deps.db, required(values.workspace, 'workspace'));
      print({ data: users }, users.length === 0 ? 'no users' : users.map((u) => `${u.id}  ${u.email}  ${u.role}  ${u.disabled_at ? `disabled ${u.disabled_at}` : 'active'}  ${u.name}`).join('\n'));
    },
  },
  'user reset-password': {
    usage: 'USER_ID',
    async run({ arg, deps, print }) {
      if (!arg) throw new UsageError('missing USER_ID');
      const result = await resetPassword(deps.db, arg);
      print(result, `new password for ${result.email} (${result.id}); every session of this user has ended\n\n  password: ${result.password}\n\nThe password is shown only now.`);
    },
  },
  'user disable': {
    usage: 'USER_ID',
    async run({ arg, deps, print }) {
      if (!arg) throw new UsageError('missing USER_ID');
      const result = await disableUser(deps.db, arg);
      print(result, result.already ? `user ${result.id} was already disabled at ${result.disabled_at}` : `disabled user ${result.id}; every session of this user has ended`);
    },
  },
  'secrets re-encrypt': {
    usage: '',
    async run({ deps, print }) {
      const rows = await resealAll(deps.db, deps.secrets);
      print(
        { reencrypted: rows, key: deps.secrets.newestId },
        `re-encrypted the webhook secrets of ${rows} subscription${rows === 1 ? '' : 's'} under key ${deps.secrets.newestId} (the first of SECRET_KEYS); every stored secret is now under it, so older keys can leave SECRET_KEYS`,
      );
    },
  },
};

const USAGE = `Usage:\n${Object.entries(COMMANDS)
  .map(([name, { usage }]) => `  npm run admin -- ${name}${usage ? ` ${usage}` : ''} [--json]`)
  .join('\n')}`;

const OPTIONS = {
  name: { type: 'string' },
  plan: { type: 'string' },
  workspace: { type: 'string' },
  email: { type: 'string' },
  role: { type: 'string' },
  scopes: { type: 'string' },
  'rate-limit': { type: 'string' },
  'api-version': { type: 'string' },
  'expires-in-days': { type: 'string' },
  mode: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
} as const;

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [noun, verb, arg, arg2] = positionals;
  if (values.help || !noun) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  const name = `${noun} ${verb ?? ''}`.trim();
  const command = COMMANDS[name];
  if (!command) {
    console.error(`unknown command "${name}"\n${USAGE}`);
    return 2;
  }
  const json = values.json;
  const print = (asJson: unknown, text: string) => console.log(json ? JSON.stringify(asJson) : text);

  // Logs go to stderr: with --json, stdout carries one JSON object and nothing else.
  // The plugins are loaded only by the one command that needs them (key create: the scope catalog).
  const config = loadConfig(process.env);
  const deps = createDeps(config, { log: createLogger('warn', pino.destination(2)) });
  try {
    await migrate(deps);
    await command.run({ values, arg, arg2, deps, config, print });
    return 0;
  } catch (err) {
    return refusal(err);
  } finally {
    await deps.close();
  }
}

/** What a command that failed exits with, having said why: 1 refused or the database away, 2 a usage mistake; anything else is a bug, thrown on. */
function refusal(err: unknown): number {
  if (err instanceof RefusedError || err instanceof ApiError) {
    console.error(`refused: ${err.message}`);
    return 1;
  }
  if (err instanceof UsageError) {
    console.error(`${err.message}\n${USAGE}`);
    return 2;
  }
  if (isUnavailable(err)) {
    console.error(`error: the database cannot be reached (DATABASE_URL): ${(err as { code?: string }).code ?? (err as Error).message}`);
    return 1;
  }
  throw err;
}

runMain(() => main(process.argv.slice(2)));
