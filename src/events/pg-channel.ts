import type { Knex } from 'knex';
import pg from 'pg';
import type { Logger } from 'pino';
import { serverConnection } from '../db/connect.js';
import type { Channel } from './notify.js';

/** The channel's name: NOTIFY reaches the sessions of the same database, so one name serves. */
const NAME = 'workspace_api_outbox';

/** How long a lost listening connection waits before it connects again. */
const RECONNECT_MS = 1000;

/**
 * PostgreSQL's LISTEN/NOTIFY, for a PostgreSQL deployment without Redis: a message is sent
 * through the pool (`pg_notify`) and heard on one connection of the process's own that LISTENs,
 * opened at the first subscriber and opened again a second after it is lost.
 */
export function pgChannel(url: string, db: Knex, log: Logger): Channel {
  let client: pg.Client | undefined;
  let ready = false;
  let closed = false;
  /** Listening was asked for (once is enough: a lost connection is opened again by itself). */
  let started = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = (onSignal: () => void) => {
    const mine = new pg.Client({ ...serverConnection(url, 5432), application_name: 'workspace-api listen', connectionTimeoutMillis: 5000 });
    client = mine;
    const lost = (err?: Error) => {
      if (client !== mine) return;
      ready = false;
      client = undefined;
      mine.end().catch(() => undefined);
      if (err) log.debug({ err: err.message }, 'notifier listener lost; workers poll until it is back');
      if (!closed) retry = setTimeout(() => connect(onSignal), RECONNECT_MS).unref();
    };
    mine.on('notification', onSignal);
    mine.on('error', lost);
    mine.on('end', () => lost());
    mine
      .connect()
      .then(() => mine.query(`LISTEN ${NAME}`))
      .then(() => {
        if (client === mine) ready = true;
      })
      .catch(lost);
  };

  return {
    listen(onSignal) {
      if (started || closed) return;
      started = true;
      connect(onSignal);
    },
    publish() {
      db.raw('SELECT pg_notify(?, ?)', [NAME, '1']).catch(() => undefined);
    },
    listening: () => ready,
    async close() {
      closed = true;
      clearTimeout(retry);
      const open = client;
      client = undefined;
      ready = false;
      await open?.end().catch(() => undefined);
    },
  };
}
