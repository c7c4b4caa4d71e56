import { expect } from 'chai';
import { waitFor } from '../helpers/app.js';
import { startServer } from '../helpers/processes.js';

/**
 * The server writes its log to stdout asynchronously (src/deps.ts createLogger): a line still
 * leaves at once, and none is lost when the process stops on SIGTERM.
 */
describe("the server's log on stdout", function () {
  this.timeout(60_000);

  const linesOf = (stdout: string) =>
    stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it("writes a request's line while the server keeps running, and every line of a burst by the time it exits on SIGTERM", async () => {
    const server = await startServer();
    try {
      const first = await fetch(`${server.url}/v1/deals`, { headers: { 'x-request-id': 'log-stream-first' } });
      expect(first.status).to.equal(401);
      await waitFor(() => linesOf(server.stdout()).some((line) => line.request_id === 'log-stream-first'), 10_000, 'the first request’s line on stdout');

      const ids = Array.from({ length: 300 }, (_, i) => `log-stream-${i}`);
      const answers = await Promise.all(ids.map((id) => fetch(`${server.url}/v1/deals`, { headers: { 'x-request-id': id } })));
      // Past 30 failed authentications a minute from one address, 429 (section 3): each is logged all the same.
      expect(answers.every((answer) => answer.status === 401 || answer.status === 429)).to.equal(true);
      expect(await server.stop('SIGTERM')).to.equal(0);

      const logged = new Set(linesOf(server.stdout()).filter((line) => line.msg === 'request').map((line) => line.request_id));
      expect(ids.filter((id) => !logged.has(id)), 'requests without their line').to.deep.equal([]);
    } finally {
      await server.stop('SIGKILL');
    }
  });
});
