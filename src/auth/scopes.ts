import { WEBHOOKS_SCOPE, type Registry } from '../kernel/registry/index.js';

/** The kernel's own scope, beside the plugins' read and write scopes. */
export { WEBHOOKS_SCOPE };

export interface ScopeInfo {
  name: string;
  resource: string;
  access: 'read' | 'write' | 'manage';
  description: string;
}

/** The scope catalog: each resource plugin's read and write scopes, plus the kernel's own. */
export function scopeCatalog(registry: Registry): ScopeInfo[] {
  const scopes: ScopeInfo[] = [];
  for (const { def } of registry.resources) {
    const resource = def.path.slice(1);
    scopes.push({ name: def.scopes.read, resource, access: 'read', description: `List and read ${resource}.` });
    scopes.push({ name: def.scopes.write, resource, access: 'write', description: `Create, update and delete ${resource}.` });
  }
  scopes.push({ name: WEBHOOKS_SCOPE, resource: 'webhooks', access: 'manage', description: 'Manage webhook subscriptions and their deliveries.' });
  return scopes;
}
