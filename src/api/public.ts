import { DEFAULT_RETENTION_DAYS } from '../common/config.js';
import type { Registry } from '../kernel/registry/index.js';
import type { Api } from '../http/route.js';
import { eventLogRoutes } from './event-log.js';
import { metaRoutes } from './meta.js';
import { resourceRoutes } from './resources.js';
import { PUBLIC_BASE, webhookRoutes } from './webhooks.js';
import { versionRoutes } from './versions.js';
import { Versions } from '../versions/index.js';

/** The public API: `/v1`, Bearer keys, the resources, webhooks and meta endpoints. */
export function publicApi(registry: Registry, document: (version: string) => string = () => '{}', facts: { retentionDays: number; versions?: Versions } = { retentionDays: DEFAULT_RETENTION_DAYS }): Api & { versions: Versions } {
  const versions = facts.versions ?? new Versions(registry);
  return {
    base: PUBLIC_BASE,
    title: 'Workspace API',
    credentials: 'key',
    routes: [...resourceRoutes(registry, PUBLIC_BASE, versions), ...webhookRoutes(registry), ...eventLogRoutes(registry, facts.retentionDays), ...metaRoutes(registry, document, versions), ...versionRoutes(versions)],
    olderVersions: versions.known.filter((v) => v !== versions.latest),
    versions,
  };
}

/** A registry with no plugins: enough to list the routes the service serves itself. */
const NO_PLUGINS: Registry = { resources: [], reserved: [], byName: new Map(), deprecations: [] };

/**
 * The paths the service serves itself under /v1 (`/webhooks`, `/event-log`, `/health`...),
 * each with what a plugin taking it would collide with: read from the routes themselves, so a
 * route added here is one no plugin can take.
 */
export function servedPaths(): ReadonlyMap<string, string> {
  const paths = new Map<string, string>();
  for (const route of publicApi(NO_PLUGINS).routes) {
    const first = `/${route.path.split('/')[1] ?? ''}`;
    if (!paths.has(first)) paths.set(first, `the service's own /v1${first}`);
  }
  return paths;
}
