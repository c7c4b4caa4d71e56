import { createRequire } from 'node:module';
import { SpanKind, trace, type Attributes, type Tracer } from '@opentelemetry/api';
import { failed } from './tracer.js';

type Statement = { source: string };
type Method = (this: Statement, ...values: unknown[]) => unknown;

/**
 * Spans for better-sqlite3's statements, which no OpenTelemetry instrumentation covers: its
 * statements' `all`, `get` and `run` are wrapped, each call a client span of the span active
 * then, when that one records (none outside one: a worker's polling is not traced). Its text (placeholders, never
 * values) is the span's `db.query.text`. better-sqlite3 runs a statement synchronously, so the
 * span is exactly the call.
 */
export function traceSqlite(tracer: Tracer): void {
  const require = createRequire(import.meta.url);
  const Database = require('better-sqlite3') as new (file: string) => { prepare(sql: string): object; close(): void };
  const probe = new Database(':memory:');
  const prototype = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, Method>;
  probe.close();
  // A statement's span name and attributes, made once for each prepared statement (the driver
  // keeps its statements; a span takes a copy of the attributes it is given) rather than at each
  // call.
  const described = new WeakMap<Statement, { operation: string; attributes: Attributes }>();
  const describe = (statement: Statement) => {
    const source = statement.source;
    const operation = /^\s*(\w+)/.exec(source)?.[1]?.toUpperCase() ?? 'SQL';
    const description = { operation, attributes: { 'db.system.name': 'sqlite', 'db.operation.name': operation, 'db.query.text': source } };
    described.set(statement, description);
    return description;
  };
  for (const name of ['all', 'get', 'run'] as const) {
    const original = prototype[name] as Method;
    prototype[name] = function (this: Statement, ...values: unknown[]) {
      // Within a span that records only: a request sampled out costs one lookup a statement.
      if (!trace.getActiveSpan()?.isRecording()) return original.apply(this, values);
      const { operation, attributes } = described.get(this) ?? describe(this);
      const span = tracer.startSpan(operation, { kind: SpanKind.CLIENT, attributes });
      try {
        return original.apply(this, values);
      } catch (err) {
        throw failed(span, err);
      } finally {
        span.end();
      }
    };
  }
}
