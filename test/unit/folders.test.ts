import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const SRC = path.join(import.meta.dirname, '..', '..', 'src');

/** Every .ts file under src/. */
function sourceFiles(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

/** A file's folder under `root`, undefined outside it; the files at the root are one folder of their own. */
const folderOf = (root: string, file: string) => {
  const relative = path.relative(root, file);
  if (relative.startsWith('..')) return undefined;
  return relative.includes(path.sep) ? relative.split(path.sep)[0]! : `(root of ${path.relative(SRC, root) || 'src'})`;
};

/** The relative modules a file imports (or re-exports) for their values: `import type` and all-type lists left out. */
export function valueImports(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?([^;]*?)\s+from\s+'(\.{1,2}\/[^']+)'/gms)) {
    if (m[1]) continue;
    const list = /\{([^}]*)\}/.exec(m[2] ?? '');
    const named = list ? list[1]!.split(',').map((s) => s.trim()).filter(Boolean) : [];
    const onlyTypes = list !== null && !/^[\w$]+\s*,/.test(m[2] ?? '') && named.length > 0 && named.every((n) => n.startsWith('type '));
    if (!onlyTypes) found.push(m[3]!);
  }
  for (const m of text.matchAll(/\bimport\(\s*'(\.{1,2}\/[^']+)'\s*\)/g)) found.push(m[1]!);
  return found;
}

/** Folder -> folder edges of value imports between the folders under `root`, each with one file-level example. */
function folderGraph(root = SRC): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of sourceFiles(root)) {
    for (const spec of valueImports(fs.readFileSync(file, 'utf8'))) {
      const target = path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts');
      const [from, to] = [folderOf(root, file), folderOf(root, target)];
      if (from === undefined || to === undefined || from === to) continue;
      if (!graph.has(from)) graph.set(from, new Map());
      if (!graph.get(from)!.has(to)) graph.get(from)!.set(to, `${path.relative(SRC, file)} imports ${path.relative(SRC, target)}`);
    }
  }
  return graph;
}

/** The graph's cycles, as strongly connected components of more than one folder (Tarjan). */
function cycles(graph: Map<string, Map<string, string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('folders of src/ import one way', () => {
  it('reads value imports and leaves type-only ones out', () => {
    const text = [
      "import type { A } from './a.js';",
      "import { type B, type C } from './b.js';",
      "import { d, type E } from './d.js';",
      "import f, { type G } from './f.js';",
      "export { h } from './h.js';",
      "export type { I } from './i.js';",
      "const j = await import('./j.js');",
    ].join('\n');
    expect(valueImports(text)).to.deep.equal(['./d.js', './f.js', './h.js', './j.js']);
  });

  it('has no cycle between folders (the files at the root of src/ count as one folder)', () => {
    const graph = folderGraph();
    expect(described(graph), 'folder cycles').to.deep.equal([]);
    expect(graph.size, 'the walk found the folders').to.be.greaterThan(5);
  });

  it('has no cycle between the rooms of src/kernel/ (its root files, deprecated import paths, count as one room)', () => {
    const graph = folderGraph(path.join(SRC, 'kernel'));
    expect(described(graph), 'room cycles').to.deep.equal([]);
    expect([...graph.keys()].sort(), 'the walk found the rooms that import others').to.include.members(['query', 'registry', 'storage', 'write']);
  });

  it('finds a cycle between rooms when there is one', () => {
    const graph = new Map([
      ['query', new Map([['model', 'query/list.ts imports model/kinds.ts']])],
      ['model', new Map([['query', 'model/schemas.ts imports query/filters.ts']])],
    ]);
    expect(described(graph)).to.have.length(1);
  });
});

/** Each cycle of the graph, with the imports that make it. */
function described(graph: Map<string, Map<string, string>>): string[] {
  return cycles(graph).map((component) => {
    const edges = component.flatMap((a) => component.filter((b) => graph.get(a)?.has(b)).map((b) => `  ${a} -> ${b} (${graph.get(a)!.get(b)})`));
    return `${component.join(', ')}:\n${edges.join('\n')}`;
  });
}

describe('which database', () => {
  it('is asked only under src/db/ (the dialects), and parsed only by the settings', () => {
    const asks = /\bdialectOf\(|client\.config|'mysql2'|database\.client\s*[!=]==/;
    const askers = sourceFiles()
      .filter((file) => !file.startsWith(path.join(SRC, 'db') + path.sep) && file !== path.join(SRC, 'common', 'config.ts'))
      .filter((file) => asks.test(fs.readFileSync(file, 'utf8').replace(/^\s*(\/\/|\*).*$/gm, '')))
      .map((file) => path.relative(SRC, file));
    expect(askers).to.deep.equal([]);
    expect(asks.test("if (dialectOf(db) === 'mysql')"), 'the check sees a question').to.equal(true);
  });
});

describe('the generated handlers', () => {
  const SERVICES = ['write/create', 'write/update', 'write/batch', 'write/actions', 'write/checks', 'query/list', 'query/lookup'].map((name) => path.join(SRC, 'kernel', `${name}.ts`));

  it('reach a resource\'s table only through its store (kernel/storage/store.ts): no query builder, no statement of their own', () => {
    for (const file of SERVICES) {
      const text = fs.readFileSync(file, 'utf8');
      const name = path.relative(SRC, file);
      expect(text, `${name} imports knex`).not.to.match(/from 'knex'/);
      expect(text, `${name} builds a query`).not.to.match(/\bdb\(|\bdb\.(?:from|raw|select)\b|\.toSQL\(/);
      expect(text, `${name} runs a statement itself`).not.to.match(/\btx\.(?:run|all)\(|\breads\.all\(/);
    }
  });
});
