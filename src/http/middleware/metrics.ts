import type { Metrics } from '../../metrics/registry.js';
import type { Observer } from './observe.js';
import { routeOf } from './route-template.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Counts and times every answer (after the error renderer, so a thrown error counts with its final status). */
export function measure(metrics: Metrics): Observer {
  // The labelled series of each (route, method[, status]), looked up by one string instead of
  // prom-client hashing a label object on every answer. Bounded as the labels are.
  const counters = new Map<string, ReturnType<Metrics['requests']['labels']>>();
  const timers = new Map<string, ReturnType<Metrics['duration']['labels']>>();
  return (ctx, { started }) => {
    const route = routeOf(ctx);
    const method = METHODS.has(ctx.method) ? ctx.method : 'OTHER';
    const status = String(ctx.status);
    const series = `${method} ${route}`;
    let counter = counters.get(`${series} ${status}`);
    if (!counter) counters.set(`${series} ${status}`, (counter = metrics.requests.labels({ route, method, status })));
    let timer = timers.get(series);
    if (!timer) timers.set(series, (timer = metrics.duration.labels({ route, method })));
    counter.inc();
    timer.observe((performance.now() - started) / 1000);
    if (ctx.status === 401) metrics.unauthorized.inc();
    if (ctx.status === 429) metrics.rateLimited.inc();
  };
}
