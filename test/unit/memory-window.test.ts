import { expect } from 'chai';
import { MemoryWindowStore } from '../../src/ratelimit/memory-store.js';
import { WINDOW_MS } from '../../src/ratelimit/window.js';

/**
 * The in-memory limiter (the embedded default's, and Redis's fallback) answers at once, not with
 * a promise: the rate-limit layer then passes a request on with no promise of its own.
 */
describe('the in-memory sliding window (src/ratelimit/memory-store.ts)', () => {
  let now = Date.UTC(2026, 0, 1);
  const clock = { now: () => now };
  let store: MemoryWindowStore;
  beforeEach(() => {
    now = Date.UTC(2026, 0, 1);
    store = new MemoryWindowStore(clock);
  });
  afterEach(() => store.close());

  it('answers with the count itself, not a promise', () => {
    const result = store.hit('key:a', 2, {});
    expect(result).not.to.be.instanceOf(Promise);
    expect(result).to.deep.equal({ admitted: true, remaining: 1, resetMs: WINDOW_MS });
  });

  it('admits up to the limit in the window, refuses the next without counting it, and admits again once the oldest has left', () => {
    expect(store.hit('key:a', 2, {}).admitted).to.equal(true);
    now += 1000;
    expect(store.hit('key:a', 2, {})).to.deep.equal({ admitted: true, remaining: 0, resetMs: WINDOW_MS - 1000 });
    const refused = store.hit('key:a', 2, {});
    expect(refused).to.deep.equal({ admitted: false, remaining: 0, resetMs: WINDOW_MS - 1000 });
    // Another key has its own window.
    expect(store.hit('key:b', 2, {}).admitted).to.equal(true);
    now += WINDOW_MS - 1000;
    // The first admission has left the window; the refused one was never counted.
    expect(store.hit('key:a', 2, {})).to.deep.equal({ admitted: true, remaining: 0, resetMs: 1000 });
  });

  it('uses the time it is given over its clock', () => {
    store.hit('key:a', 1, { now: now - WINDOW_MS });
    expect(store.hit('key:a', 1, {}).admitted).to.equal(true);
  });
});
