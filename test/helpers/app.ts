import type http from 'node:http';
import type { Logger } from 'pino';
import type { AddressInfo } from 'node:net';
import { createKey, createWorkspace, findPlan } from '../../src/auth/keys.js';
import { effectiveScopes } from '../../src/auth/plans.js';
import { scopeCatalog } from '../../src/auth/scopes.js';
import { loadConfig } from '../../src/common/config.js';
import type { Clock } from '../../src/common/clock.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { createApp, type App } from '../../src/app.js';
import { createHttpServer } from '../../src/http/server.js';
import { loadPlugins } from '../../src/boot.js';
import type { Registry } from '../../src/kernel/registry/registry.js';
import { backend } from './backend.js';
import { checkedFetcher } from './contract.js';

export interface RequestOptions {
  token?: string;
  method?: string;
  headers?: Record<string, string>;
  json?: unknown;
  body?: string | Uint8Array;
}

export interface TestApp {
  url: string;
  deps: Deps;
  registry: Registry;
  /** Every route of the public API the app mounted. */
  router: App['router'];
  /** Every route of the internal API the app mounted. */
  internalRouter: App['internalRouter'];
  /** The HTTP server that serves it (to watch its connections and requests). */
  server: http.Server;
  /** The app as a request listener, to serve it some other way (over TLS, say). */
  handler: ReturnType<App['koa']['callback']>;
  /**
   * fetch() against the app, with a bearer token when given. `json` is sent as a JSON body
   * (with its Content-Type); `body` is sent as it is. Every answer is held to the served
   * OpenAPI document (helpers/contract.ts): one that does not match it fails the test.
   */
  request(path: string, options?: RequestOptions): Promise<Response>;
  /** A workspace on `plan` and a key on it; `scopes` defaults to every scope of the catalog the plan allows. */
  workspaceWithKey(options?: { plan?: string; scopes?: string[]; rateLimit?: number }): Promise<{ workspaceId: string; keyId: string; token: string }>;
  /** Another key on an existing workspace. */
  addKey(workspaceId: string, scopes: string[]): Promise<string>;
  close(): Promise<void>;
}

/** Builds the real app on this run's backend and serves it over HTTP on a free loopback port. */
export async function startApp(options: { clock?: Clock; env?: Record<string, string>; log?: Logger } = {}): Promise<TestApp> {
  const config = loadConfig({ ...backend().env, ...options.env });
  const registry = await loadPlugins(config.pluginsDir);
  const deps = createDeps(config, { ...(options.clock ? { clock: options.clock } : {}), ...(options.log ? { log: options.log } : {}) });
  if (deps.redis) await waitFor(() => deps.redis?.isReady() ?? false, 5000);
  const app = createApp(deps, registry);
  const server = createHttpServer(app.koa.callback(), config.http, deps.log);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const catalog = scopeCatalog(registry).map((s) => s.name);
  const checked = await checkedFetcher(url);

  return {
    url,
    deps,
    registry,
    router: app.router,
    internalRouter: app.internalRouter,
    server,
    handler: app.koa.callback(),
    request(path, { token, method = 'GET', headers = {}, json, body } = {}) {
      const all: Record<string, string> = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(json !== undefined ? { 'content-type': 'application/json' } : {}), ...headers };
      return checked(path, { method, headers: all, ...(json !== undefined ? { body: JSON.stringify(json) } : body !== undefined ? { body } : {}) });
    },
    async workspaceWithKey({ plan = 'pro', scopes, rateLimit = 6000 } = {}) {
      const ws = await createWorkspace(deps.db, { name: `test ${plan}`, plan });
      const access = (await findPlan(deps.db, plan))?.api_access ?? 'none';
      const granted = scopes ?? effectiveScopes(catalog, access);
      const key = await createKey(deps.db, catalog, { workspace: ws.id, name: 'test key', scopes: granted, rate_limit: rateLimit });
      return { workspaceId: ws.id, keyId: key.id, token: key.token };
    },
    async addKey(workspaceId, scopes) {
      return (await createKey(deps.db, catalog, { workspace: workspaceId, name: 'another key', scopes, rate_limit: 6000 })).token;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await app.close();
      await deps.close();
    },
  };
}

export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, what = 'condition'): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A clock the test moves by hand. */
export function manualClock(start = Date.UTC(2026, 10, 21, 12, 0, 0)): Clock & { advance(ms: number): void; set(ms: number): void } {
  let now = start;
  return { now: () => now, advance: (ms) => void (now += ms), set: (ms) => void (now = ms) };
}
