import { expect } from 'chai';
import { Wakeup } from '../../src/webhooks/wakeup.js';

describe('Wakeup (the worker’s sleep)', () => {
  it('returns at once from a sleep after a signal it has not reset, and sleeps again once reset', async () => {
    const wakeup = new Wakeup();
    wakeup.signal();
    const started = Date.now();
    await wakeup.sleep(10_000);
    expect(Date.now() - started).to.be.below(1000);
    wakeup.reset();
    let woke = false;
    const sleeping = wakeup.sleep(30).then(() => (woke = true));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(woke, 'a reset sleeper waits').to.equal(false);
    await sleeping;
    expect(woke).to.equal(true);
  });

  it('ends a sleep when signalled, long before its time', async () => {
    const wakeup = new Wakeup();
    const started = Date.now();
    const sleeping = wakeup.sleep(10_000);
    setTimeout(wakeup.signal, 10);
    await sleeping;
    expect(Date.now() - started).to.be.below(5000);
  });
});
