import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Lessons turned into checks (STYLE.md rule 13): each ban says why.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCE_DIRS = ['kernel', 'src', 'media', 'ssai', 'vod-encoder', 'packager', 'wiring'];

function sourceFiles(): string[] {
  return SOURCE_DIRS.flatMap((dir) => {
    const full = path.join(root, dir);
    if (!fs.existsSync(full)) return [];
    return (fs.readdirSync(full, { recursive: true }) as string[])
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
      .map((file) => path.join(dir, file));
  });
}

function codeLines(file: string): Array<{ line: number; text: string }> {
  return fs
    .readFileSync(path.join(root, file), 'utf8')
    .split('\n')
    .map((text, index) => ({ line: index + 1, text }))
    .filter(({ text }) => !/^\s*(\/\/|\*|\/\*)/.test(text));
}

describe('source conventions', () => {
  it('logs through pino only: no console calls (JSON logs, one line per event)', () => {
    const offenders = sourceFiles().flatMap((file) => codeLines(file).filter(({ text }) => /\bconsole\.(log|error|warn|info|debug)\(/.test(text)).map(({ line }) => `${file}:${line}`));
    expect(offenders).toEqual([]);
  });

  it('reads the environment only in kernel/core/config.ts (configuration is parsed once and frozen)', () => {
    const offenders = sourceFiles()
      .filter((file) => file !== path.join('kernel', 'core', 'config.ts'))
      .flatMap((file) => codeLines(file).filter(({ text }) => /process\.env\b/.test(text)).map(({ line }) => `${file}:${line}`));
    expect(offenders).toEqual([]);
  });
});
