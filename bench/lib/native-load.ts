// The C open-loop load generator of bench/ssai-capacity (open-loop-load.c): built once with the machine's C compiler,
// run by the bench's load child with the viewers' media playlist paths. Where no compiler is found the bench says so
// and keeps its Node generator.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const SOURCE = fileURLToPath(new URL('./open-loop-load.c', import.meta.url));

/** Builds the generator (cached by the source's hash); undefined, with the reason on stderr, where it cannot be. */
export async function buildNativeLoad(): Promise<string | undefined> {
  const source = await readFile(SOURCE);
  const dir = path.join(os.tmpdir(), 'engine-bench');
  const binary = path.join(dir, `open-loop-load-${createHash('sha256').update(source).digest('hex').slice(0, 12)}`);
  try {
    await access(binary);
    return binary;
  } catch { /* not built yet */ }
  await mkdir(dir, { recursive: true });
  try {
    // built under a name of its own and renamed: a process finding the binary never runs a half-written one
    const building = `${binary}.${process.pid}`;
    await promisify(execFile)(process.env.CC ?? 'cc', ['-O2', '-std=gnu11', '-o', building, SOURCE, '-lm']);
    await rename(building, binary);
    return binary;
  } catch (err) {
    process.stderr.write(`bench: the C load generator could not be built (${(err as Error).message.split('\n')[0]}); the Node one makes the load\n`);
    return undefined;
  }
}

/** Runs the generator against `base` (http://127.0.0.1:port) for these viewers; resolves with its JSON result. */
export async function runNativeLoad(binary: string, base: string, paths: string[], o: { seconds: number; rampSeconds: number; periodMs: number; connections: number; segments: boolean }): Promise<Record<string, unknown>> {
  const url = new URL(base);
  const file = path.join(os.tmpdir(), `engine-bench-paths-${process.pid}`);
  await writeFile(file, `${paths.join('\n')}\n`);
  try {
    const child = spawn(binary, [url.hostname, url.port, String(paths.length), String(o.seconds), String(o.rampSeconds), String(o.periodMs), String(o.connections), o.segments ? '1' : '0', file], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    if (code !== 0) throw new Error(`the C load generator exited with ${code}`);
    return JSON.parse(out) as Record<string, unknown>;
  } finally {
    await rm(file, { force: true });
  }
}
