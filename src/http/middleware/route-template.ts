import type { Ctx } from './context.js';

/** The router's patterns as templates: as few as the routes, so written once each. */
const templates = new Map<string, string>();

/**
 * The route's template as the document writes it (`/v1/deals/{id}`), or the name its handler gave
 * a path no router matched (`/admin/*`, `/readyz`), else `unmatched`: never a raw path, so the
 * series stay few.
 */
export function routeOf(ctx: Ctx): string {
  const matched = (ctx as unknown as { _matchedRoute?: unknown })._matchedRoute;
  if (typeof matched !== 'string') return ctx.state.route ?? 'unmatched';
  let template = templates.get(matched);
  if (template === undefined) templates.set(matched, (template = matched.replace(/:(\w+)/g, '{$1}')));
  return template;
}
