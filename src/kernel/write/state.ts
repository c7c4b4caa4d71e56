import { ApiError } from '../../common/errors.js';
import type { Row } from '../model/index.js';
import type { CompiledResource } from '../registry/index.js';

function refuse(resource: CompiledResource, detail: string, allowed: readonly string[]): ApiError {
  const field = resource.def.state?.field ?? '';
  return new ApiError('invalid_transition', detail, {
    errors: [{ pointer: `/${field}`, message: allowed.length > 0 ? `allowed: ${allowed.join(', ')}` : 'no move is allowed' }],
  });
}

/** The state a new object starts in: its state field's default. */
export function initialState(resource: CompiledResource): unknown {
  const state = resource.def.state;
  return state ? resource.def.fields[state.field]?.default : undefined;
}

/** A new object of a machine starts in its initial state; a client may name it, but no other. */
export function checkInitialState(resource: CompiledResource, body: Row): void {
  const state = resource.def.state;
  if (!state || state.transitions === 'free' || body[state.field] === undefined) return;
  const initial = String(initialState(resource));
  if (body[state.field] !== initial) {
    const next = state.transitions[initial] ?? [];
    throw refuse(resource, `A new ${resource.def.name} starts with ${state.field} ${initial}, not ${String(body[state.field])}; from ${initial} it can move to ${next.join(' or ') || 'nothing'}.`, [initial]);
  }
}

/** A move the machine does not allow is refused, naming the moves it does allow. */
export function checkTransition(resource: CompiledResource, before: Row, body: Row): void {
  const state = resource.def.state;
  if (!state || state.transitions === 'free') return;
  const from = String(before[state.field]);
  const to = body[state.field];
  if (to === undefined || to === from) return;
  const allowed = state.transitions[from] ?? [];
  if (!allowed.includes(String(to))) {
    const detail =
      allowed.length > 0
        ? `This ${resource.def.name}'s ${state.field} is ${from}; it can move to ${allowed.join(' or ')}, not ${String(to)}.`
        : `This ${resource.def.name}'s ${state.field} is ${from}, which is final; it cannot move to ${String(to)}.`;
    throw refuse(resource, detail, allowed);
  }
}

/** Stamps (stored as epoch milliseconds) that the state reached by this write sets. */
export function stampsFor(resource: CompiledResource, fromState: unknown, toState: unknown, now: number): Row {
  const state = resource.def.state;
  const stamps: Row = {};
  if (!state?.stamps || toState === undefined || toState === fromState) return stamps;
  const field = state.stamps[String(toState)];
  if (field) stamps[field] = now;
  return stamps;
}
