import type { Registry } from '../kernel/registry/index.js';
import { A } from '../common/words.js';

export interface EventInfo {
  name: string;
  resource: string;
  description: string;
}

/** The event POST /webhooks/{id}/test sends: not in the catalog (no subscription matches it), always deliverable. */
export const TEST_EVENT: EventInfo = { name: 'webhook.test', resource: 'webhooks', description: 'A test event, sent by "Send test event" to one subscription only.' };

/** The service's own events about subscriptions (webhooks/operational.ts): selected like any other, read with webhooks:manage. */
export const OPERATIONAL_EVENTS: readonly EventInfo[] = [
  { name: 'webhook.failing', resource: 'webhooks', description: 'A webhook subscription is failing: at least half of its last 20 deliveries failed (at most once a day per subscription).' },
  { name: 'webhook.disabled', resource: 'webhooks', description: 'The service turned a webhook subscription off: its receiver answered 410 Gone, or every attempt failed for five days.' },
];

/** Every event of the catalog: created, updated and deleted for each resource, plus its own, then the service's about subscriptions. */
export function eventCatalog(registry: Registry): EventInfo[] {
  const events: EventInfo[] = [];
  for (const { def } of registry.resources) {
    const resource = def.path.slice(1);
    events.push(
      { name: `${def.name}.created`, resource, description: `${A(def.name)} was created.` },
      { name: `${def.name}.updated`, resource, description: `${A(def.name)} was updated.` },
      { name: `${def.name}.deleted`, resource, description: `${A(def.name)} was deleted.` },
    );
    for (const [event, declared] of Object.entries(def.events ?? {})) {
      events.push({ name: `${def.name}.${event}`, resource, description: declared.description });
    }
  }
  events.push(...OPERATIONAL_EVENTS);
  return events;
}
