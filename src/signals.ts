/**
 * SIGTERM and SIGINT, heard from an entry point's first line on, before its modules load (this
 * file imports nothing, so it is ready in milliseconds). Node's default would kill a process
 * signalled during its start-up (exit 143). Instead, during start-up a signal stops the process
 * with 0 at once, closing what it was given to close, unless a step that must not be cut short
 * (a migration) is in progress: then once that step is over. Once the process runs, a signal
 * calls its own stop.
 */
export class StopSignals {
  private signal: string | undefined;
  private handler: ((signal: string) => void) | undefined;
  private cleanup: (() => Promise<unknown>) | undefined;
  private announce: (signal: string) => void = () => undefined;
  private busy = 0;
  private exiting = false;

  constructor() {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.on(signal, () => {
        this.signal ??= signal;
        if (this.handler) this.handler(signal);
        else if (this.busy === 0) void this.exit();
      });
    }
  }

  /** A signal stopped start-up: what fails from here on is the stop's doing, not a fault. */
  get stopping(): boolean {
    return this.exiting;
  }

  /** What a stop during start-up closes (the database pool, Redis), and who says so in the log. */
  closes(cleanup: () => Promise<unknown>, announce: (signal: string) => void): void {
    this.cleanup = cleanup;
    this.announce = announce;
  }

  /** Runs a start-up step that a signal must not cut short; a signal that came meanwhile stops the process after it. */
  async finishing<T>(step: Promise<T>): Promise<T> {
    this.busy += 1;
    try {
      return await step;
    } finally {
      this.busy -= 1;
      if (this.signal !== undefined && this.busy === 0 && !this.handler) await this.exit();
    }
  }

  /** From now on a signal calls `stop`; one that came during start-up calls it at once. */
  whenStopped(stop: (signal: string) => void): void {
    this.handler = stop;
    if (this.signal !== undefined) stop(this.signal);
  }

  private async exit(): Promise<never> {
    if (!this.exiting) {
      this.exiting = true;
      this.announce(this.signal ?? 'SIGTERM');
      await this.cleanup?.().catch(() => undefined);
      process.exit(0);
    }
    return new Promise<never>(() => undefined);
  }
}
