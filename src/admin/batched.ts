/**
 * What the usage meter and the request log have in common: work kept in process memory and
 * written in batches, off the request path, every `everyMs` and whenever asked, one write at a
 * time (a flush asked for during a write runs after it); a stop writes what is left.
 */
export abstract class BatchedWriter {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private queued = 0;

  constructor(private readonly everyMs: number) {}

  /** Writes what is kept so far; never throws (each writer keeps or drops what it could not write). */
  protected abstract write(): Promise<void>;

  /** Whether a write is under way or waiting. */
  protected get flushing(): boolean {
    return this.queued > 0;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.everyMs);
    this.timer.unref();
  }

  flush(): Promise<void> {
    this.queued += 1;
    this.running = this.running.then(() => this.write()).finally(() => void (this.queued -= 1));
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
