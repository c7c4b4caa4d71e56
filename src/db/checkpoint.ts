import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How often the thread copies the log back into the database file. */
export const CHECKPOINT_INTERVAL_MS = 100;

/**
 * Pages of log (4 KiB each) past which the writer checkpoints on its own (SQLite's default is
 * 1,000), should the thread fall behind or be gone: the log stays bounded either way.
 */
export const CHECKPOINT_BACKSTOP_PAGES = 10_000;

/**
 * Bytes the log file is cut back to when SQLite starts it over after a complete checkpoint
 * (`journal_size_limit`): without it the file keeps the largest size it ever reached (up to the
 * backstop, about 40 MB, after a burst such as a migration or an import). The log between two
 * of the thread's checkpoints stays well under this, so a file that is reused is not cut and
 * grown again at every turn.
 */
export const LOG_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * The thread's code. A PASSIVE checkpoint copies what it can without waiting for readers or the
 * writer, and never blocks them; the file does not exist before the first migration, and a
 * checkpoint another process is running answers "busy": both are tried again at the next tick.
 * Any other failure is told to the process once (its writer's backstop still bounds the log).
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
let db;
let told = false;
const tick = () => {
  try {
    db ??= new Database(workerData.filename, { fileMustExist: true, timeout: 0 });
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    if (!told && err.code !== 'SQLITE_BUSY' && err.code !== 'SQLITE_CANTOPEN') {
      told = true;
      parentPort.postMessage(String(err.message));
    }
  }
};
const timer = setInterval(tick, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db?.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /** Stops the thread (its connection closed) and resolves once it has exited. */
  close(): Promise<void>;
}

/**
 * SQLite's write-ahead log is copied back into the database file by a checkpoint, which SQLite
 * runs inside the COMMIT that crosses 1,000 pages of log: synchronously, with an fsync, on the
 * event loop of whichever request committed. Here a thread of the process runs it instead,
 * every 100 ms, on a connection of its own, while the writer only checkpoints past
 * CHECKPOINT_BACKSTOP_PAGES (db/connect.ts). Measured with bench:batch on this machine, 100
 * single POSTs went from 75 to 72 ms and a batch of 100 from 6.3 to 5.4 ms.
 * `onError` hears a failure other than "busy" once.
 */
export function startCheckpointer(filename: string, onError: (message: string) => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD, { eval: true, execArgv: [], workerData: { filename, driver, intervalMs: CHECKPOINT_INTERVAL_MS } });
  // Plain JavaScript, no TypeScript loader (execArgv: []); a process ends when its work does:
  // the thread never keeps it alive.
  worker.unref();
  worker.on('message', (message: string) => onError(message));
  worker.on('error', (err) => onError(err.message));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    close() {
      worker.postMessage('close');
      return exited;
    },
  };
}
