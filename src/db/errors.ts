import { pino } from 'pino';
import { isUnavailable } from './dialect.js';

/**
 * What a log line may say of a failed statement. Drivers and knex put the statement with its
 * bound values into the error (knex in `message` and `bindings`, mysql2 in `sql` and in
 * `sqlMessage`, as in "Duplicate entry 'whsec_...'"), and those values are secrets and token
 * hashes. So a database error is logged as its code, the operation and the table, never its
 * text; any other error as usual.
 */
export interface DbErrorSummary {
  type: string;
  code?: string;
  errno?: number;
  sqlState?: string;
  operation?: string;
  table?: string;
}

interface DriverError extends Error {
  code?: unknown;
  errno?: unknown;
  sqlState?: unknown;
  sql?: unknown;
  bindings?: unknown;
  sqlMessage?: unknown;
}

const STATEMENT = /^\s*(select|insert|update|delete|replace|begin|commit|rollback|savepoint|release|pragma|set|create|drop|alter)\b/i;
const TABLE = /^\s*(?:insert\s+(?:ignore\s+)?into|replace\s+into|update|delete\s+from|create\s+table|drop\s+table|alter\s+table)\s+[`"]?([\w.]+)|\bfrom\s+[`"]?([\w.]+)/i;

/** The operation and the first table a statement names, read from its text. */
export function statementOf(text: string): { operation?: string; table?: string } {
  // A write's INSERTs sent together (db/fused.ts) are told by the first of them.
  const sql = text.replace(/^\s*(?:with\s+\w+\s+as\s+\(|start\s+transaction\s*;\s*)/i, '');
  const operation = STATEMENT.exec(sql)?.[1]?.toLowerCase();
  const table = TABLE.exec(sql);
  return { ...(operation ? { operation } : {}), ...(table ? { table: table[1] ?? table[2] } : {}) };
}

/** True for an error raised by a database driver or by knex on its behalf. */
export function isDbError(error: unknown): error is DriverError {
  if (!(error instanceof Error)) return false;
  const e = error as DriverError;
  if (e.sql !== undefined || e.bindings !== undefined || e.sqlMessage !== undefined || e.sqlState !== undefined) return true;
  if (e.name === 'KnexTimeoutError' || e.name === 'SqliteError') return true;
  // node-postgres: the server's error (its SQLSTATE in `code`, with a severity and the routine that raised it).
  if (typeof (e as { severity?: unknown }).severity === 'string' && typeof e.code === 'string') return true;
  return typeof e.code === 'string' && /^(ER_|SQLITE_)/.test(e.code);
}

export function summarizeDbError(error: DriverError): DbErrorSummary {
  // knex prefixes the message with the statement (compiled without values: compileSqlOnError).
  const text = typeof error.sql === 'string' ? error.sql : error.message.includes(' - ') ? error.message.slice(0, error.message.indexOf(' - ')) : '';
  return {
    type: error.name,
    ...(typeof error.code === 'string' ? { code: error.code } : {}),
    ...(typeof error.errno === 'number' ? { errno: error.errno } : {}),
    ...(typeof error.sqlState === 'string' ? { sqlState: error.sqlState } : {}),
    ...statementOf(text),
  };
}

/**
 * pino's `err` serializer: database errors summarised, others as pino prints them. An error
 * that says the database is out of reach (ECONNREFUSED, a pool timeout) is a database error
 * too: knex writes the statement it was running into its message.
 */
export function serializeError(error: unknown): unknown {
  if (isDbError(error) || isUnavailable(error)) return summarizeDbError(error as DriverError);
  return error instanceof Error ? pino.stdSerializers.err(error) : error;
}
