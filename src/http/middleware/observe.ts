import type { Clock } from '../../common/clock.js';
import type { Ctx } from './context.js';

/** When a request began: the clock's time (what is recorded) and performance.now() (what durations are measured from). */
export interface Began {
  at: number;
  started: number;
}

/** Something told of every answer once it is final (errors rendered): metrics, usage, the logs. */
export type Observer = (ctx: Ctx, began: Began) => void;

/**
 * The outermost middleware: the request's id, then the rest of the chain with any error it
 * throws rendered as problem+json (`render`), then each observer with the final answer. One
 * layer for what were five, each its own file still: every layer of Koa's chain costs an async
 * frame and a promise per request.
 */
export function observe(clock: Clock, identify: (ctx: Ctx) => void, render: (ctx: Ctx, caught: unknown) => void, observers: readonly Observer[]) {
  return (ctx: Ctx, next: () => Promise<unknown>): Promise<void> => {
    identify(ctx);
    const began: Began = { at: clock.now(), started: performance.now() };
    const observed = () => {
      for (const observer of observers) observer(ctx, began);
    };
    // Reactions to the chain rather than an async frame and its await: a promise less a request.
    return next().then(observed, (caught: unknown) => {
      try {
        render(ctx, caught);
      } finally {
        observed();
      }
    });
  };
}
