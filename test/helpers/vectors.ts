// The shared test vectors are read in place (never copied into the repo). A clone may sit anywhere, so the
// folder is looked up: ENGINE_VECTORS_DIR, then ../shared/vectors beside the repo, then /work/shared/vectors.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function locate(): string | undefined {
  const candidates = [
    process.env.ENGINE_VECTORS_DIR,
    path.resolve(repoRoot, '../shared/vectors'),
    '/work/shared/vectors',
  ].filter((candidate): candidate is string => Boolean(candidate));
  return candidates.find((candidate) => fs.existsSync(path.join(candidate, 'scte35-samples.json')));
}

/** Absolute path of the shared vectors folder, or undefined where this machine has none. */
export const VECTORS_DIR: string | undefined = locate();

if (!VECTORS_DIR) {
  process.stderr.write('shared test vectors not found (set ENGINE_VECTORS_DIR): tests that read them are skipped\n');
}

/** A file of the vectors folder; call only in tests guarded by `VECTORS_DIR`. */
export function vectorPath(...parts: string[]): string {
  if (!VECTORS_DIR) throw new Error('shared test vectors are not available');
  return path.join(VECTORS_DIR, ...parts);
}
