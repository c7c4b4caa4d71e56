import net from 'node:net';
import { expect } from 'chai';
import { isUnavailable } from '../../src/db/dialect.js';

describe('a database that cannot be reached now (503), told from a bug (500)', () => {
  it('counts a write to a connection the server has just ended (EPIPE, as mysql2 meets it on a pooled connection cut a moment before)', async () => {
    const server = net.createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    client.on('error', () => undefined);
    const error = await new Promise<Error>((resolve) => client.on('end', () => setTimeout(() => client.write('x', (err) => resolve(err as Error)), 10)));
    server.close();
    expect((error as { code?: string }).code).to.equal('EPIPE');
    expect(isUnavailable(error)).to.equal(true);
  });

  it('counts the other ways a connection goes, and not an error of the statement itself', () => {
    const coded = (code: string) => Object.assign(new Error(code), { code });
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'PROTOCOL_CONNECTION_LOST', '57P01']) expect(isUnavailable(coded(code)), code).to.equal(true);
    for (const code of ['ER_PARSE_ERROR', '22003', 'ER_DUP_ENTRY']) expect(isUnavailable(coded(code)), code).to.equal(false);
  });
});
