import { expect } from 'chai';
import { Wakeup } from '../../src/webhooks/wakeup.js';

/** Whether `sleeping` has ended by the next turn of the event loop (no clock involved: a sleep here is a minute). */
const endedByNextTurn = (sleeping: Promise<void>) => Promise.race([sleeping.then(() => true), new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))]);

describe('Wakeup (the worker’s sleep)', () => {
  it('returns at once from a sleep after a signal it has not reset, and sleeps again once reset', async () => {
    const wakeup = new Wakeup();
    wakeup.signal();
    expect(await endedByNextTurn(wakeup.sleep(60_000))).to.equal(true);
    wakeup.reset();
    const sleeping = wakeup.sleep(60_000);
    expect(await endedByNextTurn(sleeping), 'a reset sleeper waits').to.equal(false);
    wakeup.signal();
    expect(await endedByNextTurn(sleeping)).to.equal(true);
  });

  it('ends a sleep when signalled, and a sleep ends by itself when its time is up', async () => {
    const wakeup = new Wakeup();
    const sleeping = wakeup.sleep(60_000);
    expect(await endedByNextTurn(sleeping)).to.equal(false);
    setImmediate(wakeup.signal);
    await sleeping;
    wakeup.reset();
    const short = wakeup.sleep(1);
    await short;
    expect(await endedByNextTurn(short)).to.equal(true);
  });
});
