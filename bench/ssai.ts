// bench/ssai: stitched live media playlist requests per second with 1000 sessions, side by side with a bare
// node:http server returning the same origin playlist in the same run (issue 5 "bench/ssai"); p50/p99 latency,
// origin fetches per playlist refresh, memory per session. The rewrite microbenchmark is bench/ssai-rewrite.ts.
// Usage: npx tsx bench/ssai.ts [seconds=8] [sessions=1000]
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { OriginServer, BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../fixtures/origin-server.js';
import { VastServer } from '../fixtures/vast-server.js';
import { startEngineWith } from '../test/ssai/setup.js';

// autocannon ships no types: the slice used here.
type CannonResult = { requests: { average: number }; latency: { p50: number; p99: number }; errors: number; non2xx: number };
type CannonRequest = { path?: string; [k: string]: unknown };
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: {
  url: string; connections: number; duration: number; requests: Array<{ setupRequest: (req: CannonRequest) => CannonRequest }>;
}) => Promise<CannonResult>;

const seconds = Number(process.argv[2] ?? 8);
const sessions = Number(process.argv[3] ?? 1000);

async function cannon(url: string, paths: string[]): Promise<CannonResult> {
  let i = 0;
  return autocannon({
    url, connections: 50, duration: seconds,
    requests: [{ setupRequest: (req: CannonRequest) => ({ ...req, path: paths[i++ % paths.length]! }) }],
  });
}

const origin = await OriginServer.start({ cueForm: 'cue-out' });
const vast = await VastServer.start();
origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
const engine = await startEngineWith({ originCacheMs: 1000, env: { LOG_LEVEL: 'silent' } });
const auth = { Authorization: (await engine.login()).IdToken };
const created = await engine.api('POST', '/broker/adinserts', { headers: auth, body: { name: 'bench', type: 'live', ad_server: `${vast.url}/vast4`, source_url: `${origin.url}/` } });
const guid = created.body.guid as string;

global.gc?.();
const heapBefore = process.memoryUsage().heapUsed;
const paths: string[] = [];
for (let s = 0; s < sessions; s++) {
  const master = await (await fetch(`${engine.url}/v1/master/${guid}/live/master.m3u8`)).text();
  const v0 = master.split('\n').find((l) => l.startsWith('/v1/manifest/'))!;
  paths.push(v0);
}
global.gc?.();
const heapSessions = process.memoryUsage().heapUsed;
for (const p of paths) await (await fetch(`${engine.url}${p}`)).text(); // every session decides its avail once
global.gc?.();
const heapDecided = process.memoryUsage().heapUsed;

const originText = origin.mediaPlaylist('v0', false);
const bare = http.createServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' }); res.end(originText); });
await new Promise<void>((r) => bare.listen(0, '127.0.0.1', () => r()));
const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;

const baseline = await cannon(bareUrl, ['/live/v0.m3u8']);
const fetchesBefore = origin.count('/live/v0.m3u8');
const proxied = await cannon(engine.url, paths);
const originFetches = origin.count('/live/v0.m3u8') - fetchesBefore;

const result = {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, memoryGb: Math.round(os.totalmem() / 2 ** 30) },
  method: `autocannon, 50 connections, ${seconds} s per target, loopback; ${sessions} sessions cycled on the stitched media playlist (one 10 s break, 2 ads) vs a bare node:http server returning the origin's media playlist`,
  stitched: { rps: proxied.requests.average, p50Ms: proxied.latency.p50, p99Ms: proxied.latency.p99, errors: proxied.errors + proxied.non2xx },
  baseline: { rps: baseline.requests.average, p50Ms: baseline.latency.p50, p99Ms: baseline.latency.p99 },
  ratio: Math.round((proxied.requests.average / baseline.requests.average) * 1000) / 1000,
  originFetches: { total: originFetches, perSegmentWindow: Math.round((originFetches / (seconds / SEGMENT_SECONDS)) * 100) / 100, note: 'origin cache 1 s, window advances every 2 s' },
  memory: {
    bytesPerSessionBeforeDecision: Math.round((heapSessions - heapBefore) / sessions),
    bytesPerSessionWithDecision: Math.round((heapDecided - heapBefore) / sessions),
    gcExposed: Boolean(global.gc),
  },
};
await mkdir('bench/results', { recursive: true });
await writeFile('bench/results/ssai.json', JSON.stringify(result, null, 2) + '\n');
await writeFile('bench/results/ssai.md', `# bench/ssai\n\n${result.date} · ${result.machine.cpus}× ${result.machine.model} · Node ${result.machine.node}\n\nMethod: ${result.method}.\n\n`
  + '| target | req/s | p50 ms | p99 ms |\n|---|---|---|---|\n'
  + `| stitched (proxy) | ${Math.round(result.stitched.rps)} | ${result.stitched.p50Ms} | ${result.stitched.p99Ms} |\n`
  + `| bare node:http, same origin playlist | ${Math.round(result.baseline.rps)} | ${result.baseline.p50Ms} | ${result.baseline.p99Ms} |\n\n`
  + `Ratio ${result.ratio} (goal ≥ 0.5). Origin fetches: ${result.originFetches.total} in ${seconds} s = ${result.originFetches.perSegmentWindow} per 2 s window (goal 1). `
  + `Heap per session: ${result.memory.bytesPerSessionBeforeDecision} B before its ad decision, ${result.memory.bytesPerSessionWithDecision} B with it (goal ≤ 2 KB; gc exposed: ${result.memory.gcExposed}).\n`);
process.stdout.write(JSON.stringify(result, null, 2) + '\n');
bare.close();
await engine.close();
await origin.close();
await vast.close();
process.exit(0);
