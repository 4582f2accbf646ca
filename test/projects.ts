// Which vitest project each test file belongs to (vitest.config.ts), from what the file really uses: read from its
// source and from the test helpers and fixtures it imports, so a new test file is placed without a list to keep up.
// unit: nothing outside the process; api: an engine over HTTP, PostgreSQL or Redis; media: ffmpeg (encodes, prepared
// creatives, live channels); browser: Chromium (playwright). test/unit/test-projects.test.ts checks the result.
import fs from 'node:fs';
import path from 'node:path';

export const PROJECTS = ['unit', 'api', 'media', 'browser'] as const;
export type ProjectName = (typeof PROJECTS)[number];

/** What a source file says about what its tests need, in rising order of cost. */
const MARKERS: Array<{ project: Exclude<ProjectName, 'unit'>; pattern: RegExp; why: string }> = [
  { project: 'browser', pattern: /['"]playwright-core['"]/, why: 'Chromium through playwright-core' },
  { project: 'media', pattern: /\bffmpeg\b|\bffprobe\b|spawnFfmpeg/i, why: 'ffmpeg' },
  { project: 'api', pattern: /\bstartEngine(?:Process)?\b|['"](?:pg|ioredis|pg-boss)['"]/, why: 'an engine, PostgreSQL or Redis' },
];

/**
 * Files whose needs their source does not show (say, a real live channel started through the API, which the engine
 * encodes with ffmpeg). Each entry is checked to raise the file above what its markers say. An engine's own sample
 * clip (one short ffmpeg run in the background at each start) does not count: every api test has it.
 */
export const NEEDS_MORE: Record<string, { project: ProjectName; why: string }> = {};

const RANK: Record<ProjectName, number> = { unit: 0, api: 1, media: 2, browser: 3 };
const higher = (a: ProjectName, b: ProjectName): ProjectName => (RANK[b] > RANK[a] ? b : a);

/** Relative imports of a source file that stay inside test/, fixtures/ or scripts/ (the code under test is not followed). */
function localImports(root: string, file: string, source: string): string[] {
  const out: string[] = [];
  for (const match of source.matchAll(/(?:from|import\()\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const target = path.relative(root, path.resolve(path.dirname(path.join(root, file)), match[1]!.replace(/\.js$/, '.ts')));
    // this file names every marker and starts nothing: the check that imports it stays a unit test
    if (target === 'test/projects.ts') continue;
    if (/^(?:test|fixtures|scripts)\//.test(target) && fs.existsSync(path.join(root, target))) out.push(target);
  }
  return out;
}

export interface Classification {
  project: ProjectName;
  /** the markers found, as "file: why", for the check's messages */
  reasons: string[];
}

/** The source without its comments, which mention tools the code may not run ("a VOD record without ffmpeg"). */
function withoutComments(source: string): string {
  // `//` after a colon or a quote is a URL, not a comment
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** A file and the local files it imports, transitively (test/, fixtures/ and scripts/ only). */
export function localClosure(root: string, file: string): string[] {
  const seen = new Set<string>();
  const visit = (current: string) => {
    if (seen.has(current)) return;
    seen.add(current);
    for (const next of localImports(root, current, fs.readFileSync(path.join(root, current), 'utf8'))) visit(next);
  };
  visit(file);
  return [...seen];
}

/** The project a test file's markers (its own and its local imports') call for, before NEEDS_MORE. */
export function markedProject(root: string, file: string): Classification {
  const reasons: string[] = [];
  let project: ProjectName = 'unit';
  for (const current of localClosure(root, file)) {
    const source = withoutComments(fs.readFileSync(path.join(root, current), 'utf8'));
    for (const marker of MARKERS) {
      if (!marker.pattern.test(source)) continue;
      reasons.push(`${current}: ${marker.why}`);
      project = higher(project, marker.project);
    }
  }
  return { project, reasons };
}

export function classify(root: string, file: string): Classification {
  const marked = markedProject(root, file);
  const more = NEEDS_MORE[file];
  if (!more || RANK[more.project] <= RANK[marked.project]) return marked;
  return { project: more.project, reasons: [...marked.reasons, `${file}: ${more.why}`] };
}

/** Every test file under test/, relative to root, sorted. */
export function testFiles(root: string): string[] {
  return (fs.readdirSync(path.join(root, 'test'), { recursive: true }) as string[])
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => path.join('test', name).split(path.sep).join('/'))
    .sort();
}

/** The files of each project: every test file in exactly one. */
export function projectFiles(root: string): Record<ProjectName, string[]> {
  const out: Record<ProjectName, string[]> = { unit: [], api: [], media: [], browser: [] };
  for (const file of testFiles(root)) out[classify(root, file).project].push(file);
  return out;
}
