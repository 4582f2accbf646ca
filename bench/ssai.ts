// bench/ssai: stitched live media playlist requests per second with 1000 sessions, side by side with a bare
// node:http server returning the same origin playlist in the same run (issue 5 "bench/ssai"); p50/p99 latency,
// origin fetches per playlist refresh, memory per session. The rewrite microbenchmark is bench/ssai-rewrite.ts.
// Load is generated twice with the same settings for both targets: by autocannon in this process (the historical
// method: it shares the event loop with the server) and by autocannon in a child node process (the figure that
// counts: the load generator gets its own event loop).
// Usage: NODE_OPTIONS=--expose-gc npx tsx bench/ssai.ts [seconds=8] [sessions=1000]
import { cannonChild as runChild, toLoad, type CannonResult, type Load } from './lib/autocannon-child.js';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { OriginServer, BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../fixtures/origin-server.js';
import { VastServer } from '../fixtures/vast-server.js';
import { startEngineWith } from '../test/ssai/setup.js';

// autocannon ships no types: the slice used here.
type CannonRequest = { path?: string; [k: string]: unknown };
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: {
  url: string; connections: number; duration: number; requests: Array<{ setupRequest: (req: CannonRequest) => CannonRequest }>;
}) => Promise<CannonResult>;

const seconds = Number(process.argv[2] ?? 8);
const sessions = Number(process.argv[3] ?? 1000);
const CONNECTIONS = 50;


async function cannonInProcess(url: string, paths: string[]): Promise<Load> {
  let i = 0;
  return toLoad(await autocannon({
    url, connections: CONNECTIONS, duration: seconds,
    requests: [{ setupRequest: (req: CannonRequest) => ({ ...req, path: paths[i++ % paths.length]! }) }],
  }));
}

const cannonChild = (url: string, paths: string[]): Promise<Load> => runChild(url, paths, { connections: CONNECTIONS, seconds });

const origin = await OriginServer.start({ cueForm: 'cue-out' });
const vast = await VastServer.start();
// The live edge where the proxy runs start: the break (segments 14..18) is in the window for the whole run while
// the window moves in real time (so the origin fetch count is per real refresh).
const RUN_EDGE = CLIP_SEGMENTS + BREAK_START + 5;
origin.position = RUN_EDGE * SEGMENT_SECONDS;
const engine = await startEngineWith({ originCacheMs: undefined, env: { LOG_LEVEL: 'silent' } });
const auth = { Authorization: (await engine.login()).IdToken };
const created = await engine.api('POST', '/broker/adinserts', { headers: auth, body: { name: 'bench', type: 'live', ad_server: `${vast.url}/vast4`, source_url: `${origin.url}/` } });
const guid = created.body.guid as string;

// The bench's own strings (session ids, paths) exist before the first heap reading: only the server's state is counted.
const sids = Array.from({ length: sessions }, () => randomUUID());
const paths = sids.map((sid) => `/v1/manifest/${guid}/${sid}/0.m3u8`);
const masters = sids.map((sid) => `${engine.url}/v1/master/${guid}/live/master.m3u8?sessionId=${sid}`);
// Warm-up: as many throw-away sessions first (the first thousand requests of a route grow the heap by themselves:
// compiled code, pools), so the readings below count the state of a session, not the engine warming up.
const heapNow = (): number => {
  (vast as unknown as { requests: unknown[] }).requests.length = 0; // the ad server fixture's own request log
  global.gc?.();
  global.gc?.();
  return process.memoryUsage().heapUsed;
};
for (let s = 0; s < sessions; s++) {
  const sid = randomUUID();
  await (await fetch(`${engine.url}/v1/master/${guid}/live/master.m3u8?sessionId=${sid}`)).text();
  await (await fetch(`${engine.url}/v1/manifest/${guid}/${sid}/0.m3u8`)).text();
}
// The warm-up's decision locks (5 s TTL) are purged when they expire: let them go before the first reading.
await new Promise((r) => setTimeout(r, 5500));
const heapBefore = heapNow();
for (let s = 0; s < sessions; s++) {
  const master = await (await fetch(masters[s]!)).text();
  if (!master.includes(paths[s]!)) throw new Error(`the master playlist of session ${s} does not name ${paths[s]}`);
}
const heapSessions = heapNow();
for (const p of paths) await (await fetch(`${engine.url}${p}`)).text(); // every session decides its avail once
const heapDecided = heapNow();
await new Promise((r) => setTimeout(r, 5500)); // the measured sessions' decision locks expire too: steady state
const heapSteady = heapNow();
const sample = await (await fetch(`${engine.url}${paths[0]}`)).text();
if (!sample.includes('/v1/segment/')) throw new Error('the benchmarked playlist has no stitched ad');

const originText = origin.mediaPlaylist('v0', false);
const bare = http.createServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' }); res.end(originText); });
await new Promise<void>((r) => bare.listen(0, '127.0.0.1', () => r()));
const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;

async function proxyRun(load: (url: string, paths: string[]) => Promise<Load>): Promise<{ load: Load; fetches: number; windows: number; perWindow: number }> {
  origin.setRealTime(false);
  origin.position = RUN_EDGE * SEGMENT_SECONDS;
  origin.setRealTime(true);
  const before = origin.count('/live/v0.m3u8');
  const t0 = Date.now();
  const result = await load(engine.url, paths);
  const fetches = origin.count('/live/v0.m3u8') - before;
  const windows = (Date.now() - t0) / 1000 / SEGMENT_SECONDS;
  origin.setRealTime(false);
  return { load: result, fetches, windows: Math.round(windows * 100) / 100, perWindow: Math.round((fetches / windows) * 100) / 100 };
}

// Other work on the machine (load average recorded) shifts single runs: the child-process pair runs twice, the
// targets alternating, and the reported figures are the mean of the two runs of each target.
const loadavg = () => os.loadavg().map((x) => Math.round(x * 100) / 100);
const loadBefore = loadavg();
const baselineIn = await cannonInProcess(bareUrl, ['/live/v0.m3u8']);
const proxyIn = await proxyRun(cannonInProcess);
const baselineChildRuns = [await cannonChild(bareUrl, ['/live/v0.m3u8'])];
const proxyChildRuns = [await proxyRun(cannonChild)];
baselineChildRuns.push(await cannonChild(bareUrl, ['/live/v0.m3u8']));
proxyChildRuns.push(await proxyRun(cannonChild));
const loadAfter = loadavg();
const ratio = (a: Load, b: Load) => Math.round((a.rps / b.rps) * 1000) / 1000;
const mean = (runs: Load[]): Load => ({
  rps: Math.round(runs.reduce((t, r) => t + r.rps, 0) / runs.length),
  p50Ms: runs.reduce((t, r) => t + r.p50Ms, 0) / runs.length,
  p90Ms: runs.reduce((t, r) => t + r.p90Ms, 0) / runs.length,
  p99Ms: runs.reduce((t, r) => t + r.p99Ms, 0) / runs.length,
  requests: runs.reduce((t, r) => t + r.requests, 0),
  errors: runs.reduce((t, r) => t + r.errors, 0),
});
const baselineChild = mean(baselineChildRuns);
const proxyChild = { load: mean(proxyChildRuns.map((r) => r.load)), fetches: proxyChildRuns.reduce((t, r) => t + r.fetches, 0), windows: Math.round(proxyChildRuns.reduce((t, r) => t + r.windows, 0) * 100) / 100, perWindow: 0 };
proxyChild.perWindow = Math.round((proxyChild.fetches / proxyChild.windows) * 100) / 100;

const result = {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, memoryGb: Math.round(os.totalmem() / 2 ** 30), loadAverageBefore: loadBefore, loadAverageAfter: loadAfter },
  method: `autocannon, ${CONNECTIONS} connections, ${seconds} s per target, loopback; ${sessions} sessions cycled on the stitched live media playlist (one 10 s break, 2 ads; the origin window moves in real time, 2 s segments) vs a bare node:http server returning the origin's media playlist; each target loaded by autocannon in a child process (separate event loop; two alternating runs per target, mean reported) and, for comparison with earlier runs, once in the server's process (the load generator shares the event loop)`,
  goals: { ratio: 0.5, p99Ms: 20, originFetchesPerWindow: 1, bytesPerSession: 2048 },
  separateProcess: {
    stitched: proxyChild.load, baseline: baselineChild, ratio: ratio(proxyChild.load, baselineChild),
    runs: proxyChildRuns.map((p, i) => ({ stitched: p.load, baseline: baselineChildRuns[i]!, ratio: ratio(p.load, baselineChildRuns[i]!) })),
  },
  sameProcess: { stitched: proxyIn.load, baseline: baselineIn, ratio: ratio(proxyIn.load, baselineIn) },
  originFetches: {
    separateProcess: { total: proxyChild.fetches, windows: proxyChild.windows, perWindow: proxyChild.perWindow },
    sameProcess: { total: proxyIn.fetches, windows: proxyIn.windows, perWindow: proxyIn.perWindow },
    note: `fetches of the origin's v0 playlist during each stitched run; a window is one target duration (${SEGMENT_SECONDS} s), the origin refreshes once per window; origin cache aligned to the refresh`,
  },
  memory: {
    bytesPerSessionBeforeDecision: Math.round((heapSessions - heapBefore) / sessions),
    bytesPerSessionWithDecision: Math.round((heapSteady - heapBefore) / sessions),
    bytesPerSessionWithDecisionAndLock: Math.round((heapDecided - heapBefore) / sessions),
    note: `heapUsed after gc, over ${sessions} sessions made after as many warm-up sessions; the in-process ad server fixture's request log is emptied before each reading; with decision: read once the 5 s decision locks have expired, and right after the decisions with the locks still held`,
    gcExposed: Boolean(global.gc),
  },
};
await mkdir('bench/results', { recursive: true });
await writeFile('bench/results/ssai.json', JSON.stringify(result, null, 2) + '\n');
const row = (name: string, l: Load) => `| ${name} | ${l.rps} | ${l.p50Ms} | ${l.p90Ms} | ${l.p99Ms} | ${l.errors} |\n`;
await writeFile('bench/results/ssai.md', `# bench/ssai\n\n${result.date} · ${result.machine.cpus}× ${result.machine.model} · ${result.machine.memoryGb} GB · Node ${result.machine.node} · load average ${loadBefore.join('/')} before, ${loadAfter.join('/')} after (other work shared the machine)\n\n`
  + `Command: \`NODE_OPTIONS=--expose-gc npx tsx bench/ssai.ts ${seconds} ${sessions}\`\n\nMethod: ${result.method}.\n\n`
  + '| target (load generator) | req/s | p50 ms | p90 ms | p99 ms | errors |\n|---|---|---|---|---|---|\n'
  + row('stitched proxy (autocannon in a child process, mean of 2)', result.separateProcess.stitched)
  + row('bare node:http, same origin playlist (child process, mean of 2)', result.separateProcess.baseline)
  + result.separateProcess.runs.map((r, i) => row(`  run ${i + 1}: stitched`, r.stitched) + row(`  run ${i + 1}: bare`, r.baseline)).join('')
  + row('stitched proxy (autocannon in the server process)', result.sameProcess.stitched)
  + row('bare node:http (in the server process)', result.sameProcess.baseline)
  + '\n| figure | measured | baseline / goal |\n|---|---|---|\n'
  + `| req/s ratio, child-process load | ${result.separateProcess.ratio} | bare node:http = 1; goal ≥ 0.5 |\n`
  + `| req/s ratio, same-process load | ${result.sameProcess.ratio} | goal ≥ 0.5 |\n`
  + `| p99, child-process load | ${result.separateProcess.stitched.p99Ms} ms | bare ${result.separateProcess.baseline.p99Ms} ms; goal < 20 ms |\n`
  + `| p99, same-process load | ${result.sameProcess.stitched.p99Ms} ms | bare ${result.sameProcess.baseline.p99Ms} ms; goal < 20 ms |\n`
  + `| origin fetches per ${SEGMENT_SECONDS} s window | ${result.originFetches.separateProcess.perWindow} (${result.originFetches.separateProcess.total} in ${result.originFetches.separateProcess.windows} windows); same-process run ${result.originFetches.sameProcess.perWindow} (${result.originFetches.sameProcess.total} in ${result.originFetches.sameProcess.windows}) | goal 1 |\n`
  + `| heap per session, before its ad decision | ${result.memory.bytesPerSessionBeforeDecision} B | goal ≤ 2048 B |\n`
  + `| heap per session, with its ad decision | ${result.memory.bytesPerSessionWithDecision} B | goal ≤ 2048 B (gc exposed: ${result.memory.gcExposed}) |\n`
  + `| heap per session, with its ad decision and its 5 s decision lock still held | ${result.memory.bytesPerSessionWithDecisionAndLock} B | goal ≤ 2048 B |\n`
  + `\nMemory: ${result.memory.note}.\n`);
process.stdout.write(JSON.stringify(result, null, 2) + '\n');
bare.close();
await engine.close();
await origin.close();
await vast.close();
process.exit(0);
