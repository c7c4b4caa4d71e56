/**
 * What wakes a sleeping worker: a signal (events were written, an attempt finished) or the end
 * of its sleep. A signal that arrives while the worker is awake is kept, so that its next sleep
 * returns at once: nothing announced mid-cycle waits for a poll.
 */
export class Wakeup {
  private signalled = false;
  private wake: (() => void) | undefined;

  /** Wakes the sleeper, or makes its next sleep return at once. */
  readonly signal = (): void => {
    this.signalled = true;
    this.wake?.();
  };

  /** Forgets the signals so far: what they announced is about to be looked at. */
  reset(): void {
    this.signalled = false;
  }

  /** Sleeps until signalled or `ms` pass. */
  sleep(ms: number): Promise<void> {
    if (this.signalled) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
