import { AsyncLocalStorage } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import { promiseHooks } from 'node:v8';
import { ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';

/**
 * Whether this runtime's AsyncLocalStorage is carried by V8 itself, each continuation keeping
 * the context it was made in (AsyncContextFrame: Node 24 by default, Node 22.7 and later with
 * `--experimental-async-context-frame`), rather than by async_hooks. Node offers no public way
 * to tell; the implementation on async_hooks is the one with `_propagate` (its hook that hands
 * the store to each new resource), checked on Node 20, 22 (with and without the flag) and 24.
 * Were a later release to rename it while still on async_hooks, this would answer true there:
 * traces would stay correct, and every request would pay async_hooks' cost, which
 * PromiseContextManager exists to avoid (test/unit/tracing.test.ts holds Node 20 and 22 to false).
 */
export function framesCarryContext(): boolean {
  return !('_propagate' in AsyncLocalStorage.prototype);
}

/**
 * The context manager for this runtime: where V8 carries AsyncLocalStorage (framesCarryContext),
 * the SDK's own, which installs no promise hook (a saturated SQLite POST traced at one in ten
 * served, of an untraced server, 0.92 with it and 0.89 with the promise hooks below on Node 24,
 * 0.86 and 0.84 on Node 22 with the flag; bench/HISTORY.md); elsewhere (Node 20; Node 22 without
 * the flag), the promise hooks of PromiseContextManager.
 */
export function contextManagerFor(frames: boolean = framesCarryContext()): ContextManager {
  return frames ? new AsyncLocalStorageContextManager().enable() : new PromiseContextManager().enable();
}

/** Where a promise made within a context keeps it, for the reactions that run after it. */
const CONTEXT = Symbol('trace context');
type Tagged = Promise<unknown> & { [CONTEXT]?: Context };

/**
 * The active trace context, carried across `await` and `.then` by V8's promise hooks.
 *
 * Why not the SDK's AsyncLocalStorage manager: on Node 20, an AsyncLocalStorage once entered
 * turns on async_hooks for the whole process, for every request, sampled or not (an async id,
 * a resource and a stack entry for each promise, each callback, each tick). On PostgreSQL with
 * Redis that was a third of what traces cost a request (bench/HISTORY.md, issue 58). This one
 * does only what the service needs: a promise made while a context is active keeps it, and
 * what runs after it (the code after an `await`, a `.then` callback) has it back. A request
 * that is not traced (sampled out, or tracing off for it) makes no context active, so its
 * promises cost one comparison each in these hooks. What every promise does pay, traced or not,
 * is V8's: on Node 20, once any promise hook is installed, all promises take its slower path
 * (a saturated SQLite POST served 0.86-0.95 of an untraced one, hooks that do nothing alike;
 * bench/HISTORY.md, issue 58).
 *
 * What it does not carry: a callback scheduled with a timer, `setImmediate`, `process.nextTick`
 * or an event listener runs in no context unless it is bound (`context.bind`, as the
 * instrumentations do for the callbacks they patch). The service's own code awaits promises
 * (db/driver.ts wraps each driver callback in one), so its spans, its log lines and the
 * outbox's `traceparent` see the request's context; the test of traces checks all three.
 * `v8.promiseHooks` is marked experimental in Node 20 and 22 (it is what async_hooks itself
 * uses for promises). Where V8 carries AsyncLocalStorage (AsyncContextFrame), the SDK's own
 * manager is used instead (contextManagerFor).
 */
export class PromiseContextManager implements ContextManager {
  private current: Context = ROOT_CONTEXT;
  /** The contexts to go back to when the reactions now running end (reactions do not nest, but are kept safe if they do). */
  private readonly outer: Context[] = [];
  private stops: Array<() => void> = [];

  active(): Context {
    return this.current;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const previous = this.current;
    this.current = context;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = previous;
    }
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target === 'function') {
      // eslint-disable-next-line @typescript-eslint/no-this-alias
      const manager = this;
      const bound = function (this: unknown, ...args: unknown[]) {
        return manager.with(context, () => (target as (...a: unknown[]) => unknown).apply(this, args));
      };
      Object.defineProperty(bound, 'length', { value: target.length });
      return bound as T;
    }
    if (target instanceof EventEmitter) return this.bindEmitter(context, target) as T;
    return target;
  }

  /**
   * An emitter's listeners added from now on run in `context` (what the SDK's managers do too);
   * removing one removes its bound form.
   */
  private bindEmitter(context: Context, emitter: EventEmitter): EventEmitter {
    type Listener = (...args: unknown[]) => void;
    const bound = new WeakMap<Listener, Listener>();
    for (const method of ['on', 'addListener', 'once', 'prependListener', 'prependOnceListener'] as const) {
      const original = emitter[method].bind(emitter);
      emitter[method] = (event: string | symbol, listener: Listener) => {
        const inContext = this.bind(context, listener);
        bound.set(listener, inContext);
        return original(event, inContext);
      };
    }
    for (const method of ['removeListener', 'off'] as const) {
      const original = emitter[method].bind(emitter);
      emitter[method] = (event: string | symbol, listener: Listener) => original(event, bound.get(listener) ?? listener);
    }
    return emitter;
  }

  enable(): this {
    if (this.stops.length > 0) return this;
    const stops = [
      promiseHooks.onInit((promise) => {
        if (this.current !== ROOT_CONTEXT) (promise as Tagged)[CONTEXT] = this.current;
      }),
      promiseHooks.onBefore((promise) => {
        this.outer.push(this.current);
        this.current = (promise as Tagged)[CONTEXT] ?? ROOT_CONTEXT;
      }),
      promiseHooks.onAfter(() => {
        this.current = this.outer.pop() ?? ROOT_CONTEXT;
      }),
    ];
    this.stops = stops as Array<() => void>;
    return this;
  }

  disable(): this {
    for (const stop of this.stops) stop();
    this.stops = [];
    this.current = ROOT_CONTEXT;
    this.outer.length = 0;
    return this;
  }
}
