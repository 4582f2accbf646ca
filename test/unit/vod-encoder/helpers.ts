// Shared by the VOD encoder tests: temp dirs and a real ffmpeg decode of an output.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export async function tempDir(prefix: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `${prefix}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export interface DecodeResult {
  /** ffmpeg's error-level log: empty when the decode was clean. */
  errors: string;
  /** Decoded media duration in seconds (last out_time of -progress). */
  durationSec: number;
  exitCode: number;
}

/** Decodes every stream of `input` to null and reports errors and the decoded duration. */
export function decode(input: string): Promise<DecodeResult> {
  return new Promise((resolve) => {
    execFile('ffmpeg', ['-nostdin', '-v', 'error', '-i', input, '-f', 'null', '-progress', 'pipe:1', '-'],
      { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
        const times = [...stdout.matchAll(/out_time_us=(\d+)/g)].map((m) => Number(m[1]));
        resolve({ errors: stderr.trim(), durationSec: (times.at(-1) ?? 0) / 1e6, exitCode: err ? 1 : 0 });
      });
  });
}
