import fs from 'node:fs';
import path from 'node:path';
import { ROOT_DIR } from '../../src/common/config.js';

/**
 * A plugins folder and a migrations folder of a test's own, at the depth of plugins/ and
 * migrations/ under the checkout, the shipped plugins copied in: a fixture placed there imports
 * '../src/...' and 'workspace-api/plugin' exactly as a plugin in plugins/ does. Named
 * `.<prefix>-plugins-*` and `.<prefix>-migrations-*` (ignored by git).
 */
export function besidePlugins(prefix: string): { plugins: string; migrations: string; place(fixture: string): void; remove(): void } {
  const plugins = fs.mkdtempSync(path.join(ROOT_DIR, `.${prefix}-plugins-`));
  const migrations = fs.mkdtempSync(path.join(ROOT_DIR, `.${prefix}-migrations-`));
  for (const file of fs.readdirSync(path.join(ROOT_DIR, 'plugins'))) fs.copyFileSync(path.join(ROOT_DIR, 'plugins', file), path.join(plugins, file));
  return {
    plugins,
    migrations,
    /**
     * Copies a fixture (a migration when its name starts with a timestamp, else a plugin) as its
     * author wrote it: the fixtures under test/<folder>/<folder>/ import '../../../src/', which
     * beside plugins/ reads '../src/'.
     */
    place(fixture) {
      const file = path.basename(fixture);
      const text = fs.readFileSync(fixture, 'utf8').replaceAll("'../../../src/", "'../src/");
      fs.writeFileSync(path.join(/^\d{14}_/.test(file) ? migrations : plugins, file), text);
    },
    remove() {
      for (const dir of [plugins, migrations]) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
