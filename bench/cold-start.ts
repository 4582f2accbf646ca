// Measures `engine start` from spawn to the first 200 of /readyz, on a fresh DATA_DIR (first start:
// migrations, key generation) and again on the same DATA_DIR (a restart). Writes bench/results/cold-start.{json,md}.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

async function measure(dataDir: string, port: number): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(root, 'bin/engine.js'), 'start'], {
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, ENGINE_ADMIN_EMAIL: 'admin@localhost', ENGINE_ADMIN_PASSWORD: 'bench-password', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const early = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`engine exited with ${code}`))));
  early.catch(() => undefined);
  try {
    for (;;) {
      if (child.exitCode !== null) await early;
      try {
        const response = await fetch(`http://127.0.0.1:${port}/readyz`);
        if (response.status === 200) return performance.now() - started;
      } catch {
        /* not listening yet */
      }
      if (performance.now() - started > 30_000) throw new Error('engine did not become ready in 30 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  }
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-cold-'));
const first = await measure(dataDir, 18931);
const restart = await measure(dataDir, 18932);
const result = {
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
  method: 'spawn `node bin/engine.js start`, poll GET /readyz every 20 ms until 200',
  firstStartMs: Math.round(first),
  restartMs: Math.round(restart),
};
fs.writeFileSync(path.join(root, 'bench/results/cold-start.json'), `${JSON.stringify(result, null, 2)}\n`);
fs.writeFileSync(
  path.join(root, 'bench/results/cold-start.md'),
  `# Cold start\n\nMachine: ${result.machine.cpus} × ${result.machine.model}, Node ${result.machine.node}\n\nMethod: ${result.method}\n\n| start | ms |\n|---|---|\n| first (fresh DATA_DIR) | ${result.firstStartMs} |\n| restart (same DATA_DIR) | ${result.restartMs} |\n`,
);
process.stdout.write(`${JSON.stringify(result)}\n`);
