// The README and docs/*.md say what the engine does: their links resolve, the npm scripts and files they name exist,
// and the configuration page lists exactly the variables the engine reads (issue 26). The tour's commands themselves
// run in test/e2e/readme-tour.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../kernel/core/config.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOCS = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/** The text outside fenced code blocks, and the code blocks themselves. */
function splitFences(markdown: string): { prose: string; code: string } {
  const prose: string[] = [];
  const code: string[] = [];
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) inFence = !inFence;
    else (inFence ? code : prose).push(line);
  }
  return { prose: prose.join('\n'), code: code.join('\n') };
}

/** GitHub's anchor of each heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of splitFences(markdown).prose.split('\n')) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading?.[1]) continue;
    const slug = heading[1].trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Markdown links `[text](target)` of the prose, inline code removed first (a link shown as code is not a link). */
function links(markdown: string): string[] {
  const prose = splitFences(markdown).prose.replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] ?? '');
}

describe('the documentation', () => {
  it('keeps the two commands of the quick start, the second being what CI runs', () => {
    const readme = read('README.md');
    expect(readme).toContain('bash scripts/setup.sh && npm start');
    expect(readme).toContain('bash scripts/setup.sh --test && npm test');
    const ci = read('.ci/run');
    expect(ci).toMatch(/^bash scripts\/setup\.sh --test$/m);
    expect(ci).toMatch(/^npm test$/m);
  });

  it('computes GitHub anchors as GitHub does', () => {
    const anchors = headingAnchors('# Quick start (Debian 12, Node 20, as root)\n## 2. A live `channel`\n## 2. A live `channel`\n```\n# not a heading\n```\n');
    expect([...anchors]).toEqual(['quick-start-debian-12-node-20-as-root', '2-a-live-channel', '2-a-live-channel-1']);
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of DOCS) {
      for (const target of links(read(file))) {
        if (/^[a-z]+:/i.test(target)) continue; // http(s), mailto: outside the checkout
        const [pathPart = '', anchor] = target.split('#');
        const resolved = pathPart ? path.join(path.dirname(file), decodeURIComponent(pathPart)) : file;
        if (!fs.existsSync(path.join(root, resolved))) {
          broken.push(`${file}: ${target} (no file ${resolved})`);
          continue;
        }
        if (anchor !== undefined && !headingAnchors(read(resolved)).has(anchor)) broken.push(`${file}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('names only npm scripts that package.json defines', () => {
    const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
    const missing = DOCS.flatMap((file) =>
      [...read(file).matchAll(/npm run ([\w:.-]+)/g)].map((match) => match[1] ?? '').filter((name) => !scripts.includes(name)).map((name) => `${file}: npm run ${name}`),
    );
    expect(missing).toEqual([]);
  });

  it('names only files of the checkout that exist', () => {
    const topLevel = 'src|ssai|packager|vod-encoder|test|bench|fixtures|console|scripts|docs|bin|\\.ci';
    // a path in backticks or after npx tsx / npx vitest run; placeholders (<id>, …, *) are patterns, not files
    const named = new RegExp(`(?:^|[\\s\`(])((?:${topLevel})/[\\w./-]*[\\w/])`, 'gm');
    const missing: string[] = [];
    for (const file of DOCS) {
      for (const match of read(file).matchAll(named)) {
        const name = match[1] ?? '';
        const next = read(file)[(match.index ?? 0) + match[0].length] ?? '';
        if (/[<…*{]/.test(next) || name.includes('NNNN')) continue;
        if (!fs.existsSync(path.join(root, name))) missing.push(`${file}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('lists in docs/configuration.md exactly the variables the engine reads', () => {
    const page = read('docs/configuration.md');
    const documented = new Set(
      page
        .split('\n')
        .filter((line) => /^\| `/.test(line))
        .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((match) => match[1] ?? '')),
    );
    // what the engine reads: the keys of the schema that parses the environment (the only reader of process.env)
    const source = read('kernel/core/config.ts');
    const schema = source.slice(source.indexOf('const envSchema = z.object({'), source.indexOf('\n});', source.indexOf('const envSchema')));
    const read_ = new Set([...schema.matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)].map((match) => match[1] ?? ''));
    expect(read_.size).toBeGreaterThan(10);
    expect([...documented].sort()).toEqual([...read_].sort());
    // and `engine --help` prints the same list
    expect(CONFIG_VARIABLES.map(([name]) => name as string).sort()).toEqual([...read_].sort());
  });
});
