import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import ipaddr from 'ipaddr.js';
import { compilesInstead, importCompiled } from '../../src/common/modules.js';

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

  it("compiles a TypeScript file Node refused for want of a loader, or which Node's own type stripping cannot run (Node 22.18 and later), and nothing else", () => {
    const refused = (code: string) => Object.assign(new Error(code), { code });
    for (const code of ['ERR_UNKNOWN_FILE_EXTENSION', 'ERR_MODULE_NOT_FOUND', 'ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING', 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX']) {
      expect(compilesInstead('/plugins/notes.ts', refused(code)), code).to.equal(true);
      expect(compilesInstead('/plugins/notes.mts', refused(code)), code).to.equal(true);
      // JavaScript is Node's to load: its refusal is the answer.
      expect(compilesInstead('/plugins/notes.js', refused(code)), code).to.equal(false);
    }
    // What the module itself threw as it ran, or a refusal compiling would share, is not retried.
    expect(compilesInstead('/plugins/notes.ts', new TypeError('x is not a function'))).to.equal(false);
    expect(compilesInstead('/plugins/notes.ts', refused('ERR_INVALID_URL'))).to.equal(false);
    expect(compilesInstead('/plugins/notes.ts', null)).to.equal(false);
  });
});
