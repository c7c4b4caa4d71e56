/**
 * What a subscription's deliveries carry (docs/reference.md section 16): `full`, the event as stored (the
 * object whole, and the changed fields' previous values), or `thin`, the event with its object
 * cut to `{ id, version }`, for a consumer that fetches the object itself (and never holds a
 * copy of its fields it did not ask for).
 */
export const PAYLOADS = ['full', 'thin'] as const;
export type Payload = (typeof PAYLOADS)[number];

interface StoredEvent {
  id: string;
  type: string;
  created_at: string;
  /** Missing from events written before test mode, all of them live. */
  livemode?: boolean;
  data: { object: { id?: unknown; version?: unknown } };
}

/** The body a delivery sends: the stored event, or its thin form (made from it, so both say the same event). */
export function deliveryBody(payload: Payload, stored: string): string {
  if (payload === 'full') return stored;
  const event = JSON.parse(stored) as StoredEvent;
  const { id, version } = event.data.object;
  return JSON.stringify({ id: event.id, type: event.type, created_at: event.created_at, livemode: event.livemode ?? true, data: { object: version === undefined ? { id } : { id, version } } });
}
