/** Where the service reads the time: the system's, or a test's manual clock. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = Object.freeze({ now: () => Date.now() });
