import { expect } from 'chai';
import { createNotifier, SIGNAL_SPACING_MS, type Channel } from '../../src/events/notify.js';

/** A channel that counts what it is asked to send, and when. */
function countingChannel() {
  const sent: number[] = [];
  const channel: Channel = {
    listen: () => undefined,
    publish: () => void sent.push(performance.now()),
    listening: () => true,
    close: async () => undefined,
  };
  return { channel, sent };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('the outbox signal between processes (events/notify.ts)', () => {
  it('sends one message for the commits of one turn of the event loop, by the next turn, and signals this process for each', async () => {
    const { channel, sent } = countingChannel();
    const notifier = createNotifier(channel);
    let heard = 0;
    notifier.subscribe(() => (heard += 1));
    notifier.notify();
    notifier.notify();
    notifier.notify();
    expect(heard).to.equal(3);
    await nextTurn();
    expect(sent).to.have.length(1);
    await notifier.close();
  });

  it('while commits keep coming, sends one message a spacing at most, and one after the last commit', async () => {
    const { channel, sent } = countingChannel();
    const notifier = createNotifier(channel);
    const started = performance.now();
    let turns = 0;
    let last = 0;
    // Commits in 200 turns of the event loop at least, over 8 spacings at least.
    while (turns < 200 || performance.now() - started < 8 * SIGNAL_SPACING_MS) {
      notifier.notify();
      last = performance.now();
      turns += 1;
      await nextTurn();
    }
    // The message owed for the last commits, however late a busy machine fires its timer.
    for (let waited = 0; (sent.at(-1) ?? 0) < last && waited < 10_000; waited += SIGNAL_SPACING_MS) await sleep(SIGNAL_SPACING_MS);
    // Each message after the first waits out a spacing since the one before, where one went every
    // turn (a fraction of a millisecond apart). The median gap, half a spacing at least by this
    // clock: a timer counts from the event loop's time, which a stalled process can leave behind.
    expect(sent.length).to.be.at.least(3);
    const gaps = sent.slice(1).map((at, i) => at - sent[i]!).sort((a, b) => a - b);
    expect(gaps[Math.floor(gaps.length / 2)]).to.be.at.least(SIGNAL_SPACING_MS / 2);
    expect(sent.at(-1), 'the last commit is not left unsignalled').to.be.at.least(last);
    await notifier.close();
  });

  it('signals at once again after a quiet spell, and sends nothing once closed', async () => {
    const { channel, sent } = countingChannel();
    const notifier = createNotifier(channel);
    notifier.notify();
    await nextTurn();
    await sleep(2 * SIGNAL_SPACING_MS);
    notifier.notify();
    await nextTurn();
    expect(sent).to.have.length(2);
    notifier.notify();
    await notifier.close();
    await sleep(2 * SIGNAL_SPACING_MS);
    expect(sent).to.have.length(2);
  });
});
