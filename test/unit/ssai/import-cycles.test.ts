import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Issue 29 step 3: modules of the SSAI proxy import each other one way only. A circle (even through a type-only
// import) means two modules share a concept neither owns: move it to the module that should own it.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const dir = path.join(root, 'ssai');

function sourceFiles(): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => path.join(dir, file));
}

/** Relative imports of a file that stay inside ssai/ (static, type-only, re-exports and dynamic imports alike). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"](\.\.?\/[^'"]+)['"]/g)) {
    const target = path.resolve(path.dirname(file), m[1]!.replace(/\.js$/, '.ts'));
    if (target.startsWith(dir + path.sep)) found.push(target);
  }
  return found;
}

/** The import circles of a graph: its strongly connected components of more than one module, or of one importing itself. */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next); low.set(v, next); next++;
    stack.push(v); onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do { w = stack.pop()!; onStack.delete(w); component.push(w); } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

/**
 * The folders of ssai/ from the bottom (docs/ARCHITECTURE.md "Inside ssai/"): a module imports its own folder, the
 * folders before its own and the top-level modules (errors, metrics), never a folder after its own.
 */
const FOLDER_ORDER = ['parse', 'check', 'stitch', 'store', 'decide', 'serve'];

/** The ssai folder of a module ('' for the top-level ones). */
function folderOf(file: string): string {
  const rel = path.relative(dir, file).split(path.sep);
  return rel.length > 1 ? rel[0]! : '';
}

/** Imports from a folder to one after it in FOLDER_ORDER, as "from → to". */
function againstTheOrder(graph: Map<string, string[]>): string[] {
  const rank = (f: string): number => { const d = folderOf(f); return d === '' ? -1 : FOLDER_ORDER.indexOf(d); };
  const out: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      // the top-level modules (rank -1) are imported by every folder and import no folder
      if (folderOf(to) !== '' && rank(to) > rank(from)) out.push(`${path.relative(root, from)} → ${path.relative(root, to)}`);
    }
  }
  return out;
}

describe('ssai import graph', () => {
  it('finds a circle in a graph that has one (the check itself works)', () => {
    const graph = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]);
    expect(circles(graph)).toEqual([['a', 'b', 'c']]);
  });

  it('has no import circles among the modules of ssai/', () => {
    const files = sourceFiles();
    expect(files.length).toBeGreaterThan(10);
    const graph = new Map(files.map((f) => [f, importsOf(f)]));
    const found = circles(graph).map((c) => c.map((f) => path.relative(root, f)).join(' ↔ '));
    expect(found).toEqual([]);
  });

  it('every module sits in a folder of the order, and no folder imports one after it', () => {
    const files = sourceFiles();
    const unknown = files.map(folderOf).filter((d) => d !== '' && !FOLDER_ORDER.includes(d));
    expect(unknown, 'a new ssai/ folder needs its place in FOLDER_ORDER (and in docs/ARCHITECTURE.md)').toEqual([]);
    const topLevel = files.filter((f) => folderOf(f) === '').map((f) => path.basename(f)).sort();
    expect(topLevel).toEqual(['errors.ts', 'metrics.ts']);
    const graph = new Map(files.map((f) => [f, importsOf(f)]));
    expect(againstTheOrder(graph)).toEqual([]);
  });

  it('finds an import against the folder order (the check itself works)', () => {
    const at = (d: string, f: string) => path.join(dir, d, f);
    const graph = new Map([[at('stitch', 'a.ts'), [at('serve', 'b.ts'), at('parse', 'c.ts')]], [at('parse', 'c.ts'), [path.join(dir, 'errors.ts')]]]);
    expect(againstTheOrder(graph)).toEqual(['ssai/stitch/a.ts → ssai/serve/b.ts']);
  });
});
