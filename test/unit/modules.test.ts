import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import ipaddr from 'ipaddr.js';
import { importCompiled } from '../../src/common/modules.js';

const fixtures = path.join(import.meta.dirname, '..', 'fixtures', 'compiled');

describe('a TypeScript module compiled where no loader runs (the bundled admin command)', () => {
  it('compiles the file and its relative TypeScript imports, and loads the packages it names as Node would, once', async () => {
    const mod = (await importCompiled(path.join(fixtures, 'entry.ts'))) as { shape: { answer: number }; separator: string; parse: unknown };
    expect(mod.shape).to.deep.equal({ answer: 42 });
    expect(mod.separator).to.equal(path.sep);
    // The same instance of the package as this file's own import: not a second copy bundled in.
    expect(mod.parse).to.equal(ipaddr.parse);
  });

  it('refuses a file that does not compile, naming the file and the line', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'compiled-'));
    fs.writeFileSync(path.join(dir, 'broken.ts'), 'export const oops: number = (1 +;\n');
    let failure: Error | undefined;
    await importCompiled(path.join(dir, 'broken.ts')).catch((err: Error) => (failure = err));
    expect(failure?.message).to.match(/broken\.ts:1:/);
    fs.rmSync(dir, { recursive: true });
  });
});
