/**
 * Every environment variable the service reads, declared once: how it is parsed and checked,
 * its default, and what it means. loadConfig() (config.ts) reads them through this table, their
 * types are what each one's `read` returns, and the operator's guide's settings table is written
 * from it (`npm run docs:settings`; a unit test fails when the guide and this table differ).
 */

/** A setting that cannot be used: start-up stops with one line naming it (startup.ts). */
export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`);
    this.name = 'ConfigError';
  }
}

/** One environment variable: its name, its parser (given the raw text, '' read as unset), and how the guide shows it. */
export interface Setting<T> {
  readonly name: string;
  /** The default as the guide shows it: a value in backticks, or words ("unset: none"). */
  readonly shown: string;
  /** What it means, one cell of the guide's table (Markdown). */
  readonly meaning: string;
  /** The value from the raw text (undefined when unset or empty). */
  read(raw: string | undefined): T;
}

const unset = (raw: string | undefined): raw is undefined | '' => raw === undefined || raw === '';

/** A setting read by `parse` when set, `fallback` when unset (or empty), shown in the guide as `shown`. */
function withDefault<T, F extends T | undefined>(name: string, fallback: F, shown: string, meaning: string, parse: (raw: string) => T): Setting<T | F> {
  return { name, shown, meaning, read: (raw) => (unset(raw) ? fallback : parse(raw)) };
}

/** A whole number within bounds, `fallback` when unset. */
export function integerSetting(name: string, fallback: number, min: number, max: number, meaning: string): Setting<number> {
  return withDefault(name, fallback, `\`${fallback}\``, meaning, (raw) => {
    if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be an integer, got "${raw}"`);
    const value = Number(raw);
    if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
    return value;
  });
}

/** true or 1, false or 0; unset: `fallback` (undefined: the caller decides, as DEMO's default depends on the database). */
export function booleanSetting(name: string, fallback: boolean | undefined, meaning: string, shown = `\`${String(fallback)}\``): Setting<boolean | undefined> {
  return withDefault(name, fallback, shown, meaning, (raw) => {
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    throw new ConfigError(name, `must be true or false, got "${raw}"`);
  });
}

/** One of a few words. */
export function choiceSetting<const T extends string>(name: string, fallback: T, allowed: readonly T[], meaning: string): Setting<T> {
  return withDefault(name, fallback, `\`${fallback}\``, meaning, (raw) => {
    if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
    return raw as T;
  });
}

/** Any other setting: its own parser of the text (undefined when unset; an empty text is the parser's to read). */
export function customSetting<T>(name: string, shown: string, meaning: string, read: (raw: string | undefined) => T): Setting<T> {
  return { name, shown, meaning, read };
}

/** The guide's settings table, written from `settings` in their order. */
export function settingsTable(settings: readonly Setting<unknown>[]): string {
  const rows = settings.map((s) => `| \`${s.name}\` | ${s.shown} | ${s.meaning} |`);
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}
