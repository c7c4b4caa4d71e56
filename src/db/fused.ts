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
 * Values one fused statement binds at most: a write of one object binds a few dozen. A batch's
 * INSERTs bind thousands each and stay apart, so that a connection keeps no text of a batch's
 * every combination of sizes prepared (and PostgreSQL's limit, 65,535, is far).
 */
export const FUSED_VALUES = 1000;

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
 * PostgreSQL: `statements` (each FUSABLE, numbered $1...) as few statements as FUSED_VALUES allows, in
 * their order: consecutive ones whose values add up to at most FUSED_VALUES become one.
 */
export function fuse(statements: readonly Statement[]): Statement[] {
  const out: Statement[] = [];
  let run: Statement[] = [];
  let count = 0;
  const close = () => {
    if (run.length === 1 && run[0]) out.push(run[0]);
    else if (run.length > 1) out.push({ sql: fusedText(run.map((s) => s.sql), run.map((s) => s.values.length)), values: run.flatMap((s) => s.values) });
    run = [];
    count = 0;
  };
  for (const statement of statements) {
    if (run.length > 0 && count + statement.values.length > FUSED_VALUES) close();
    run.push(statement);
    count += statement.values.length;
  }
  close();
  return out;
}
