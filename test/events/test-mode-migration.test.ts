import { expect } from 'chai';
import { migrationsDatabase } from '../helpers/backend.js';

const TEST_MODE = '20261203000000_test_mode';

/** docs/reference.md section 21: the migration gives each workspace its test twin, and old events their livemode. */
describe('test mode: its migration', () => {
  const storage = migrationsDatabase('testmode');

  it('makes a test twin of each workspace on its plan and key policy, marks every event live, and undoes both', async () => {
    const { db } = storage;
    await storage.latest();
    await storage.down(TEST_MODE);
    await db('workspaces').insert([
      { id: 'ws_m1', name: 'One', plan: 'pro', created_at: 1, updated_at: 2, max_key_lifetime_days: 30 },
      { id: 'ws_m2', name: 'Two', plan: 'starter', created_at: 3, updated_at: 4, max_key_lifetime_days: null },
    ]);
    const deal = { id: 'deal_1', title: 'Old', created_at: '2026-11-21T00:00:00.000Z', version: 1 };
    await db('events').insert([
      { id: 'evt_1', workspace_id: 'ws_m1', type: 'deal.created', object_id: 'deal_1', payload: JSON.stringify({ id: 'evt_1', type: 'deal.created', created_at: '2026-11-21T00:00:00.000Z', data: { object: deal, previous: {} } }), created_at: 10 },
      { id: 'evt_2', workspace_id: 'ws_m2', type: 'webhook.test', object_id: 'wh_1', payload: JSON.stringify({ id: 'evt_2', type: 'webhook.test', created_at: '2026-11-21T00:00:00.000Z', data: { object: { id: 'wh_1' }, previous: {} } }), created_at: 11 },
    ]);

    await storage.latest();
    const twins = (await db('workspaces').whereNotNull('test_of').orderBy('id').select('id', 'name', 'plan', 'max_key_lifetime_days', 'test_of')) as Array<Record<string, unknown>>;
    expect(twins.map((w) => ({ ...w, max_key_lifetime_days: w.max_key_lifetime_days == null ? null : Number(w.max_key_lifetime_days) }))).to.deep.equal([
      { id: 'ws_m1_test', name: 'One', plan: 'pro', max_key_lifetime_days: 30, test_of: 'ws_m1' },
      { id: 'ws_m2_test', name: 'Two', plan: 'starter', max_key_lifetime_days: null, test_of: 'ws_m2' },
    ]);
    const payloads = ((await db('events').orderBy('id').pluck('payload')) as string[]).map((p) => JSON.parse(p) as Record<string, unknown>);
    // livemode beside type, and on the object, in the order new events have it.
    expect(Object.keys(payloads[0]!)).to.deep.equal(['id', 'type', 'created_at', 'livemode', 'data']);
    expect(payloads[0]).to.deep.equal({ id: 'evt_1', type: 'deal.created', created_at: '2026-11-21T00:00:00.000Z', livemode: true, data: { object: { ...deal, livemode: true }, previous: {} } });
    expect(payloads[1]).to.deep.include({ livemode: true, data: { object: { id: 'wh_1', livemode: true }, previous: {} } });

    await storage.down(TEST_MODE);
    expect(await db.schema.hasColumn('workspaces', 'test_of')).to.equal(false);
    expect((await db('workspaces').orderBy('id').pluck('id')) as string[]).to.include.members(['ws_m1', 'ws_m2']).and.not.include('ws_m1_test');
    await storage.latest();
  });
});
