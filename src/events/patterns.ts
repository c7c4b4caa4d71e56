import type { ErrorItem } from '../common/errors.js';
import type { EventInfo } from './catalog.js';

/**
 * Subscription patterns (docs/reference.md section 8): an exact event name of the catalog, `*`, or
 * `<resource>.*` for a resource of the catalog (`deal.*`).
 */
export function patternErrors(patterns: readonly string[], catalog: readonly EventInfo[], pointer = '/events'): ErrorItem[] {
  const names = new Set(catalog.map((e) => e.name));
  const groups = new Set(catalog.map((e) => `${e.name.split('.')[0]}.*`));
  const errors: ErrorItem[] = [];
  patterns.forEach((pattern, i) => {
    if (pattern === '*' || names.has(pattern) || groups.has(pattern)) return;
    errors.push({ pointer: `${pointer}/${i}`, message: `"${pattern}" is not an event name, "*", or one of ${[...groups].join(', ')}` });
  });
  return errors;
}

/** True when the event type is selected by one of the patterns. */
export function matches(patterns: readonly string[], type: string): boolean {
  for (const pattern of patterns) {
    if (pattern === '*' || pattern === type) return true;
    if (pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1))) return true;
  }
  return false;
}
