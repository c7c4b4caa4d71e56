import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { base36, isIdOf, newId } from '../../src/common/ids.js';
import { LONE_SURROGATE_MESSAGE, NUL_MESSAGE, textProblem, textProblems } from '../../src/common/wire.js';
import knex, { type Knex } from 'knex';
import { loadConfig } from '../../src/common/config.js';
import { ApiError } from '../../src/common/errors.js';
import { matches, patternErrors } from '../../src/events/patterns.js';
import { eventCatalog } from '../../src/events/catalog.js';
import { checkSortValue, decodeCursor, encodeCursor } from '../../src/kernel/query/cursor.js';
import { afterKeyset, sortValueOf, toPage, walkOf } from '../../src/kernel/query/keyset.js';
import { iso } from '../../src/db/iso.js';
import { toObject } from '../../src/kernel/storage/rows.js';
import { loadRegistry, type Registry } from '../../src/kernel/registry/registry.js';
import { args, LIMIT, named, param, prepare, rowsArgs } from '../../src/db/prepared.js';
import { recordDue } from '../../src/webhooks/recorder.js';
import { statementsOf } from '../../src/kernel/storage/store.js';
import { checkInitialState, checkTransition, stampsFor } from '../../src/kernel/write/state.js';
import { retryAfterMs, retryDelayMs } from '../../src/webhooks/schedule.js';
import { describeRange, forbiddenRange } from '../../src/webhooks/ssrf.js';
import { splitCredentials, withPassword } from '../../src/webhooks/credentials.js';
import { a, A, count } from '../../src/common/words.js';
import { traceLogOptions } from '../../src/tracing/tracer.js';

/** The pure pieces, without a database or a server: `npm run test:unit` runs them in about a second. */

function refused(fn: () => unknown, code: string): ApiError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ApiError);
    expect((err as ApiError).code).to.equal(code);
    return err as ApiError;
  }
  throw new Error(`expected ${code}`);
}

describe('cursor codec', () => {
  it('round-trips a position, bound to its resource and sort', () => {
    const raw = encodeCursor({ resource: 'deal', sort: '-created_at', value: 1795330000000, id: 'deal_abc' });
    expect(raw).to.match(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(raw, 'deal', '-created_at')).to.deep.equal({ resource: 'deal', sort: '-created_at', value: 1795330000000, id: 'deal_abc' });
    expect(refused(() => decodeCursor(raw, 'lead', '-created_at'), 'invalid_cursor').detail).to.contain('another resource');
    expect(refused(() => decodeCursor(raw, 'deal', 'updated_at'), 'invalid_cursor').detail).to.contain('sort=-created_at');
  });

  it('refuses what it did not make', () => {
    for (const raw of ['', 'not a cursor', Buffer.from('[1,2]').toString('base64url'), Buffer.from('{"r":"deal","s":"x","v":1.5,"i":"a"}').toString('base64url'), Buffer.from('{"r":"deal","s":"x","v":1,"i":"A B"}').toString('base64url')]) {
      refused(() => decodeCursor(raw, 'deal', 'x'), 'invalid_cursor');
    }
    // A field sort's value is a date's text or null besides a number; no other text.
    refused(() => decodeCursor(Buffer.from('{"r":"deal","s":"x","v":"1 or 1=1","i":"a"}').toString('base64url'), 'deal', 'x'), 'invalid_cursor');
  });

  it('carries a field sort\'s value: a date as its text, null for a row without one', () => {
    for (const value of ['2027-03-01', null, 0]) {
      const raw = encodeCursor({ resource: 'deal', sort: '-expected_close_date', value, id: 'deal_abc' });
      expect(decodeCursor(raw, 'deal', '-expected_close_date').value).to.equal(value);
    }
    // Its value must be one of the sort's own (a crafted one would reach the database).
    expect(() => checkSortValue('2027-03-01', 'number', true)).to.throw(ApiError);
    expect(() => checkSortValue(null, 'number', false)).to.throw(ApiError);
    expect(() => checkSortValue(null, 'string', true)).not.to.throw();
  });
});

describe('keyset pages', () => {
  const sql = knex({ client: 'mysql2' });
  after(() => sql.destroy());

  it('asks for rows strictly after (value, id) in the order of the walk', () => {
    const desc = afterKeyset(sql('deals'), 'created_at', 'desc', { value: 5, id: 'deal_x' }).toSQL();
    // The redundant bound first: the index seeks to the cursor.
    expect(desc.sql).to.equal('select * from `deals` where `created_at` <= ? and (`created_at` < ? or `id` < ?)');
    expect(desc.bindings).to.deep.equal([5, 5, 'deal_x']);
    expect(afterKeyset(sql('deals'), 'updated_at', 'asc', { value: 5, id: 'deal_x' }).toSQL().sql).to.equal('select * from `deals` where `updated_at` >= ? and (`updated_at` > ? or `id` > ?)');
  });

  it('cuts limit + 1 rows to a page whose cursor points after its last row', () => {
    const rows = [1, 2, 3].map((n) => ({ id: `deal_${n}`, created_at: n * 10 }));
    const page = toPage(rows, 2, { resource: 'deal', sort: 'created_at', column: 'created_at' }, (r) => r.id);
    expect(page.data).to.deep.equal(['deal_1', 'deal_2']);
    expect(page.has_more).to.equal(true);
    expect(decodeCursor(page.next_cursor as string, 'deal', 'created_at')).to.include({ value: 20, id: 'deal_2' });
    expect(toPage([{ id: 'deal_1', created_at: 1 }], 2, { resource: 'deal', sort: 'created_at', column: 'created_at' }, (r) => r.id)).to.include({ has_more: false, next_cursor: null });
  });

  it('keeps a field sort\'s last value as stored: a date\'s text, a bigint the driver gave as text as a number, null as null', () => {
    expect(sortValueOf('2027-03-01')).to.equal('2027-03-01');
    expect(sortValueOf('125000')).to.equal(125000);
    expect(sortValueOf(null)).to.equal(null);
    expect(walkOf('-amount', new Set(['amount']))).to.deep.equal({ column: 'amount', order: 'desc', nullable: true });
    expect(walkOf('created_at', new Set(['amount']))).to.deep.equal({ column: 'created_at', order: 'asc', nullable: false });
  });
});

describe('state machines', () => {
  let registry: Registry;
  before(async () => {
    registry = await loadRegistry(loadConfig({}).pluginsDir);
  });
  const invoice = () => registry.byName.get('invoice')!;

  it('allows the declared moves and refuses the others, naming the allowed targets', () => {
    checkTransition(invoice(), { status: 'draft' }, { status: 'open' });
    checkTransition(invoice(), { status: 'open' }, { status: 'paid' });
    checkTransition(invoice(), { status: 'open' }, { status: 'open' });
    const e = refused(() => checkTransition(invoice(), { status: 'draft' }, { status: 'paid' }), 'invalid_transition');
    expect(e.detail).to.contain('open').and.contain('void');
    refused(() => checkTransition(invoice(), { status: 'paid' }, { status: 'open' }), 'invalid_transition');
  });

  it('starts in the default state, and stamps the moment a state is reached', () => {
    checkInitialState(invoice(), { status: 'draft' });
    refused(() => checkInitialState(invoice(), { status: 'paid' }), 'invalid_transition');
    expect(stampsFor(invoice(), 'open', 'paid', 1234)).to.deep.equal({ paid_at: 1234 });
    expect(stampsFor(invoice(), 'draft', 'open', 1234)).to.deep.equal({});
  });
});

describe('event patterns', () => {
  it('matches exact names, * and <resource>.*', () => {
    expect(matches(['deal.*'], 'deal.stage_changed')).to.equal(true);
    expect(matches(['deal.*'], 'dealer.created')).to.equal(false);
    expect(matches(['*'], 'invoice.paid')).to.equal(true);
    expect(matches(['invoice.paid'], 'invoice.voided')).to.equal(false);
  });

  it('refuses a pattern outside the catalog, naming it and its pointer', async () => {
    const catalog = eventCatalog(await loadRegistry(loadConfig({}).pluginsDir));
    expect(patternErrors(['deal.*', 'invoice.paid', '*'], catalog)).to.deep.equal([]);
    const errors = patternErrors(['deal.*', 'deals.*', 'invoice.unpaid', 'deal.**'], catalog);
    expect(errors.map((e) => e.pointer)).to.deep.equal(['/events/1', '/events/2', '/events/3']);
    expect(errors[0]?.message).to.contain('deals.*');
  });
});

describe("a record's gathering (webhooks/recorder.ts)", () => {
  it('goes at the earlier deadline: an attempt that waits less brings it forward, one that waits more never puts it off', () => {
    expect(recordDue(undefined, 100, 10)).to.equal(110);
    // A per_object line's attempt (3 ms) joins a record due at 110: it goes at 108.
    expect(recordDue(110, 105, 3)).to.equal(108);
    // An attempt of no line (10 ms) joins that record: it still goes at 108.
    expect(recordDue(108, 106, 10)).to.equal(108);
    expect(recordDue(108, 108, 0)).to.equal(108);
  });
});

describe('retry schedule', () => {
  it('waits the configured delay after each failure, within ±20%', () => {
    const delays = [5, 300, 1800];
    expect(retryDelayMs(delays, 1, () => 0.5)).to.equal(5000);
    expect(retryDelayMs(delays, 2, () => 0)).to.equal(240_000);
    expect(retryDelayMs(delays, 2, () => 1)).to.be.closeTo(360_000, 1);
  });

  it("reads a receiver's Retry-After in seconds or as a date", () => {
    const now = Date.UTC(2026, 10, 22);
    expect(retryAfterMs('120', now)).to.equal(120_000);
    expect(retryAfterMs(new Date(now + 30_000).toUTCString(), now)).to.equal(30_000);
    expect(retryAfterMs('soon', now)).to.equal(undefined);
  });
});

describe('words', () => {
  it('puts the article the name asks for, and counts in the singular for one', () => {
    expect([a('invoice'), a('deal'), A('invoice'), A('lead'), A('order')]).to.deep.equal(['an invoice', 'a deal', 'An invoice', 'A lead', 'An order']);
    expect([count(0, 'delivery', 'deliveries'), count(1, 'delivery', 'deliveries'), count(2, 'delivery', 'deliveries')]).to.deep.equal(['0 deliveries', '1 delivery', '2 deliveries']);
  });
});

describe('SSRF ranges', () => {
  it('lets global unicast through and refuses every other range', () => {
    for (const address of ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']) expect(forbiddenRange(address), address).to.equal(undefined);
    const refusedRanges: Array<[string, string]> = [
      ['127.0.0.1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['169.254.169.254', 'linkLocal'],
      ['100.64.0.1', 'carrierGradeNat'],
      ['0.0.0.0', 'unspecified'],
      ['::1', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::7f00:1', 'ipv4Compatible'],
      ['::a9fe:a9fe', 'ipv4Compatible'],
      ['fd00::1', 'uniqueLocal'],
      ['64:ff9b::7f00:1', 'rfc6052'],
      ['2002:7f00:1::', '6to4'],
    ];
    for (const [address, range] of refusedRanges) expect(forbiddenRange(address), address).to.equal(range);
  });

  it('says each refused range in words a person reads, never its code name', () => {
    for (const range of ['loopback', 'private', 'linkLocal', 'carrierGradeNat', 'unspecified', 'ipv4Compatible', 'uniqueLocal', 'rfc6052', '6to4', 'teredo', 'reserved', 'multicast', 'broadcast', 'invalid']) {
      const words = describeRange(range);
      // No code names: no camelCase (ipv4Compatible, linkLocal), no RFC numbers.
      expect(words, range).to.match(/^(a|an|the|not) /).and.not.match(/[a-z][A-Z]|rfc/);
    }
    expect(describeRange('ipv4Compatible')).to.equal('an IPv4-compatible IPv6 address (::/96, deprecated: some systems reach the IPv4 address inside it)');
    expect(describeRange('rfc6052')).to.contain('NAT64');
  });
});

describe("credentials in a destination's URL", () => {
  const cases: Array<[string, string, string | null]> = [
    ['amqp://guest:gu%40st@broker:5672/ex', 'amqp://guest@broker:5672/ex', 'gu@st'],
    ['amqps://u:p@broker/ex', 'amqps://u@broker/ex', 'p'],
    ['nats://u:p@nats:4222/a.b', 'nats://u@nats:4222/a.b', 'p'],
    ['nats://s3cr%2Ft@nats:4222/a.b', 'nats://nats:4222/a.b', 's3cr/t'],
    ['tls://tok@nats:4222/a.b', 'tls://nats:4222/a.b', 'tok'],
    ['nats://nats:4222/a.b', 'nats://nats:4222/a.b', null],
    ['amqp://guest@broker/ex', 'amqp://guest@broker/ex', null],
    ['https://user:pw@example.com/hook', 'https://user@example.com/hook', 'pw'],
    ['https://example.com/hook?to=a@b', 'https://example.com/hook?to=a@b', null],
    ['ftp://user:pw@example.com/', 'ftp://user:pw@example.com/', null],
  ];
  it('keeps the URL without its password or NATS token, and puts it back to connect', () => {
    for (const [raw, kept, sealed] of cases) {
      expect(splitCredentials(raw), raw).to.deep.equal({ url: kept, password: sealed });
      expect(new URL(withPassword(kept, sealed)).href, raw).to.equal(new URL(raw).href);
    }
  });
});

describe('rows as clients see them', () => {
  it('writes times exactly as Date#toISOString does, across days, years and the edges', () => {
    const samples = [0, 1, 999, 1000, 86_399_999, 86_400_000, Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2026, 10, 24, 7, 5, 9, 42), 253_402_300_799_999, 253_402_300_800_000, -1, 1.5];
    let x = 0x2545f491;
    for (let i = 0; i < 2000; i += 1) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      samples.push(Math.floor((x / 2 ** 31) * 4_102_444_800_000));
    }
    for (const ms of samples) expect(iso(ms), String(ms)).to.equal(new Date(ms).toISOString());
    expect(iso(String(Date.UTC(2026, 0, 2)))).to.equal('2026-01-02T00:00:00.000Z');
    expect(iso(null)).to.equal(null);
  });

  it('maps a stored row to its object: columns in order, times and booleans decoded, missing values null', async () => {
    const registry = await loadRegistry(loadConfig({}).pluginsDir);
    const deal = registry.byName.get('deal')!;
    const row = { id: 'deal_1', workspace_id: 'ws_1', title: 'T', amount: '1200', created_at: 1_700_000_000_000, updated_at: '1700000000001' };
    const object = toObject(deal, row, 'ws_1');
    expect(Object.keys(object)).to.deep.equal([...deal.columns, 'livemode']);
    expect(object.livemode).to.equal(true);
    expect(toObject(deal, row, 'ws_1_test').livemode).to.equal(false);
    expect(object).to.include({ id: 'deal_1', title: 'T', created_at: '2023-11-14T22:13:20.000Z', updated_at: '2023-11-14T22:13:20.001Z' });
    expect(object).not.to.have.property('workspace_id');
    expect(object.client_id).to.equal(null);
  });
});

describe('statements with named values', () => {
  /** The column each placeholder of an INSERT or UPDATE stands for, read from the statement's text. */
  function placeholders(sql: string): string[] {
    const insert = /\(([^)]*)\) values \(/i.exec(sql);
    if (insert) return insert[1]!.split(',').map((c) => c.trim().replace(/[`"]/g, ''));
    return [...sql.matchAll(/[`"]?(\w+)[`"]? (?:=|<=|>=|<|>) \?/g)].map((m) => m[1]!);
  }

  for (const client of ['mysql2', 'better-sqlite3']) {
    it(`name each value in its placeholder's place, whatever order the columns were given in (${client})`, async () => {
      const db = knex({ client, useNullAsDefault: true });
      const backwards = prepare(db('events').insert(named(['payload', 'id', 'created_at'])));
      expect(backwards.names).to.deep.equal(placeholders(backwards.sql));
      expect(args(backwards, { id: 'evt_1', payload: '{}', created_at: 3 })).to.deep.equal(backwards.names.map((c) => ({ id: 'evt_1', payload: '{}', created_at: 3 })[c]));

      const oldest = prepare(db('keys').select('id').where('workspace_id', param('w')).andWhere('created_at', '<=', param('before')).orderBy('id').limit(LIMIT));
      expect(oldest.names).to.deep.equal(['w', 'before', 'limit']);
      expect(oldest.sql).to.match(/limit \?$/);
      expect(args(oldest, { before: 5, w: 'ws_1', limit: 10 })).to.deep.equal(['ws_1', 5, 10]);

      expect(() => prepare(db('deals').where('workspace_id', 'ws_1'))).to.throw(/value 1 \("ws_1"\) has no name/);
      await db.destroy();
    });

    it(`write several rows in one INSERT, each value from its own row (${client})`, async () => {
      const db = knex({ client, useNullAsDefault: true, ...(client === 'better-sqlite3' ? { connection: { filename: ':memory:' } } : {}) });
      const rows = [
        { a: 1, b: 'one', c: null },
        { a: 2, b: 'two', c: 'x' },
        { a: 3, b: 'three', c: 'y' },
      ];
      const statement = prepare(db('t').insert(rows.map(() => named(['c', 'a', 'b']))));
      expect(statement.names).to.have.length(9);
      const values = rowsArgs(statement, rows);
      if (client === 'better-sqlite3') {
        await db.schema.createTable('t', (t) => {
          t.integer('a');
          t.string('b');
          t.string('c');
        });
        await db.raw(statement.sql, values as Knex.RawBinding[]);
        expect(await db('t').select('a', 'b', 'c').orderBy('a')).to.deep.equal(rows);
      } else {
        // MySQL writes VALUES (...), (...): each tuple's values are its row's, in the statement's column order.
        const tuple = placeholders(statement.sql);
        expect(values).to.deep.equal(rows.flatMap((row) => tuple.map((column) => row[column as keyof typeof row])));
      }
      await db.destroy();
    });

    it(`build a resource's statements once, each value named by its column (${client})`, async () => {
      const db = knex({ client, useNullAsDefault: true });
      const registry = await loadRegistry(loadConfig({}).pluginsDir);
      const deal = registry.byName.get('deal')!;
      const s = statementsOf(db, deal);
      const row = { id: 'deal_1', workspace_id: 'ws_1', title: 'T', amount: 5, currency: 'EUR', stage: 'won', client_id: null, expected_close_date: null, won_at: null, lost_at: null, created_at: 1, updated_at: 2 };

      expect(s.insert.names).to.deep.equal(placeholders(s.insert.sql));
      expect([...s.insert.names].sort()).to.deep.equal(['id', 'workspace_id', ...deal.columns.slice(1)].sort());
      expect(args(s.insert, row)).to.deep.equal(s.insert.names.map((c) => row[c as keyof typeof row]));

      expect(s.update.names).to.deep.equal(placeholders(s.update.sql));
      expect(s.update.names.slice(-2)).to.deep.equal(['workspace_id', 'id']);
      expect(s.update.names).to.include.members(['title', 'stage', 'updated_at']).and.not.include('created_at');

      const past = s.pages.get('created_at:desc:after')!;
      expect(past.names).to.deep.equal(['workspace_id', 'value', 'value', 'id', 'limit']);
      expect(s.pages.get('updated_at:asc:first')!.names).to.deep.equal(['workspace_id', 'limit']);

      expect(s.remove.sql).to.match(/^delete from [`"]deals[`"] where [`"]workspace_id[`"] = \? and [`"]id[`"] = \?$/);
      expect(s.locked.sql).to.satisfy((sql: string) => (client === 'mysql2' ? sql.endsWith(' for update') : !/for update/.test(sql)));
      await db.destroy();
    });
  }
});

describe('ids', () => {
  it('write 128 random bits as the 25 base-36 digits BigInt writes', () => {
    const samples = [Buffer.alloc(16), Buffer.alloc(16, 0xff), Buffer.from('00000000000000000000000000000001', 'hex'), Buffer.from('80000000000000000000000000000000', 'hex')];
    for (let i = 0; i < 2000; i += 1) samples.push(randomBytes(16));
    for (const bytes of samples) expect(base36(bytes), bytes.toString('hex')).to.equal(BigInt(`0x${bytes.toString('hex')}`).toString(36).padStart(25, '0'));
  });

  it('are new each time, of the documented shape', () => {
    const ids = new Set(Array.from({ length: 5000 }, () => newId('deal_')));
    expect(ids.size).to.equal(5000);
    for (const id of ids) expect(id).to.match(/^deal_[0-9a-z]{25}$/);
  });

  it('are told apart from what cannot be one, before any lookup', () => {
    expect(isIdOf('deal_', newId('deal_'))).to.equal(true);
    expect(isIdOf('deal_', `deal_${'a'.repeat(59)}`)).to.equal(true);
    for (const id of ['deal_', 'lead_abc', 'deal_ABC', 'deal_a\u0000', 'deal_a-b', `deal_${'a'.repeat(60)}`, 'xdeal_abc', ' deal_abc']) expect(isIdOf('deal_', id), JSON.stringify(id)).to.equal(false);
    // The check is sticky at the prefix's end, whatever was checked before.
    expect(isIdOf('wh_', 'wh_abc')).to.equal(true);
    expect(isIdOf('deal_', 'deal_abc')).to.equal(true);
  });

  it('sort by the millisecond they were made, the rest random', () => {
    const at = Date.UTC(2026, 10, 26);
    const earlier = Array.from({ length: 200 }, () => newId('deal_', at));
    const later = Array.from({ length: 200 }, () => newId('deal_', at + 1));
    // Every id of a later millisecond sorts after every id of an earlier one, as strings (how the indexes compare them).
    expect([...later].sort()[0]! > [...earlier].sort()[199]!).to.equal(true);
    // Within a millisecond, the 80 random bits make them differ.
    expect(new Set(earlier).size).to.equal(200);
    const digits = (id: string) => id.slice('deal_'.length);
    const time = (id: string) => [...digits(id)].reduce((n, c) => n * 36n + BigInt(parseInt(c, 36)), 0n) / 2n ** 80n;
    expect(time(earlier[0]!)).to.equal(BigInt(at));
    expect(time(later[0]!)).to.equal(BigInt(at + 1));
  });
});

describe('strings in a body that cannot be stored as sent', () => {
  const pointers = (body: unknown) => textProblems(body).map((p) => p.pointer);
  it('are found in values and keys at any depth, each by its JSON pointer', () => {
    expect(textProblems({ a: 'fine', b: [1, null, true, { c: 'x' }], emoji: '😀 ok' })).to.deep.equal([]);
    expect(pointers('\u0000')).to.deep.equal(['']);
    expect(pointers({ a: 'x\u0000', b: ['ok', { 'c/d~e': '\u0000y' }], ['k\u0000']: 'v', deep: { er: { est: ['\u0000'] } } })).to.deep.equal(['/a', '/b/1/c~1d~0e', '/k\u0000', '/deep/er/est/0']);
  });

  it('say why: U+0000, or half a surrogate pair on its own (a pair is one character, and fine)', () => {
    expect(textProblem('a\u0000')).to.equal(NUL_MESSAGE);
    for (const lone of ['\ud800', 'x\udfff', '\ud83d', '\ude00x']) expect(textProblem(lone), JSON.stringify(lone)).to.equal(LONE_SURROGATE_MESSAGE);
    expect(textProblem('\ud83d\ude00')).to.equal(undefined);
    expect(textProblems({ name: '\ud800' })).to.deep.equal([{ pointer: '/name', message: LONE_SURROGATE_MESSAGE }]);
  });
});

describe("a log line's trace fields (pino's mixin, with traces on)", () => {
  it('leave a line written outside any span as it came, the very object', () => {
    const line = { msg: 'request', status: 201 };
    const merged = traceLogOptions.mixinMergeStrategy(line, traceLogOptions.mixin());
    expect(merged).to.equal(line);
    expect(merged).to.deep.equal({ msg: 'request', status: 201 });
  });

  it("add a span's trace_id and span_id to a line within one, the line's own fields winning", () => {
    const fields = { trace_id: 'a'.repeat(32), span_id: 'b'.repeat(16) };
    const merged = traceLogOptions.mixinMergeStrategy({ msg: 'request', span_id: 'own' }, fields);
    expect(merged).to.deep.equal({ trace_id: 'a'.repeat(32), span_id: 'own', msg: 'request' });
  });
});
