// Measures the web console's first load in Debian's Chromium (a fresh browser context each run: nothing cached):
// /console/ until the sign-in form shows, and sign-in until the workflows table shows, with the bytes transferred.
// Baseline from the same run and engine: /docs (swagger-ui, also served from node_modules) until its operations show.
// Writes bench/results/console.{json,md}. Usage: npm run bench:console [-- runs]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { startTestEngine, ADMIN_EMAIL, ADMIN_PASSWORD } from '../test/helpers/engine.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/helpers/hls-player.js';
import { ensureConsoleBuilt } from '../test/console/helpers.js';

const root = path.resolve(import.meta.dirname, '..');
const runs = Number(process.argv[2] ?? 10);

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

interface Sample { ms: number; bytes: number; signInMs?: number }

async function load(browser: Browser, url: string, ready: string, signIn: boolean): Promise<Sample> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  let bytes = 0;
  page.on('response', (response) => {
    void response.body().then((body) => { bytes += body.length; }, () => undefined);
  });
  const started = performance.now();
  await page.goto(url);
  await page.waitForSelector(ready, { state: 'visible' });
  const ms = performance.now() - started;
  let signInMs: number | undefined;
  if (signIn) {
    await page.fill('input[name=email]', ADMIN_EMAIL);
    await page.fill('input[name=password]', ADMIN_PASSWORD);
    const at = performance.now();
    await page.click('button[type=submit]');
    await page.waitForSelector('table[aria-label="Workflows"]', { state: 'visible' });
    signInMs = performance.now() - at;
  }
  await page.waitForLoadState('networkidle');
  await context.close();
  return { ms, bytes, ...(signInMs !== undefined ? { signInMs } : {}) };
}

await ensureConsoleBuilt();
const engine = await startTestEngine();
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
try {
  const consoleRuns: Sample[] = [];
  const docsRuns: Sample[] = [];
  await load(browser, `${engine.url}/console/`, 'input[name=email]', false); // warm the engine, not the browser
  for (let i = 0; i < runs; i++) {
    consoleRuns.push(await load(browser, `${engine.url}/console/`, 'input[name=email]', true));
    docsRuns.push(await load(browser, `${engine.url}/docs`, '.opblock', false));
  }
  const result = {
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, load: os.loadavg().map((l) => Math.round(l * 100) / 100) },
    method: `${runs} runs each, a new Chromium context per run (empty cache), engine on 127.0.0.1; medians`,
    console: {
      firstPaintOfSignInMs: Math.round(median(consoleRuns.map((r) => r.ms))),
      signInToWorkflowsMs: Math.round(median(consoleRuns.map((r) => r.signInMs ?? Number.NaN))),
      bytesToSignIn: median(consoleRuns.map((r) => r.bytes)),
    },
    baselineDocs: {
      operationsShownMs: Math.round(median(docsRuns.map((r) => r.ms))),
      bytes: median(docsRuns.map((r) => r.bytes)),
    },
  };
  fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
  fs.writeFileSync(path.join(root, 'bench/results/console.json'), `${JSON.stringify(result, null, 2)}\n`);
  fs.writeFileSync(path.join(root, 'bench/results/console.md'), `# Web console first load

Machine: ${result.machine.cpus} × ${result.machine.model}, Node ${result.machine.node}, load ${result.machine.load.join(' ')}

Method: ${result.method}

| page | ready when | median ms | bytes |
|---|---|---|---|
| /console/ | sign-in form visible | ${result.console.firstPaintOfSignInMs} | ${result.console.bytesToSignIn} (whole visit) |
| /console/ sign-in | workflows table visible | ${result.console.signInToWorkflowsMs} | |
| /docs (baseline) | swagger-ui operations visible | ${result.baselineDocs.operationsShownMs} | ${result.baselineDocs.bytes} |
`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await browser.close();
  await engine.close();
}
