import net from 'node:net';

/**
 * A TCP proxy in front of MariaDB or PostgreSQL that can cut a connection exactly at COMMIT: the COMMIT
 * reaches the server (which commits), and the client's connection is closed before the answer
 * comes back, as when a network drops at the worst moment. While `refuse` is set, new
 * connections are closed at once (the database "is still away").
 */
export interface CommitCutter {
  url: string;
  /** Cut the next connection that sends COMMIT (with `at`, the next that carried `at`), once. */
  armed: boolean;
  /**
   * A value the write to cut carries (a title): only the connection that sent it is cut, at its
   * COMMIT, so that a commit of something else in the background (a fan-out after an earlier
   * write) is never taken for it. On PostgreSQL a write made of INSERTs alone is one statement
   * that commits by itself, with no COMMIT (db/fused.ts): sent outside a transaction, the
   * statement carrying `at` is the commit.
   */
  at?: string;
  /** Refuse new connections; a cut made while set also closes every connection open then. */
  refuse: boolean;
  /** How many connections were cut at COMMIT. */
  cuts: number;
  /** Closes every connection open now (with `refuse`, the database is gone for the client). */
  dropAll(): void;
  close(): Promise<void>;
}

/**
 * COMMIT as each protocol sends it: PostgreSQL's simple Query message ('Q', its length, the text
 * ending in a zero byte); MySQL's COM_QUERY, whose text ends with it (alone, or after a write's
 * INSERTs, sent with it in one round trip: db/tx.ts). The client waits for the answer before it
 * sends more, so the COMMIT is the last thing in what it sent.
 */
const COMMIT = {
  mysql: Buffer.from('COMMIT'),
  postgres: Buffer.from([0x51, 0, 0, 0, 11, ...Buffer.from('COMMIT'), 0]),
};
const commits = (chunk: Buffer, postgres: boolean) => (postgres ? chunk.includes(COMMIT.postgres) : chunk.subarray(-COMMIT.mysql.length).equals(COMMIT.mysql));

export async function startCommitCutter(databaseUrl: string): Promise<CommitCutter> {
  const target = new URL(databaseUrl);
  const postgres = target.protocol.startsWith('postgres');
  const sockets = new Set<net.Socket>();
  const cutter = { armed: false, refuse: false, cuts: 0 } as CommitCutter;
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    if (cutter.refuse) {
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(target.port || (postgres ? 5432 : 3306)), target.hostname);
    sockets.add(upstream);
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.destroy());
    let cutting = false;
    // Whether this connection sent `at`, and (PostgreSQL) whether the server's last word was
    // that it is in a transaction: ReadyForQuery, 'Z' with length 5 and 'I', 'T' or 'E', ends
    // each answer.
    let carried = false;
    let inTransaction = false;
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      if (!cutter.armed) return;
      const carries = cutter.at !== undefined && chunk.includes(cutter.at);
      carried ||= carries;
      const cut = cutter.at === undefined ? commits(chunk, postgres) : carried && (commits(chunk, postgres) || (postgres && carries && !inTransaction));
      if (cut) {
        cutter.armed = false;
        cutting = true;
        cutter.cuts++;
        // Long enough for the server to commit; its answer is never passed on. With `refuse`
        // the database goes away for the client: every connection drops with this one (an idle
        // one left in the pool would otherwise answer whatever is asked next).
        setTimeout(() => {
          if (cutter.refuse) cutter.dropAll();
          client.destroy();
          upstream.destroy();
        }, 100);
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      const z = chunk.length - 6;
      if (postgres && z >= 0 && chunk[z] === 0x5a && chunk.readUInt32BE(z + 1) === 5) inTransaction = chunk[z + 5] !== 0x49;
      if (!cutting) client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  cutter.url = url.href;
  cutter.dropAll = () => {
    for (const s of sockets) s.destroy();
  };
  cutter.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return cutter;
}
