// bench/cluster (issue 20): stitched live media playlists per second served by one and by two `ssai` processes of a
// real cluster (PostgreSQL + Redis, the processes of test/cluster), with a static baseline in the same run (one and two
// bare node:http processes returning the origin's media playlist) and the Redis round trips per playlist request
// (the proxy's ssai_redis_round_trips_total over ssai_playlists_served_total). Each target is loaded by autocannon in
// child processes, one per server process, run at the same time; req/s are summed.
// Usage: npx tsx bench/cluster.ts [seconds=6] [sessions=200]
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BREAK_START, CLIP_SEGMENTS, OriginServer, SEGMENT_SECONDS } from '../fixtures/origin-server.js';
import { VastServer } from '../fixtures/vast-server.js';
import { CLUSTER_ADMIN, startCluster } from '../test/cluster/cluster.js';

const seconds = Number(process.argv[2] ?? 6);
const sessions = Number(process.argv[3] ?? 200);
const CONNECTIONS = 32;

type Load = { rps: number; p50Ms: number; p99Ms: number; requests: number; errors: number };

/** autocannon in a child process (its own event loop), cycling through paths. */
const CANNON = `
const { createRequire } = await import('node:module');
const { readFileSync } = await import('node:fs');
const autocannon = createRequire(process.cwd() + '/')('autocannon');
const { url, paths, connections, duration } = JSON.parse(readFileSync(process.argv[1], 'utf8'));
let i = 0;
const r = await autocannon({ url, connections, duration, requests: [{ setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length] }) }] });
process.stdout.write(JSON.stringify({ rps: Math.round(r.requests.average), p50Ms: r.latency.p50, p99Ms: r.latency.p99, requests: r.requests.total, errors: r.errors + r.non2xx }));
`;
/** A bare node:http server in its own process returning one fixed playlist: the static baseline. */
const BARE = `
const http = await import('node:http');
const { readFileSync } = await import('node:fs');
const text = readFileSync(process.argv[1], 'utf8');
const server = http.createServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' }); res.end(text); });
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

function node(script: string, arg: string): ReturnType<typeof spawn> {
  return spawn(process.execPath, ['--input-type=module', '-e', script, arg], { stdio: ['ignore', 'pipe', 'inherit'], env: { PATH: process.env.PATH ?? '' } });
}

async function cannon(url: string, paths: string[]): Promise<Load> {
  const file = path.join(os.tmpdir(), `bench-cluster-${process.pid}-${randomUUID()}.json`);
  await writeFile(file, JSON.stringify({ url, paths, connections: CONNECTIONS, duration: seconds }));
  try {
    const child = node(CANNON, file);
    let text = '';
    child.stdout!.on('data', (c: Buffer) => { text += c.toString(); });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    if (code !== 0) throw new Error(`autocannon exited ${code}`);
    return JSON.parse(text) as Load;
  } finally {
    await rm(file, { force: true });
  }
}

/** Loads several servers at once, one generator each; req/s and requests summed, latencies the worst. */
async function loadAll(targets: Array<{ url: string; paths: string[] }>): Promise<Load> {
  const runs = await Promise.all(targets.map((t) => cannon(t.url, t.paths)));
  return {
    rps: runs.reduce((t, r) => t + r.rps, 0), requests: runs.reduce((t, r) => t + r.requests, 0), errors: runs.reduce((t, r) => t + r.errors, 0),
    p50Ms: Math.max(...runs.map((r) => r.p50Ms)), p99Ms: Math.max(...runs.map((r) => r.p99Ms)),
  };
}

async function bareServers(count: number, text: string): Promise<{ urls: string[]; close(): void }> {
  const file = path.join(os.tmpdir(), `bench-cluster-bare-${process.pid}.m3u8`);
  await writeFile(file, text);
  const children = Array.from({ length: count }, () => node(BARE, file));
  const urls = await Promise.all(children.map((child) => new Promise<string>((resolve) => {
    child.stdout!.once('data', (c: Buffer) => resolve(`http://127.0.0.1:${c.toString().trim()}`));
  })));
  return { urls, close: () => children.forEach((c) => c.kill()) };
}

/** A counter of an ssai process's /metrics (summed over label sets matching `labels`). */
async function counter(url: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith(name) && l.includes(labels)).reduce((t, l) => t + Number(l.split(' ').pop()), 0);
}

const origin = await OriginServer.start({ cueForm: 'cue-out' });
const vast = await VastServer.start();
const RUN_EDGE = CLIP_SEGMENTS + BREAK_START + 5;
origin.position = RUN_EDGE * SEGMENT_SECONDS;
const cluster = await startCluster({ ssai: 2, workers: 1, logsToFiles: true });
try {
  const base = cluster.balancer.url;
  const login = await fetch(`${base}/auth/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(CLUSTER_ADMIN) });
  const auth = { Authorization: ((await login.json()) as { data: { IdToken: string } }).data.IdToken };
  const created = await fetch(`${base}/broker/adinserts`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify({ name: 'bench', type: 'live', ad_server: `${vast.url}/vast4`, source_url: `${origin.url}/` }),
  });
  const guid = ((await created.json()) as { guid: string }).guid;
  const [one, two] = cluster.ssai as [typeof cluster.ssai[0], typeof cluster.ssai[0]];

  // Warm-up: the first sessions have the creatives prepared by the worker (stored in Redis for every process after),
  // until a new session's first playlist, asked of the other process, comes stitched.
  for (let attempt = 0; ; attempt++) {
    const probe = randomUUID();
    await (await fetch(`${one.url}/v1/master/${guid}/live/master.m3u8?sessionId=${probe}`)).text();
    if ((await (await fetch(`${two.url}/v1/manifest/${guid}/${probe}/0.m3u8`)).text()).includes('/v1/segment/')) break;
    if (attempt > 240) throw new Error('the creatives were not prepared in 2 minutes');
    await new Promise((r) => setTimeout(r, 500));
  }
  // The measured sessions: created on either process, decided once (their avail), then served by both.
  const sids = Array.from({ length: sessions }, () => randomUUID());
  for (const [i, sid] of sids.entries()) {
    const server = i % 2 ? two : one;
    await (await fetch(`${server.url}/v1/master/${guid}/live/master.m3u8?sessionId=${sid}`)).text();
    await (await fetch(`${server.url}/v1/manifest/${guid}/${sid}/0.m3u8`)).text();
  }
  const paths = sids.map((sid) => `/v1/manifest/${guid}/${sid}/0.m3u8`);
  const sample = await (await fetch(`${two.url}${paths[0]}`)).text();
  if (!sample.includes('/v1/segment/')) throw new Error('the benchmarked playlist has no stitched ad');

  const measure = async (servers: Array<{ url: string }>) => {
    origin.setRealTime(false);
    origin.position = RUN_EDGE * SEGMENT_SECONDS;
    origin.setRealTime(true);
    const before = await Promise.all(servers.map(async (s) => [await counter(s.url, 'ssai_redis_round_trips_total'), await counter(s.url, 'ssai_playlists_served_total', 'kind="media"')]));
    const load = await loadAll(servers.map((s) => ({ url: s.url, paths })));
    const after = await Promise.all(servers.map(async (s) => [await counter(s.url, 'ssai_redis_round_trips_total'), await counter(s.url, 'ssai_playlists_served_total', 'kind="media"')]));
    origin.setRealTime(false);
    const trips = after.reduce((t, a, i) => t + a[0]! - before[i]![0]!, 0);
    const served = after.reduce((t, a, i) => t + a[1]! - before[i]![1]!, 0);
    return { load, redisRoundTrips: trips, playlistsServed: served, redisRoundTripsPerPlaylist: Math.round((trips / Math.max(1, served)) * 1000) / 1000 };
  };

  const loadavg = () => os.loadavg().map((x) => Math.round(x * 100) / 100);
  const loadBefore = loadavg();
  const bare = await bareServers(2, origin.mediaPlaylist('v0', false));
  const baseline = (count: number) => loadAll(bare.urls.slice(0, count).map((url) => ({ url, paths: ['/live/v0.m3u8'] })));
  // Other work shares the machine: two rounds in opposite orders, the mean of the two runs of each target reported.
  type Proxied = Awaited<ReturnType<typeof measure>>;
  const runs: { b1: Load[]; s1: Proxied[]; b2: Load[]; s2: Proxied[] } = { b1: [], s1: [], b2: [], s2: [] };
  runs.b1.push(await baseline(1));
  runs.s1.push(await measure([one]));
  runs.b2.push(await baseline(2));
  runs.s2.push(await measure([one, two]));
  runs.s2.push(await measure([one, two]));
  runs.b2.push(await baseline(2));
  runs.s1.push(await measure([one]));
  runs.b1.push(await baseline(1));
  bare.close();
  const mean = (loads: Load[]): Load => ({
    rps: Math.round(loads.reduce((t, l) => t + l.rps, 0) / loads.length), requests: loads.reduce((t, l) => t + l.requests, 0),
    errors: loads.reduce((t, l) => t + l.errors, 0), p50Ms: Math.max(...loads.map((l) => l.p50Ms)), p99Ms: Math.max(...loads.map((l) => l.p99Ms)),
  });
  const merge = (proxied: Proxied[]): Proxied => {
    const trips = proxied.reduce((t, p) => t + p.redisRoundTrips, 0);
    const served = proxied.reduce((t, p) => t + p.playlistsServed, 0);
    return { load: mean(proxied.map((p) => p.load)), redisRoundTrips: trips, playlistsServed: served, redisRoundTripsPerPlaylist: Math.round((trips / Math.max(1, served)) * 1000) / 1000 };
  };
  const baselineOne = mean(runs.b1);
  const baselineTwo = mean(runs.b2);
  const ssaiOne = merge(runs.s1);
  const ssaiTwo = merge(runs.s2);
  const loadAfter = loadavg();
  const ratio = (a: Load, b: Load) => Math.round((a.rps / b.rps) * 1000) / 1000;

  const result = {
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, memoryGb: Math.round(os.totalmem() / 2 ** 30), loadAverageBefore: loadBefore, loadAverageAfter: loadAfter },
    method: `a cluster of real processes (api, 2 ssai, 1 worker, packager) on PostgreSQL + Redis, LOG_LEVEL info (the default: one JSON line per request, written to a file); ${sessions} sessions with a decided avail (one 10 s break, 2 ads, the origin window moving in real time) cycled on the stitched live media playlist; autocannon, ${CONNECTIONS} connections per generator, ${seconds} s, one generator process per server process run at once (req/s summed); two rounds in opposite orders, mean req/s and worst latencies of the two runs of each target; baseline: as many bare node:http processes returning the origin's media playlist, loaded the same way`,
    oneSsai: { ...ssaiOne, baseline: baselineOne, ratio: ratio(ssaiOne.load, baselineOne) },
    twoSsai: { ...ssaiTwo, baseline: baselineTwo, ratio: ratio(ssaiTwo.load, baselineTwo) },
    scaling: { stitched: ratio(ssaiTwo.load, ssaiOne.load), baseline: ratio(baselineTwo, baselineOne) },
    runs: { stitchedOne: runs.s1.map((r) => r.load.rps), stitchedTwo: runs.s2.map((r) => r.load.rps), baselineOne: runs.b1.map((r) => r.rps), baselineTwo: runs.b2.map((r) => r.rps) },
  };
  await mkdir('bench/results', { recursive: true });
  await writeFile('bench/results/cluster.json', JSON.stringify(result, null, 2) + '\n');
  const row = (name: string, l: Load) => `| ${name} | ${l.rps} | ${l.p50Ms} | ${l.p99Ms} | ${l.requests} | ${l.errors} |\n`;
  await writeFile('bench/results/cluster.md', `# bench/cluster\n\n${result.date} · ${result.machine.cpus}× ${result.machine.model} · ${result.machine.memoryGb} GB · Node ${result.machine.node} · load average ${loadBefore.join('/')} before, ${loadAfter.join('/')} after (other work shared the machine)\n\n`
    + `Command: \`npm run bench:cluster -- ${seconds} ${sessions}\`\n\nMethod: ${result.method}.\n\n`
    + '| target | req/s | p50 ms | p99 ms | requests | errors |\n|---|---|---|---|---|---|\n'
    + row('stitched, one ssai process', ssaiOne.load) + row('baseline, one bare node:http process', baselineOne)
    + row('stitched, two ssai processes', ssaiTwo.load) + row('baseline, two bare node:http processes', baselineTwo)
    + '\n| figure | one ssai | two ssai |\n|---|---|---|\n'
    + `| req/s ratio to the baseline of the same size | ${result.oneSsai.ratio} | ${result.twoSsai.ratio} |\n`
    + `| Redis round trips per playlist request | ${ssaiOne.redisRoundTripsPerPlaylist} (${ssaiOne.redisRoundTrips} for ${ssaiOne.playlistsServed}) | ${ssaiTwo.redisRoundTripsPerPlaylist} (${ssaiTwo.redisRoundTrips} for ${ssaiTwo.playlistsServed}) |\n`
    + `| two processes over one | stitched ×${result.scaling.stitched} | baseline ×${result.scaling.baseline} |\n`
    + `| req/s of each run (round 1, round 2) | stitched ${result.runs.stitchedOne.join(', ')}; baseline ${result.runs.baselineOne.join(', ')} | stitched ${result.runs.stitchedTwo.join(', ')}; baseline ${result.runs.baselineTwo.join(', ')} |\n`
    + `\nOn a machine with fewer cores than processes (servers plus generators) two processes cannot double the rate; the baseline's own scaling in the same run is the reference.\n`);
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
} finally {
  await cluster.close();
  await origin.close();
  await vast.close();
}
