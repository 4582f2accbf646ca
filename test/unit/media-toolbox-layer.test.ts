// media/ is the bottom layer (issue 29): the proxy, the packager and the VOD encoder import it, and it imports none of
// them, nor the control API. A file there that reaches into an engine folder fails here.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MEDIA = path.join(root, 'media');
const ENGINE_FOLDERS = ['src', 'ssai', 'packager', 'vod-encoder'];

/** The module specifiers of a source text: static imports and re-exports, `import()` and `require()`. */
export function importSpecifiers(text: string): string[] {
  const found: string[] = [];
  const patterns = [/\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) if (match[1]) found.push(match[1]);
  return found;
}

function mediaFiles(): string[] {
  return (fs.readdirSync(MEDIA, { recursive: true }) as string[])
    .filter((file) => /\.(ts|mts|js|mjs)$/.test(file))
    .map((file) => path.join(MEDIA, file));
}

describe('the media toolbox layer', () => {
  it('reads the specifiers of every import form', () => {
    const text = [
      "import { a } from '../src/a.js';",
      "import type {\n  B,\n} from \"../ssai/b.js\";",
      "export { c } from '../packager/c.js';",
      "import '../vod-encoder/d.js';",
      "const e = await import('../src/e.js');",
    ].join('\n');
    expect(importSpecifiers(text)).toEqual(['../src/a.js', '../ssai/b.js', '../packager/c.js', '../vod-encoder/d.js', '../src/e.js']);
  });

  it('imports nothing from src/, ssai/, packager/ or vod-encoder/ (nor anything else outside media/)', () => {
    const files = mediaFiles();
    expect(files.length).toBeGreaterThan(0);
    const offenders: string[] = [];
    for (const file of files) {
      for (const specifier of importSpecifiers(fs.readFileSync(file, 'utf8'))) {
        if (!specifier.startsWith('.') && !specifier.startsWith('/')) continue; // node and npm packages
        const target = path.relative(root, path.resolve(path.dirname(file), specifier));
        const top = target.split(path.sep)[0] ?? '';
        if (top !== 'media') offenders.push(`${path.relative(root, file)} imports ${specifier}${ENGINE_FOLDERS.includes(top) ? ` (engine folder ${top}/)` : ''}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
