/**
 * Test mode (docs/reference.md section 21). Each workspace gets its test twin: a workspace row
 * of its own, `<id>_test`, with `test_of` naming the live workspace, where its test keys,
 * objects, events, subscriptions, deliveries, requests and usage live (src/common/modes.ts).
 * Every event written before this was live: its payload gains `livemode: true`, as new events
 * carry it, so the event log and recovery say the same of old and new events.
 */
import type { Knex } from 'knex';

const SUFFIX = '_test';
const BATCH = 500;

type Json = Record<string, unknown>;

/** `{id, type, created_at, data}` -> `{id, type, created_at, livemode, data}`, the object inside it too. */
function withLivemode(payload: string): string {
  const { data, ...head } = JSON.parse(payload) as Json & { data?: { object?: Json } };
  if ('livemode' in head) return payload;
  const object = data?.object;
  const marked = object && typeof object === 'object' && !('livemode' in object) ? { ...data, object: { ...object, livemode: true } } : data;
  return JSON.stringify({ ...head, livemode: true, data: marked });
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workspaces', (t) => {
    t.string('test_of', 64).nullable().index('workspaces_test_of');
  });
  const live = (await knex('workspaces').select('id', 'name', 'plan', 'created_at', 'updated_at', 'max_key_lifetime_days')) as Json[];
  for (let i = 0; i < live.length; i += BATCH) {
    await knex('workspaces').insert(live.slice(i, i + BATCH).map((w) => ({ ...w, id: `${String(w.id)}${SUFFIX}`, test_of: w.id })));
  }
  let after = '';
  for (;;) {
    const rows = (await knex('events').select('id', 'payload').where('id', '>', after).orderBy('id').limit(BATCH)) as Array<{ id: string; payload: string }>;
    if (rows.length === 0) break;
    for (const row of rows) {
      const payload = withLivemode(row.payload);
      if (payload !== row.payload) await knex('events').update({ payload }).where('id', row.id);
    }
    after = rows[rows.length - 1]!.id;
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex('workspaces').whereNotNull('test_of').delete();
  await knex.schema.alterTable('workspaces', (t) => {
    t.dropIndex(['test_of'], 'workspaces_test_of');
    t.dropColumn('test_of');
  });
}
