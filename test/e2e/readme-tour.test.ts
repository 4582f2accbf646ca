// The README's ten-minute tour, run as a reader would: its shell blocks in order, in one bash, against the real
// `engine` command started as the tour says, then docs/broker.md's virtual channel, which continues that shell, and
// docs/api.md's curl session (issue 26: every README command works and follows DATA_DIR). curl fails on an HTTP error
// status here, and the shell stops at the first failing command, so a block that only "prints something" must also
// succeed.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngineProcess, type EngineProcess } from '../helpers/engine-process.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const START = 'ENGINE_ADMIN_PASSWORD=change-me-now npm start';

/** The `sh` blocks of one markdown section (from its heading to the next heading of the same level or above). */
export function shellBlocks(markdown: string, heading: string): string[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line === heading);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  const blocks: string[] = [];
  let block: string[] | undefined;
  let isShell = false;
  for (const line of lines.slice(start + 1)) {
    if (block) {
      if (!line.startsWith('```')) block.push(line);
      else {
        if (isShell) blocks.push(block.join('\n'));
        block = undefined;
      }
      continue;
    }
    if (line.startsWith('```')) {
      block = [];
      isShell = line === '```sh';
      continue;
    }
    const headingLevel = /^(#+)\s/.exec(line)?.[1]?.length;
    if (headingLevel !== undefined && headingLevel <= level) break;
  }
  return blocks;
}

interface Run {
  code: number | null;
  output: string;
}

/** Runs `script` in bash from the checkout, in its own process group, which is killed at the end (the demo origin). */
function runBash(script: string, env: Record<string, string>, timeoutMs: number): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: root, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      output += `\n[test] the tour ran over ${timeoutMs} ms\n`;
      killGroup();
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      killGroup();
      resolve({ code, output });
    });
  });
}

describe('the README tour', () => {
  let engine: EngineProcess;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-tour-'));
    // as the tour's first block starts it (npm start = bin/engine.js start), on a free port and a fresh DATA_DIR
    engine = await startEngineProcess('tour', { DATA_DIR: dataDir, ENGINE_ADMIN_PASSWORD: 'change-me-now', RTMP_PORT: '0' });
  });
  afterAll(async () => {
    await engine?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs every block of the tour, then the virtual channel of docs/broker.md, and each does what it says', async () => {
    const tour = shellBlocks(fs.readFileSync(path.join(root, 'README.md'), 'utf8'), '## A ten-minute tour');
    expect(tour[0]?.trim()).toBe(START);
    const broker = shellBlocks(fs.readFileSync(path.join(root, 'docs/broker.md'), 'utf8'), '# Broker channel manager: channels, listings, playlists, virtual channels');
    // docs/api.md's sign-in, key, private call and refresh stand alone (they set the same names again): run last
    const apiPage = shellBlocks(fs.readFileSync(path.join(root, 'docs/api.md'), 'utf8'), '## Use it with curl');
    expect(apiPage).toHaveLength(1);
    const steps = [...tour.slice(1), ...broker, ...apiPage];
    expect(steps.length).toBeGreaterThanOrEqual(5);
    const script = [
      'set -euo pipefail',
      // an HTTP error status fails the command (the tour's own `curl -s` prints the body and goes on)
      'curl() { command curl --fail-with-body "$@"; }',
      ...steps.flatMap((step, index) => [step, `echo "[tour] step ${index + 1} done"`]),
    ].join('\n');
    const run = await runBash(script, { BASE: engine.url, DATA_DIR: dataDir }, 840_000);
    fs.mkdirSync(path.join(root, 'test-output'), { recursive: true });
    fs.writeFileSync(path.join(root, 'test-output/readme-tour.log'), run.output); // what a reader would have seen
    const done = [...run.output.matchAll(/\[tour\] step (\d+) done/g)].length;
    expect({ code: run.code, done, tail: run.code === 0 ? '' : run.output.slice(-4000) }).toEqual({ code: 0, done: steps.length, tail: '' });
    // what the steps print: the channel decoded, its break announced then cued, the archive's duration, an ad stitched,
    // the VOD complete, and the virtual channel playing the VOD
    expect(run.output).toContain('decoded');
    expect(run.output).toMatch(/#EXT-X-DATERANGE:.*SCTE35-OUT/);
    expect(run.output).toMatch(/#EXT-X-CUE-OUT:/);
    expect(run.output).toContain('#EXT-X-CUE-IN');
    const probed = execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', path.join(root, '.scratch/archive.mp4')], { encoding: 'utf8' });
    expect(run.output).toContain(probed.trim()); // the tour printed the archive's duration
    expect(Number(probed)).toBeGreaterThan(10);
    expect(run.output).toMatch(/\/v1\/segment\//);
    expect(run.output).toContain('"status":"complete"');
    expect(run.output).toContain('Item was created successfully'); // docs/api.md: the private path took the key
    // the files the tour wrote: in .scratch/ and under DATA_DIR, none in the checkout's root
    for (const name of ['clip.mp4', 'demo.json', 'archive.mp4']) {
      expect(fs.existsSync(path.join(root, '.scratch', name)), name).toBe(true);
      expect(fs.existsSync(path.join(root, name)), name).toBe(false);
    }
    expect(fs.existsSync(path.join(dataDir, 'test-media/sample.mp4'))).toBe(true);
  }, 900_000);
});
