import type { Registry } from '../kernel/registry.js';
import { A } from '../common/words.js';

export interface EventInfo {
  name: string;
  resource: string;
  description: string;
}

/** The event POST /webhooks/{id}/test sends: not in the catalog (no subscription matches it), always deliverable. */
export const TEST_EVENT: EventInfo = { name: 'webhook.test', resource: 'webhooks', description: 'A test event, sent by "Send test event" to one subscription only.' };

/** Every event the plugins can emit: created, updated and deleted for each, plus their own. */
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
  return events;
}
