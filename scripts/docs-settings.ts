/**
 * Writes the operator's guide's settings table (docs/operator.md, between its settings markers)
 * from the settings' declaration (src/common/config.ts SETTINGS): `npm run docs:settings`.
 * With --check, writes nothing and exits 1 when the guide's table differs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ROOT_DIR, SETTINGS } from '../src/common/config.js';
import { settingsTable } from '../src/common/settings.js';

export const GUIDE = path.join(ROOT_DIR, 'docs', 'operator.md');
const BEGIN = '<!-- settings: written by `npm run docs:settings` from src/common/config.ts; edit them there -->';
const END = '<!-- end of settings -->';

/** The guide's text with its settings table as SETTINGS writes it. */
export function withSettingsTable(guide: string): string {
  const start = guide.indexOf(BEGIN);
  const end = guide.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${GUIDE} has no settings markers (${BEGIN} ... ${END})`);
  return `${guide.slice(0, start + BEGIN.length)}\n${settingsTable(Object.values(SETTINGS))}\n${guide.slice(end)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const guide = fs.readFileSync(GUIDE, 'utf8');
  const written = withSettingsTable(guide);
  if (process.argv.includes('--check')) {
    if (written !== guide) {
      console.error(`${path.relative(process.cwd(), GUIDE)}: its settings table differs from src/common/config.ts; run npm run docs:settings`);
      process.exit(1);
    }
  } else if (written !== guide) {
    fs.writeFileSync(GUIDE, written);
    console.log(`wrote the settings table of ${path.relative(process.cwd(), GUIDE)}`);
  } else console.log(`${path.relative(process.cwd(), GUIDE)}: its settings table is up to date`);
}
