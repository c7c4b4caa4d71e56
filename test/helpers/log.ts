import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { createLogger } from '../../src/deps.js';

/** The service's own logger (serializers, redaction) writing lines the test can read. */
export function capturedLog(level = 'warn'): { log: Logger; lines: () => Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger(level, sink), lines: () => lines };
}
