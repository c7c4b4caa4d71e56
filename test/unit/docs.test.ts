import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT_DIR, SETTINGS } from '../../src/common/config.js';
import { anchors, documents, parts, relativeLinks } from '../helpers/docs.js';
import { withSettingsTable } from '../../scripts/docs-settings.js';

describe('the documentation, by reader', () => {
  const read = (file: string) => fs.readFileSync(path.join(ROOT_DIR, file), 'utf8');

  it('resolves every relative link, to a file of the repository and, with a #, to a heading there', () => {
    const broken: string[] = [];
    for (const file of documents()) {
      for (const link of relativeLinks(read(file))) {
        const [target = '', anchor] = link.split('#');
        const resolved = target === '' ? file : path.normalize(path.join(path.dirname(file), target));
        if (!fs.existsSync(path.join(ROOT_DIR, resolved))) broken.push(`${file}: ${link} (no ${resolved})`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(read(resolved)).has(anchor)) broken.push(`${file}: ${link} (no heading #${anchor} in ${resolved})`);
      }
    }
    expect(broken).to.deep.equal([]);
  });

  it('links to nothing outside the repository but the standards it names', () => {
    const outside = documents().flatMap((file) => (parts(read(file)).prose.join('\n').match(/\]\((?:https?:)?\/\/[^)]+\)/g) ?? []).map((link) => `${file}: ${link}`));
    expect(outside).to.deep.equal([]);
  });

  it('keeps the README a front door (about 300 lines at most) that links every guide, each guide with a table of contents', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).to.be.at.most(300);
    for (const guide of ['docs/consumer.md', 'docs/administration.md', 'docs/operator.md', 'docs/plugins.md', 'docs/contributing.md', 'docs/reference.md', 'CHANGELOG.md']) {
      expect(readme, guide).to.contain(`](${guide}`);
    }
    for (const guide of ['docs/consumer.md', 'docs/administration.md', 'docs/operator.md', 'docs/plugins.md', 'docs/contributing.md']) {
      expect(read(guide), guide).to.match(/\n\*\*Contents\*\*\n\n- \[/);
    }
  });

  it('cites the reference, never a file the repository does not hold', () => {
    const cited: string[] = [];
    const walk = (dir: string): string[] => fs.readdirSync(path.join(ROOT_DIR, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
    for (const file of [...walk('src'), ...walk('migrations'), ...walk('web/src'), ...walk('test')]) {
      if (/\bAPI\.md\b/.test(fs.readFileSync(path.join(ROOT_DIR, file), 'utf8'))) cited.push(file);
    }
    expect(cited.filter((file) => file !== path.join('test', 'unit', 'docs.test.ts'))).to.deep.equal([]);
    // And the sections it cites are there.
    const sections = new Set([...read('docs/reference.md').matchAll(/^## (\d+)\. /gm)].map((m) => Number(m[1])));
    const missing = [...walk('src'), ...walk('migrations'), ...walk('test')].flatMap((file) => [...fs.readFileSync(path.join(ROOT_DIR, file), 'utf8').matchAll(/docs\/reference\.md\s+sections?\s+(\d+)/g)].map((m) => Number(m[1])).filter((n) => !sections.has(n)).map((n) => `${file}: section ${n}`));
    expect(missing).to.deep.equal([]);
  });

  it("has in the operator's guide the settings table the settings' declaration writes (npm run docs:settings)", () => {
    const guide = read('docs/operator.md');
    expect(withSettingsTable(guide) === guide, 'docs/operator.md differs from src/common/config.ts SETTINGS: run npm run docs:settings').to.equal(true);
    // A default changed in the table alone is a difference.
    expect(withSettingsTable(guide.replace('| `PORT` | `3000` |', '| `PORT` | `8080` |'))).to.equal(guide);
    // Every variable the service reads is declared there (WSAPI_CLUSTER_INDEX is the cluster's own, set for its processes).
    const declared = new Set(Object.values(SETTINGS).map((s) => s.name));
    const src = (dir: string): string[] => fs.readdirSync(path.join(ROOT_DIR, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? src(path.join(dir, e.name)) : [path.join(dir, e.name)]));
    const readBySource = new Set(src('src').flatMap((file) => [...fs.readFileSync(path.join(ROOT_DIR, file), 'utf8').matchAll(/\benv\.([A-Z][A-Z_]+)/g)].map((m) => m[1]!)));
    expect([...readBySource].filter((name) => !declared.has(name) && name !== 'WSAPI_CLUSTER_INDEX')).to.deep.equal([]);
  });
});
