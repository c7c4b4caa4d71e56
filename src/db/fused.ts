/**
 * The INSERTs of one write, which nothing reads back before its COMMIT (a create's row, its
 * search terms, its event, its Idempotency-Key), wait and go together (db/tx.ts): on MySQL in one
 * round trip of several statements, on PostgreSQL as one statement: `WITH s0 AS (INSERT ...), s1
 * AS (INSERT ...) INSERT ...`. A statement in a WITH may write (PostgreSQL runs each once, and
 * checks the foreign keys at the end of the whole statement, when every row is there); one
 * statement commits on its own, so a write that is nothing else needs no BEGIN and no COMMIT.
 */

/** A statement as the driver takes it: its text (values as $1, $2...) and its values. */
export interface Statement {
  readonly sql: string;
  readonly values: readonly unknown[];
}

/** What may join a fused statement: an INSERT (its rows are not read back: `run` returns nothing). */
export const FUSABLE = /^\s*insert\s+into\s/i;

/**
 * Values a write's INSERTs bind at most to go together: a write of one object binds a few
 * dozen. A batch's INSERTs bind thousands each and go one by one, as prepared statements of
 * the few shapes a batch has, so that no connection keeps a text prepared for each combination
 * of a batch's sizes (and PostgreSQL's limit, 65,535 values a statement, is far).
 */
export const FUSED_VALUES = 1000;

/** Whether `statements` go together (see FUSED_VALUES). */
export function together(statements: readonly Statement[]): boolean {
  let count = 0;
  for (const statement of statements) count += statement.values.length;
  return count <= FUSED_VALUES;
}

/** Fused texts kept, by the texts they join (past this, a text is made each time). */
const KEPT = 2000;
const texts = new Map<string, string>();

/** One text for `sqls` in order, each one's $n moved past the values of those before it. */
function fusedText(sqls: readonly string[], counts: readonly number[]): string {
  const id = sqls.join('\0');
  const kept = texts.get(id);
  if (kept !== undefined) return kept;
  let offset = 0;
  const moved = sqls.map((sql, i) => {
    const by = offset;
    offset += counts[i] ?? 0;
    return by === 0 ? sql.trim() : sql.trim().replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + by}`);
  });
  const last = moved.pop() ?? '';
  const text = `WITH ${moved.map((sql, i) => `s${i} AS (${sql})`).join(', ')} ${last}`;
  if (texts.size < KEPT) texts.set(id, text);
  return text;
}

/**
 * PostgreSQL: `statements` (each FUSABLE, numbered $1...) as one statement when they go
 * together, else as they are.
 */
export function fuse(statements: readonly Statement[]): Statement[] {
  if (statements.length < 2 || !together(statements)) return [...statements];
  return [{ sql: fusedText(statements.map((s) => s.sql), statements.map((s) => s.values.length)), values: statements.flatMap((s) => s.values) }];
}
