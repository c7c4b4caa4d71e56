import { ApiError } from '../../common/errors.js';
import type { Row } from './define.js';
import type { FieldKind } from './kinds.js';

/** A money field and the field of the currency its amount is counted in (`money()` declares both). */
export interface MoneyPair {
  readonly amount: string;
  readonly currency: string;
}

/** Each money field of a resource with its currency: the resource's one field of the currency kind (none without one). */
export function moneyPairs(fieldKinds: Readonly<Record<string, FieldKind>>): MoneyPair[] {
  const currencies = Object.keys(fieldKinds).filter((field) => fieldKinds[field]?.name === 'currency');
  if (currencies.length !== 1) return [];
  const currency = currencies[0] as string;
  return Object.keys(fieldKinds)
    .filter((field) => fieldKinds[field]?.name === 'money')
    .map((amount) => ({ amount, currency }));
}

/**
 * An amount is counted in minor units of its currency, so a write that leaves an amount
 * without one is refused (422, pointing at the currency): a new object's body, or a change
 * that sets the amount or clears the currency (`before`, the object as it stands). A change
 * that touches neither is let through, whatever the object held before.
 */
export function checkMoney(pairs: readonly MoneyPair[], body: Row, before?: Row): void {
  for (const { amount, currency } of pairs) {
    if (before && body[amount] === undefined && body[currency] === undefined) continue;
    const value = body[amount] !== undefined ? body[amount] : before?.[amount];
    const unit = body[currency] !== undefined ? body[currency] : before?.[currency];
    if (value == null || unit != null) continue;
    const message =
      body[currency] === null
        ? `cannot be null while ${amount} is ${String(value)}: set ${amount} to null with it, or give another currency`
        : `is required when ${amount} is set: an amount is counted in minor units of its currency`;
    throw new ApiError('validation_failed', `${currency} ${message}.`, { errors: [{ pointer: `/${currency}`, message }] });
  }
}
