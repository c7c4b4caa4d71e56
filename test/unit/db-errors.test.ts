import { expect } from 'chai';
import { serializeError, statementOf } from '../../src/db/errors.js';

describe('database errors in the log (unit)', () => {
  it('reads the operation and the table from a statement', () => {
    expect(statementOf('update `webhook_subscriptions` set `secret` = ? where `id` = ?')).to.deep.equal({ operation: 'update', table: 'webhook_subscriptions' });
    expect(statementOf('insert into "events" ("id") values (?)')).to.deep.equal({ operation: 'insert', table: 'events' });
    expect(statementOf('select `k`.* from `api_keys` as `k` where `token_hash` = ?')).to.deep.equal({ operation: 'select', table: 'api_keys' });
    expect(statementOf('delete from `idempotency_keys` where `expires_at` < ?')).to.deep.equal({ operation: 'delete', table: 'idempotency_keys' });
    expect(statementOf('COMMIT')).to.deep.equal({ operation: 'commit' });
    expect(statementOf('WITH s0 AS (insert into "deals" ("id") values ($1)) insert into "events" ("id") values ($2)')).to.deep.equal({ operation: 'insert', table: 'deals' });
    expect(statementOf('START TRANSACTION;\ninsert into `deals` (`id`) values (?);\ninsert into `events` (`id`) values (?);\nCOMMIT')).to.deep.equal({ operation: 'insert', table: 'deals' });
  });

  it('keeps the code and drops every text that can hold a bound value', () => {
    const mysql = Object.assign(new Error("update `webhook_subscriptions` set `secret` = ? where `id` = ? - Duplicate entry 'whsec_abc' for key 'PRIMARY'"), {
      code: 'ER_DUP_ENTRY',
      errno: 1062,
      sqlState: '23000',
      sqlMessage: "Duplicate entry 'whsec_abc' for key 'PRIMARY'",
      sql: "update `webhook_subscriptions` set `secret` = 'whsec_abc' where `id` = 'wh_1'",
    });
    const out = serializeError(mysql);
    expect(out).to.deep.equal({ type: 'Error', code: 'ER_DUP_ENTRY', errno: 1062, sqlState: '23000', operation: 'update', table: 'webhook_subscriptions' });
    const timeout = Object.assign(new Error('Knex: Timeout acquiring a connection.'), { name: 'KnexTimeoutError', sql: 'select * from `api_keys` where `token_hash` = ?', bindings: ['f00dfeed'] });
    expect(JSON.stringify(serializeError(timeout))).not.to.contain('f00dfeed');
    expect(serializeError(timeout)).to.include({ type: 'KnexTimeoutError', operation: 'select', table: 'api_keys' });
  });

  it('leaves other errors as pino prints them', () => {
    const out = serializeError(new Error('boom')) as { message: string; stack: string };
    expect(out.message).to.equal('boom');
    expect(out.stack).to.contain('boom');
  });
});
