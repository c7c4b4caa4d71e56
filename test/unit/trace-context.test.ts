import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import { ROOT_CONTEXT, createContextKey, type Context } from '@opentelemetry/api';
import { PromiseContextManager } from '../../src/tracing/context.js';

const KEY = createContextKey('test');
const named = (name: string): Context => ROOT_CONTEXT.setValue(KEY, name);
const nameIn = (manager: PromiseContextManager) => manager.active().getValue(KEY);
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('trace context across promises (tracing/context.ts)', () => {
  let manager: PromiseContextManager;
  beforeEach(() => {
    manager = new PromiseContextManager().enable();
  });
  afterEach(() => {
    manager.disable();
  });

  it('makes a context active for a call and what it awaits, and the one before it active again after', async () => {
    expect(manager.active()).to.equal(ROOT_CONTEXT);
    const seen: unknown[] = [];
    const result = manager.with(named('a'), async (n: number) => {
      seen.push(nameIn(manager));
      await tick();
      seen.push(nameIn(manager));
      await Promise.resolve().then(() => seen.push(nameIn(manager)));
      return n * 2;
    }, undefined, 21);
    expect(manager.active()).to.equal(ROOT_CONTEXT);
    expect(await result).to.equal(42);
    expect(seen).to.deep.equal(['a', 'a', 'a']);
    expect(manager.active()).to.equal(ROOT_CONTEXT);
  });

  it('keeps two interleaved calls each in its own context, and nests', async () => {
    const run = (name: string) =>
      manager.with(named(name), async () => {
        const seen: unknown[] = [];
        for (let i = 0; i < 3; i++) {
          await tick();
          seen.push(nameIn(manager));
          seen.push(await manager.with(named(`${name}.inner`), async () => {
            await tick();
            return nameIn(manager);
          }));
          seen.push(nameIn(manager));
        }
        return seen;
      });
    const [a, b] = await Promise.all([run('a'), run('b')]);
    expect(a).to.deep.equal(Array.from({ length: 3 }, () => ['a', 'a.inner', 'a']).flat());
    expect(b).to.deep.equal(Array.from({ length: 3 }, () => ['b', 'b.inner', 'b']).flat());
  });

  it('restores the context before when the call throws, at once or later', async () => {
    expect(() => manager.with(named('a'), () => { throw new Error('boom'); })).to.throw('boom');
    expect(manager.active()).to.equal(ROOT_CONTEXT);
    let after: unknown;
    await manager
      .with(named('b'), async () => {
        await tick();
        throw new Error('later');
      })
      .catch(() => (after = nameIn(manager)));
    // The catch was attached outside any context.
    expect(after).to.equal(undefined);
  });

  it('carries a context to a callback only when bound (a timer is not a promise), and to an emitter bound to it', async () => {
    const seen: Record<string, unknown> = {};
    const emitter = new EventEmitter();
    await manager.with(named('a'), async () => {
      await new Promise<void>((resolve) => setTimeout(() => ((seen.timer = nameIn(manager)), resolve()), 1));
      await new Promise<void>((resolve) => setTimeout(manager.bind(manager.active(), () => ((seen.bound = nameIn(manager)), resolve())), 1));
      manager.bind(manager.active(), emitter).on('event', () => (seen.emitter = nameIn(manager)));
    });
    emitter.emit('event');
    expect(seen).to.deep.equal({ timer: undefined, bound: 'a', emitter: 'a' });
    // A listener added to a bound emitter is removed by itself, as it was given.
    let calls = 0;
    const listener = () => calls++;
    emitter.on('other', listener);
    emitter.emit('other');
    emitter.off('other', listener);
    emitter.emit('other');
    expect(calls).to.equal(1);
    expect(emitter.listenerCount('other')).to.equal(0);
    const bound = manager.bind(named('x'), function (this: unknown, a: number, b: number) {
      return [this, a + b, nameIn(manager)];
    });
    expect(bound.length).to.equal(2);
    expect(bound.call('self', 1, 2)).to.deep.equal(['self', 3, 'x']);
  });

  it('carries nothing once disabled', async () => {
    manager.disable();
    const seen = await manager.with(named('a'), async () => {
      await tick();
      return nameIn(manager);
    });
    expect(seen).to.equal(undefined);
  });
});
