import { expect } from 'chai';
import { migrationsDatabase } from '../helpers/backend.js';

const PENDING = '20261127000000_events_pending';

describe('events_pending: the fan-out queue, and its migration from dispatched_at', () => {
  const storage = migrationsDatabase('pending');

  const event = (id: string, createdAt: number) => ({ id, workspace_id: 'ws_p', type: 'deal.created', object_id: `deal_${id}`, payload: '{}', created_at: createdAt });

  it('queues the events not fanned out with what routes them, and gives dispatched_at back on rollback', async () => {
    const { db } = storage;
    await storage.latest();
    await storage.down(PENDING);
    await db('workspaces').insert({ id: 'ws_p', name: 'p', plan: 'pro', created_at: 1, updated_at: 1 });
    // Before the migration: one event fanned out, one not yet, one claimed by the old negative mark.
    await db('events').insert([
      { ...event('evt_done', 10), dispatched_at: 20 },
      { ...event('evt_waiting', 30), dispatched_at: null },
      { ...event('evt_claimed', 40), dispatched_at: -7 },
    ]);

    await storage.latest();
    const queued = await db('events_pending').orderBy('event_id').select('event_id', 'workspace_id', 'type', 'object_id', 'created_at');
    expect(queued.map((row: Record<string, unknown>) => ({ ...row, created_at: Number(row.created_at) }))).to.deep.equal([
      { event_id: 'evt_claimed', workspace_id: 'ws_p', type: 'deal.created', object_id: 'deal_evt_claimed', created_at: 40 },
      { event_id: 'evt_waiting', workspace_id: 'ws_p', type: 'deal.created', object_id: 'deal_evt_waiting', created_at: 30 },
    ]);
    expect(await db.schema.hasColumn('events', 'dispatched_at')).to.equal(false);

    // Back: what is still queued is not fanned out, the rest is.
    await db('events_pending').where('event_id', 'evt_claimed').delete();
    await storage.down(PENDING);
    expect(await db.schema.hasTable('events_pending')).to.equal(false);
    const back = (await db('events').orderBy('id').select('id', 'dispatched_at')) as Array<{ id: string; dispatched_at: number | string | null }>;
    expect(back.map((e) => [e.id, e.dispatched_at === null ? null : Number(e.dispatched_at) > 0])).to.deep.equal([
      ['evt_claimed', true],
      ['evt_done', true],
      ['evt_waiting', null],
    ]);
    await storage.latest();
    expect((await db('events_pending').select('event_id')).map((r: { event_id: string }) => r.event_id)).to.deep.equal(['evt_waiting']);
  });
});
