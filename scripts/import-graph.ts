// Import arrows between the top folders: `npx tsx scripts/import-graph.ts` prints the matrix (rows import columns).
// test/unit/layers.test.ts reuses importEdges() so the layer rule and the printed counts read imports the same way.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Bottom to top: the order the matrix prints in.
export const TOP_FOLDERS = ['kernel', 'media', 'src', 'ssai', 'packager', 'vod-encoder', 'wiring', 'console', 'fixtures', 'bench', 'scripts', 'bin'] as const;

export interface ImportEdge {
  /** Importing file, relative to the repository root. */
  from: string;
  /** Imported file, relative to the repository root (the specifier as written when it leaves the repository). */
  to: string;
  fromFolder: string;
  toFolder: string;
  line: number;
  /** `import type` / `export type`: erased at run time, still an arrow between layers. */
  typeOnly: boolean;
}

const SOURCE_EXTENSIONS = ['.ts', '.tsx', '.mts', '.mjs', '.js'];
// Static imports and re-exports (multi-line clauses included), dynamic import(), and worker entry URLs.
const IMPORT_PATTERN = /(?:^|[\s;])(?:import|export)\s+(type\s+)?(?:[^'"`;]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|new URL\(\s*['"](\.[^'"]+)['"]\s*,\s*import\.meta\.url/g;

function sourceFiles(folder: string): string[] {
  const full = path.join(ROOT, folder);
  if (!fs.existsSync(full)) return [];
  return (fs.readdirSync(full, { recursive: true }) as string[])
    .filter((file) => SOURCE_EXTENSIONS.some((ext) => file.endsWith(ext)) && !file.endsWith('.d.ts') && !file.split(path.sep).some((part) => part === 'node_modules' || part === 'dist'))
    .map((file) => path.join(folder, file));
}

function withoutComments(text: string): string {
  // Block and line comments out, keeping line count; strings holding `//` (URLs) survive because the line rule needs a preceding space or line start.
  return text.replace(/\/\*[\s\S]*?\*\//g, (block) => block.replace(/[^\n]/g, ' ')).replace(/(^|\s)\/\/.*$/gm, '$1');
}

function resolveRelative(fromFile: string, specifier: string): string {
  const target = path.normalize(path.join(path.dirname(fromFile), specifier));
  // ESM sources name `.js` for a `.ts` file.
  for (const candidate of [target.replace(/\.js$/, '.ts'), target.replace(/\.js$/, '.tsx'), target, `${target}.ts`, path.join(target, 'index.ts')]) {
    if (fs.existsSync(path.join(ROOT, candidate)) && fs.statSync(path.join(ROOT, candidate)).isFile()) return candidate;
  }
  return target;
}

export function topFolder(file: string): string {
  return file.split(path.sep)[0] ?? file;
}

/** Every relative import between files of the given folders (package imports are not arrows between folders). */
export function importEdges(folders: readonly string[] = [...TOP_FOLDERS, 'test']): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of folders.flatMap(sourceFiles)) {
    const text = withoutComments(fs.readFileSync(path.join(ROOT, file), 'utf8'));
    for (const match of text.matchAll(IMPORT_PATTERN)) {
      const specifier = match[2] ?? match[3] ?? match[4];
      if (!specifier || !specifier.startsWith('.')) continue;
      const to = resolveRelative(file, specifier);
      const line = text.slice(0, match.index).split('\n').length + (match[0].startsWith('\n') ? 1 : 0);
      edges.push({ from: file, to, fromFolder: topFolder(file), toFolder: topFolder(to), line, typeOnly: Boolean(match[1]) });
    }
  }
  return edges;
}

/** Counts of import statements between distinct top folders: matrix[from][to]. */
export function importMatrix(edges: ImportEdge[], folders: readonly string[]): Map<string, Map<string, number>> {
  const matrix = new Map(folders.map((from) => [from, new Map(folders.map((to) => [to, 0]))]));
  for (const edge of edges) {
    if (edge.fromFolder === edge.toFolder) continue;
    const row = matrix.get(edge.fromFolder);
    if (row?.has(edge.toFolder)) row.set(edge.toFolder, (row.get(edge.toFolder) ?? 0) + 1);
  }
  return matrix;
}

export function renderMatrix(matrix: Map<string, Map<string, number>>): string {
  const folders = [...matrix.keys()].filter((folder) => [...(matrix.get(folder)?.values() ?? [])].some((n) => n > 0) || [...matrix.values()].some((row) => (row.get(folder) ?? 0) > 0));
  const header = ['| imports → |', ...folders.map((folder) => ` ${folder} |`)].join('');
  const rule = `|---|${folders.map(() => '---:|').join('')}`;
  const rows = folders.map((from) => `| **${from}** |${folders.map((to) => ` ${from === to ? '·' : matrix.get(from)?.get(to) || ''} |`).join('')}`);
  return [header, rule, ...rows].join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const withTests = process.argv.includes('--tests');
  const folders = withTests ? [...TOP_FOLDERS, 'test'] : [...TOP_FOLDERS];
  process.stdout.write(`${renderMatrix(importMatrix(importEdges(folders), folders))}\n`);
}
