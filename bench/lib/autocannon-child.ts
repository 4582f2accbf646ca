// autocannon run from a child node process, so the load generator has its own event loop and does not share the
// server's (used by bench/ssai and bench/linear). The paths go to the child in a temp file.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The slice of autocannon's result these benches read (autocannon ships no types). */
export type CannonResult = { requests: { average: number; total: number }; latency: { p50: number; p90: number; p99: number }; errors: number; non2xx: number };
export type Load = { rps: number; p50Ms: number; p90Ms: number; p99Ms: number; requests: number; errors: number };

export const toLoad = (r: CannonResult): Load => ({
  rps: Math.round(r.requests.average), p50Ms: r.latency.p50, p90Ms: r.latency.p90, p99Ms: r.latency.p99,
  requests: r.requests.total, errors: r.errors + r.non2xx,
});

const CHILD = `
const { createRequire } = await import('node:module');
const { readFileSync } = await import('node:fs');
const autocannon = createRequire(process.cwd() + '/')('autocannon');
const { url, paths, connections, duration } = JSON.parse(readFileSync(process.argv[1], 'utf8'));
let i = 0;
const r = await autocannon({ url, connections, duration, requests: [{ setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length] }) }] });
process.stdout.write(JSON.stringify(r));
`;

/** Loads `url` with GETs cycling over `paths` for `seconds`, from a child process. */
export async function cannonChild(url: string, paths: string[], options: { connections: number; seconds: number }): Promise<Load> {
  const file = path.join(os.tmpdir(), `bench-cannon-${process.pid}-${randomUUID()}.json`);
  await writeFile(file, JSON.stringify({ url, paths, connections: options.connections, duration: options.seconds }));
  try {
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, file], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_OPTIONS: '' } });
      let text = '';
      child.stdout.on('data', (c: Buffer) => { text += c.toString(); });
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`autocannon child exited ${code}`))));
    });
    return toLoad(JSON.parse(out) as CannonResult);
  } finally {
    await rm(file, { force: true });
  }
}
