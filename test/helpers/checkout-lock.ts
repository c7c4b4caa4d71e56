import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT_DIR } from '../../src/common/config.js';

/** Whether the process that made the lock `dir` is gone (its pid file names no live process). */
function holderGone(dir: string): boolean {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8'));
  } catch {
    // Made but not yet named: its holder is between two calls, unless that was long ago.
    try {
      return Date.now() - fs.statSync(dir).mtimeMs > 10_000;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Holds `name`, something of the checkout's own that the backends' suites share when they run
 * side by side (dist/, which `npm run build` deletes and writes again): a folder under
 * build/ made at once or not at all, naming its holder's pid; one whose holder is gone is taken
 * over. Resolves with the function that lets it go; waits at most `timeoutMs`.
 */
export async function holdCheckout(name: string, timeoutMs = 400_000): Promise<() => void> {
  const dir = path.join(ROOT_DIR, 'build', `.held-${name}`);
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, 'pid'), String(process.pid));
      return () => fs.rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (holderGone(dir)) fs.rmSync(dir, { recursive: true, force: true });
    else if (Date.now() > deadline) throw new Error(`${dir} is still held by another process after ${timeoutMs} ms`);
    else await sleep(200);
  }
}
