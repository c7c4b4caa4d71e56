import { DEFAULT_RETENTION_DAYS } from '../config.js';
import type { Registry } from '../kernel/registry.js';
import type { Api } from '../kernel/route.js';
import { eventLogRoutes } from './event-log.js';
import { metaRoutes } from './meta.js';
import { resourceRoutes } from './resources.js';
import { webhookRoutes } from './webhooks.js';

/** The public API: `/v1`, Bearer keys, the resources, webhooks and meta endpoints. */
export function publicApi(registry: Registry, document: () => string = () => '{}', facts: { retentionDays: number } = { retentionDays: DEFAULT_RETENTION_DAYS }): Api {
  return {
    base: '/v1',
    title: 'Workspace API',
    credentials: 'key',
    routes: [...resourceRoutes(registry), ...webhookRoutes(registry), ...eventLogRoutes(registry, facts.retentionDays), ...metaRoutes(registry, document)],
  };
}
