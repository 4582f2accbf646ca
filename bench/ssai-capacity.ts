// bench/ssai-capacity (issue 19 point 4): how many viewers one engine process serves with personalised ads, at the
// players' own pace. Open loop: every viewer has its own session and its own ads (the fixture ad server answers each
// session with its own ad ids and tracking URLs), reloads its media playlist once per target duration (2 s) at its own
// phase, and latency counts from the scheduled send, so a stall shows as latency instead of slowing the load down. The
// origin (real-time live window, 2 s segments, a 10 s break every 20 s: a break in every window) and the ad server run
// in a child process, the load generator in another (many sockets, its own event loop), the engine in this one.
// The load generator is the C one (bench/lib/open-loop-load.c, built with the machine's `cc`): the Node one took 0.6-0.8
// of a core at 10,000 viewers, cores real players never take from a server. SSAI_CAPACITY_LOADGEN=node: the Node one.
// Beside each run: a static node:http server answering the origin's media playlist at the same rate (baseline); with
// segments, also the segment redirects and beacons of that traffic (floorServer: the floor of the machine without SSAI).
// Viewers join over a ramp (default 20 s, one break cycle: an audience arrives over time, each viewer's first reload
// at its own moment) and are measured once all have joined, for `seconds`; the ramp is reported on its own, and a ramp
// of 0 makes every viewer join in the same 2 s (a flood: the first break then asks for every decision at once).
// Usage: NODE_OPTIONS=--expose-gc npx tsx bench/ssai-capacity.ts [viewers=3000,6000,10000] [seconds=40] [cueForms=daterange-ahead,cue-out] [rampSeconds=20]
// Both cue styles by default (issue 28 point 4): breaks announced ahead (a future-dated DATERANGE) and breaks that
// appear at the live edge with no notice (EXT-X-CUE-OUT, what broadcast encoders write).
// Viewers also fetch their ad segments (redirects that fire the beacons), as players do; SSAI_CAPACITY_SEGMENTS=0: playlists only.
// SSAI_CAPACITY_CUT=0: playlists wait for a break still being decided instead of ending before it (the ssai part's
// cutBeforeUndecidedBreaks, on by default).
// SSAI_CAPACITY_TIMELINE=1: prints the tail, CPU (each engine thread's, with its wait for a core) and the decisions sent
// by second of the break cycle, with the decisions in flight and how long one took. SSAI_CAPACITY_PROFILE=dir: a CPU profile of the engine's main thread;
// SSAI_CAPACITY_ALLOCATIONS=dir: where it allocates (collected objects too). SSAI_DECISION_NICE / SSAI_BEACON_NICE / SSAI_FAST_GET set here reach the engine (else its defaults).
// SSAI_CAPACITY_MODES=stitched,guided (issue 30 point 6): each level in each insertion mode. Guided viewers reload the
// shared playlist (HLS Interstitials) and fetch each break's asset list once, as hls.js does; their fill is the share of
// asset lists answered with ads.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Session } from 'node:inspector/promises';
import v8 from 'node:v8';
import { ThreadedBeaconDelivery } from '../ssai/serve/beacon-thread.js';
import { buildNativeLoad, runNativeLoad } from './lib/native-load.js';
import { runViewerSchedule } from './lib/viewer-schedule.js';
import { performance as perfHooks, type EventLoopUtilization } from 'node:perf_hooks';

const role = process.argv[2]?.startsWith('--role=') ? process.argv[2].slice(7) : 'main';
const SELF = fileURLToPath(import.meta.url);
const PERIOD_MS = 2000;

type LoadResult = {
  viewers: number; seconds: number; sent: number; answered: number; errors: number; statuses: Record<string, number>;
  p50Ms: number; p90Ms: number; p99Ms: number; p999Ms: number; maxMs: number; withAds: number; setupMs: number;
  /** the ramp, while viewers join (not in the figures above) */
  ramp: { seconds: number; sent: number; p50Ms: number; p99Ms: number; maxMs: number };
  /** CPU time of the load generator over the ramp and the run, ms */
  cpuMs: number;
  /** the load generator's own event-loop stalls over 50 ms (ms from the start of the measured part) */
  stalls: Array<{ at: number; ms: number }>;
  /** p99 and the share of replies with ads by second of the schedule: where in the break cycle a tail comes from */
  bySecond: Array<{ s: number; p99Ms: number; withAds: number; sendLateP99Ms: number }>;
  /** wall-clock time (ms since the epoch) of second 0 of bySecond */
  measureFromWallMs: number;
  /** (unless SSAI_CAPACITY_SEGMENTS=0) the ad segments fetched as players do (their redirects fire the beacons), measured part */
  segments?: { sent: number; errors: number; p50Ms: number; p99Ms: number };
  /** guided viewers: the asset lists fetched (one per viewer and break), measured part; filled: answered with ads */
  assetLists?: { sent: number; errors: number; filled: number; p50Ms: number; p99Ms: number };
  /** which load generator made the load: the C one (bench/lib/open-loop-load.c) or the Node one */
  loadGenerator?: 'native' | 'node';
};

/**
 * Event-loop stalls of this process longer than 50 ms, by a 10 ms timer's lateness: where a latency spike comes from
 * (the engine, or the load generator itself). `at` is ms from `origin`.
 */
function watchStalls(origin: () => number): { stop(): Array<{ at: number; ms: number }> } {
  const stalls: Array<{ at: number; ms: number }> = [];
  let expected = performance.now() + 10;
  const timer = setInterval(() => {
    const now = performance.now();
    if (now - expected > 50) stalls.push({ at: Math.round(expected - origin()), ms: Math.round(now - expected) });
    expected = now + 10;
  }, 10);
  return { stop: () => { clearInterval(timer); return stalls; } };
}

/** Runs this file in a child node process with a role; resolves with the child and its first stdout line (JSON). */
async function child<T>(args: string[]): Promise<{ proc: ChildProcess; first: T; rest: Promise<string> }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', SELF, ...args], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, NODE_OPTIONS: '--max-old-space-size=2048' } });
  const lines = createInterface({ input: proc.stdout! });
  const it = lines[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done) throw new Error(`child ${args[0]} ended before answering`);
  const rest = (async () => { let out = ''; for (let n = await it.next(); !n.done; n = await it.next()) out += n.value; return out; })();
  return { proc, first: JSON.parse(first.value) as T, rest };
}

// ---------------------------------------------------------------------------------------------------------------
// world: the origin and the ad server, outside the engine's process
// ---------------------------------------------------------------------------------------------------------------
async function world(cueForm: string): Promise<void> {
  const { OriginServer, CLIP_SEGMENTS, SEGMENT_SECONDS } = await import('../fixtures/origin-server.js');
  const { VastServer } = await import('../fixtures/vast-server.js');
  // Start a few segments before the first break's announcement, real time from there.
  const origin = await OriginServer.start({ cueForm: cueForm as never, realTime: true, startSeconds: (CLIP_SEGMENTS - 1) * SEGMENT_SECONDS });
  const vast = await VastServer.start();
  setInterval(() => { (vast as unknown as { requests: unknown[] }).requests.length = 0; }, 5000).unref(); // its request log
  process.stdout.write(`${JSON.stringify({ origin: origin.url, vast: vast.url, streamMsAt: { wall: origin.realTimeFrom, stream: origin.position * 1000 } })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------------------------
// load: open-loop viewers
// ---------------------------------------------------------------------------------------------------------------
async function load(base: string, viewers: number, seconds: number, rampSeconds: number, masterPath: string, mediaPath: string): Promise<void> {
  const { Pool } = await import('undici');
  // the pool's connections, the same for either generator
  const connections = Math.min(1024, Math.max(64, Math.ceil(viewers / 10)));
  const pool = new Pool(base, { connections, keepAliveTimeout: 30_000 });
  // Each request through the pool's dispatch with a handler that gathers the body: no body stream and no async iterator
  // per request, as request() and body.text() make. The load generator shares the machine with the engine (on 2 cores it
  // took 0.45–0.6 of a core at 10,000 viewers); what it saves is left to the engine, and the baseline is loaded the
  // same way.
  const get = (p: string): Promise<{ status: number; text: string }> => new Promise((resolve, reject) => {
    let status = 0;
    const chunks: Buffer[] = [];
    pool.dispatch({ path: p, method: 'GET' }, {
      onRequestStart: () => undefined,
      onResponseStart: (_c, statusCode) => { status = statusCode; },
      onResponseData: (_c, chunk) => { chunks.push(chunk); },
      onResponseEnd: () => resolve({ status, text: chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8') }),
      onResponseError: (_c, err) => reject(err),
    });
  });
  // Sessions first (each viewer its own), 64 at a time: what a player does before its first media playlist.
  const setup0 = Date.now();
  const media: string[] = new Array(viewers);
  let next = 0;
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (next < viewers) {
      const i = next++;
      if (!masterPath) { media[i] = mediaPath; continue; }
      const m = await get(masterPath);
      const uri = m.text.split('\n').find((l, k, all) => l && !l.startsWith('#') && all[k - 1]?.startsWith('#EXT-X-STREAM-INF'));
      if (m.status !== 200 || !uri) throw new Error(`master answered ${m.status}`);
      media[i] = uri;
    }
  }));
  const setupMs = Date.now() - setup0;
  // Unless SSAI_CAPACITY_SEGMENTS=0, each viewer also fetches the new ad segments of the live edge (the last 3 of its playlist)
  // once, as a player does; a redirect to the creative, whose first, quartile and last segments fire the beacons.
  const withSegments = process.env.SSAI_CAPACITY_SEGMENTS !== '0';
  // The C generator, when the main process built it and no guided viewer needs asset lists: the same schedule and
  // fetches at a fraction of the CPU (see open-loop-load.c), so the engine keeps the cores real players leave it.
  const native = process.env.SSAI_CAPACITY_NATIVE_LOADGEN;
  if (native && !masterPath.includes('ads.mode=guided')) {
    await pool.close();
    const result = await runNativeLoad(native, base, media, { seconds, rampSeconds, periodMs: PERIOD_MS, connections, segments: withSegments });
    process.stdout.write(`${JSON.stringify({ ...result, setupMs })}\n`);
    process.exit(0);
  }
  // Viewer i joins at a moment of the ramp and reloads every period from there (bench/lib/viewer-schedule.ts).
  const rampMs = Math.max(PERIOD_MS, Math.round(rampSeconds * 1000 / PERIOD_MS) * PERIOD_MS);
  const latencies: number[] = [];
  const rampLatencies: number[] = [];
  const perSecond: Array<{ lat: number[]; ads: number; late: number[] }> = [];
  const statuses: Record<string, number> = {};
  let sent = 0, rampSent = 0, answered = 0, errors = 0, withAds = 0;
  const fetchedByViewer: string[][] = withSegments ? Array.from({ length: viewers }, () => []) : [];
  const segmentLatencies: number[] = [];
  let segmentsSent = 0, segmentErrors = 0;
  // Guided viewers (issue 30): each break's asset list once per viewer, resolved against its media playlist's URL.
  const lastAssetList: string[] = new Array(viewers).fill('');
  const assetListLatencies: number[] = [];
  let assetListsSent = 0, assetListErrors = 0, assetListsFilled = 0;
  const fetchAssetLists = (i: number, text: string, measured: boolean): void => {
    for (const m of text.matchAll(/X-ASSET-LIST="([^"]+)"/g)) {
      const uri = media[i]!.slice(0, media[i]!.lastIndexOf('/') + 1) + m[1]!;
      if (lastAssetList[i] === uri || lastAssetList[i]! > uri) continue; // asked already (ids grow with the break's date)
      lastAssetList[i] = uri;
      const t = performance.now();
      if (measured) assetListsSent++;
      void get(uri).then((r) => {
        const body = r.text;
        if (!measured) return;
        if (r.status !== 200) assetListErrors++;
        else if (body.includes('"URI"')) assetListsFilled++;
        assetListLatencies.push(performance.now() - t);
      }, () => { if (measured) assetListErrors++; });
    }
  };
  const fetchSegments = (i: number, text: string, measured: boolean): void => {
    const uris = text.split('\n').filter((l) => l && !l.startsWith('#')).slice(-3);
    const seen = fetchedByViewer[i]!;
    for (const uri of uris) {
      if (!uri.startsWith('/v1/segment/') || seen.includes(uri)) continue;
      seen.push(uri);
      if (seen.length > 8) seen.shift();
      const t = performance.now();
      if (measured) segmentsSent++;
      void get(uri).then((r) => {
        if (!measured) return;
        if (r.status !== 302) segmentErrors++;
        segmentLatencies.push(performance.now() - t);
      }, () => { if (measured) segmentErrors++; });
    }
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now() + 200;
  const measureFrom = t0 + rampMs;
  const end = measureFrom + seconds * 1000;
  const stallWatch = watchStalls(() => measureFrom);
  const inflight = new Set<Promise<void>>();
  const fire = (i: number, scheduled: number): void => {
    const measured = scheduled >= measureFrom;
    if (measured) sent++; else rampSent++;
    // how late the load generator itself sends (its own loop behind the schedule), apart from the engine's answer
    if (measured) (perSecond[Math.floor((scheduled - measureFrom) / 1000)] ??= { lat: [], ads: 0, late: [] }).late.push(performance.now() - scheduled);
    const p = (async () => {
      let ads = false, failed = false;
      try {
        const r = await get(media[i]!);
        if (measured) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        failed = r.status !== 200;
        ads = r.text.includes('/v1/segment/');
        if (withSegments && ads) fetchSegments(i, r.text, measured);
        if (r.status === 200 && r.text.includes('X-ASSET-LIST')) { ads = true; fetchAssetLists(i, r.text, measured); }
      } catch {
        failed = true;
        if (measured) statuses.error = (statuses.error ?? 0) + 1;
      }
      const latency = performance.now() - scheduled;
      if (!measured) { rampLatencies.push(latency); return; }
      answered++;
      if (failed) errors++;
      if (ads) withAds++;
      latencies.push(latency);
      const second = (perSecond[Math.floor((scheduled - measureFrom) / 1000)] ??= { lat: [], ads: 0, late: [] });
      second.lat.push(latency);
      if (ads) second.ads++;
    })();
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
  };
  await runViewerSchedule({ viewers, rampMs, periodMs: PERIOD_MS, t0, end, fire });
  await Promise.all(inflight);
  const stalls = stallWatch.stop();
  const cpu = process.cpuUsage(cpu0);
  const quantile = (sorted: number[], p: number) => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0) * 100) / 100;
  latencies.sort((a, b) => a - b);
  rampLatencies.sort((a, b) => a - b);
  const q = (p: number) => quantile(latencies, p);
  const bySecond = perSecond.map((x, s) => {
    const l = x.lat.sort((a, b) => a - b);
    const late = x.late.sort((a, b) => a - b);
    const p99 = (v: number[]) => Math.round((v[Math.min(v.length - 1, Math.floor(0.99 * v.length))] ?? 0) * 10) / 10;
    return { s, p99Ms: p99(l), withAds: Math.round((x.ads / Math.max(1, l.length)) * 100) / 100, sendLateP99Ms: p99(late) };
  });
  const ramp = { seconds: rampMs / 1000, sent: rampSent, p50Ms: quantile(rampLatencies, 0.5), p99Ms: quantile(rampLatencies, 0.99), maxMs: quantile(rampLatencies, 1) };
  segmentLatencies.sort((a, b) => a - b);
  const segments = withSegments ? { sent: segmentsSent, errors: segmentErrors, p50Ms: quantile(segmentLatencies, 0.5), p99Ms: quantile(segmentLatencies, 0.99) } : undefined;
  assetListLatencies.sort((a, b) => a - b);
  const assetLists = assetListsSent ? { sent: assetListsSent, errors: assetListErrors, filled: assetListsFilled, p50Ms: quantile(assetListLatencies, 0.5), p99Ms: quantile(assetListLatencies, 0.99) } : undefined;
  const result: LoadResult = { ...(segments ? { segments } : {}), ...(assetLists ? { assetLists } : {}), loadGenerator: 'node', viewers, seconds, sent, answered, errors, statuses, p50Ms: q(0.5), p90Ms: q(0.9), p99Ms: q(0.99), p999Ms: q(0.999), maxMs: q(1), withAds, setupMs, ramp, cpuMs: Math.round((cpu.user + cpu.system) / 1000), stalls, bySecond, measureFromWallMs: Math.round(performance.timeOrigin + measureFrom) };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  await pool.close();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------------------------
// main: the engine, the runs, the report
// ---------------------------------------------------------------------------------------------------------------
/**
 * The floor of a run with segments: the same traffic with no SSAI work, from a bare node:http server in this process.
 * Its media playlist is the origin's, whose last three segments are, when they start in the first 10 s of a 20 s
 * cycle, segment URIs of the engine's form (so the load generator fetches each once, as it fetches ad segments); each answers a 302 and sends
 * `beaconsPerSegment` beacons (the engine's own ratio in the run before, carried over in fractions) to the fixture
 * ad server's tracker through the engine's beacon thread, as the engine does. What this floor costs on a machine is
 * what no SSAI logic can go under there.
 */
function floorServer(originText: string, trackerBase: string, beaconsPerSegment: number): { server: http.Server; close(): Promise<void> } {
  const lines = originText.trimEnd().split('\n');
  const uriLines = lines.flatMap((l, i) => (l && !l.startsWith('#') ? [i] : [])).slice(-3);
  const beacons = new ThreadedBeaconDelivery({ timeoutMs: 2000, nice: 15 });
  let owed = 0, n = 0;
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith('/v1/segment/')) {
      const urls: string[] = [];
      for (owed += beaconsPerSegment; owed >= 1; owed--) urls.push(`${trackerBase}/track/start/floor?sid=${n++}`);
      beacons.send(urls);
      res.writeHead(302, { location: `${trackerBase}/creative/floor.ts` });
      res.end();
      return;
    }
    // Segment j (2 s from j × 2 s, wall clock) is an "ad" segment when it starts in the first 10 s of a 20 s cycle:
    // five a cycle, each listed three times and fetched once, as a break's five ad segments are.
    const at = Math.floor(Date.now() / 2000);
    const out = lines.slice();
    uriLines.forEach((line, k) => {
      const j = at - uriLines.length + 1 + k;
      if (j % 10 < 5) out[line] = `/v1/segment/floor/${j}.ts`;
    });
    const text = `${out.join('\n')}\n`;
    res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' });
    res.end(text);
  });
  return { server, close: () => beacons.close() };
}

async function main(): Promise<void> {
  const levels = (process.argv[2] ?? '3000,6000,10000').split(',').map(Number);
  const seconds = Number(process.argv[3] ?? 40);
  const cueForms = (process.argv[4] ?? 'daterange-ahead,cue-out').split(',');
  const rampSeconds = Number(process.argv[5] ?? 20);
  // The load generator: the C one unless SSAI_CAPACITY_LOADGEN=node (or no C compiler); its load children find it here.
  const nativeLoad = process.env.SSAI_CAPACITY_LOADGEN === 'node' ? undefined : await buildNativeLoad();
  if (nativeLoad) process.env.SSAI_CAPACITY_NATIVE_LOADGEN = nativeLoad;
  else delete process.env.SSAI_CAPACITY_NATIVE_LOADGEN;
  const { startEngineWith } = await import('../test/ssai/setup.js');
  // the engine's thread priorities and fast GET path as set in this process's environment (SSAI_DECISION_NICE, SSAI_BEACON_NICE, SSAI_FAST_GET), else its defaults
  const threadNiceness = Object.fromEntries((['SSAI_DECISION_NICE', 'SSAI_BEACON_NICE', 'SSAI_FAST_GET'] as const).flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : [])));
  const { CLIP_SEGMENTS, SEGMENT_SECONDS } = await import('../fixtures/origin-server.js');
  const runs: Array<Record<string, unknown>> = [];
  const loadavg = () => os.loadavg().map((x) => Math.round(x * 100) / 100);
  const loadBefore = loadavg();
  let vastText = '';
  for (const cueForm of cueForms) {
    const w = await child<{ origin: string; vast: string; streamMsAt: { wall: number; stream: number } }>(['--role=world', cueForm]);
    const CYCLE_MS = CLIP_SEGMENTS * SEGMENT_SECONDS * 1000;
    /** where a wall-clock moment falls in the origin's break cycle, in whole seconds (0: the cycle's first segment starts) */
    const phaseOf = (wallMs: number) => Math.floor((((wallMs - w.first.streamMsAt.wall + w.first.streamMsAt.stream) % CYCLE_MS) + CYCLE_MS) % CYCLE_MS / 1000);
    const runLoad = async (base: string, viewers: number, masterPath: string, mediaPath = ''): Promise<LoadResult> => {
      const c = await child<LoadResult>(['--role=load', base, String(viewers), String(seconds), String(rampSeconds), masterPath || '-', mediaPath || '-']);
      return c.first;
    };
    const metric = (text: string, name: string): number => text.split('\n').filter((l) => l.startsWith(name) && !l.startsWith('#'))
      .reduce((t, l) => t + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    // Collected twice with a pause between: garbage held through a FinalizationRegistry (an AbortSignal.timeout's timer,
    // one per outgoing request) is freed only once its cleanup task has run after a collection.
    // The beacon thread's heap counts too (the beacons waiting to be sent are there): its own, asked of it.
    const heap = async (threadHeapUsed: () => Promise<number>): Promise<number> => {
      for (let i = 0; i < 3; i++) { global.gc?.(); await new Promise((r) => setTimeout(r, 50)); }
      return process.memoryUsage().heapUsed + await threadHeapUsed();
    };
    // CPU time from /proc, ms (utime + stime, clock ticks of 10 ms): of the world (origin + ad server) child, and of
    // this process's main thread alone (its task id is the pid), the one that answers the playlists.
    const procCpuMs = async (statPath: string): Promise<number> => {
      const fields = (await readFile(statPath, 'utf8')).split(') ')[1]?.split(' ') ?? [];
      return (Number(fields[11]) + Number(fields[12])) * 10;
    };
    const worldCpuMs = () => procCpuMs(`/proc/${w.proc.pid}/stat`);
    const mainThreadCpuMs = () => procCpuMs(`/proc/${process.pid}/task/${process.pid}/stat`);

    const modes = (process.env.SSAI_CAPACITY_MODES ?? 'stitched').split(',');
    for (const viewers of levels) for (const mode of modes) {
      // A decision that misses 40 ms plays slate or content: the playlist is never held longer.
      const engine = await startEngineWith({ originCacheMs: undefined, creativeWaitMs: 60_000, decisionDeadlineMs: 40, cutBeforeUndecidedBreaks: process.env.SSAI_CAPACITY_CUT !== '0', env: { LOG_LEVEL: 'silent', SSAI_DECISION_THREADS: process.env.SSAI_DECISION_THREADS ?? '1', ...threadNiceness } });
      const auth = { Authorization: (await engine.login()).IdToken };
      const created = await engine.api('POST', '/broker/adinserts', { headers: auth, body: { name: 'capacity', type: 'live', ad_server: `${w.first.vast}/vast-viewer?sid=[session.id]`, source_url: `${w.first.origin}/` } });
      const guid = created.body.guid as string;
      // Prepares the two creatives for this ladder once (cached on disk across runs): a warm-up session through a break.
      for (let tries = 0; tries < 40; tries++) {
        const master = await (await fetch(`${engine.url}/v1/master/${guid}/live/master.m3u8`)).text();
        const uri = master.split('\n').find((l, k, all) => l && !l.startsWith('#') && all[k - 1]?.startsWith('#EXT-X-STREAM-INF'))!;
        if ((await (await fetch(`${engine.url}${uri}`)).text()).includes('/v1/segment/')) break;
        await new Promise((r) => setTimeout(r, 1000));
      }
      const metricsBefore = await (await fetch(`${engine.url}/metrics`)).text();
      const threadHeapUsed = () => engine.ctx.services.ssai!.beacons.threadHeapUsed();
      const heapBefore = await heap(threadHeapUsed);
      // SSAI_CAPACITY_SNAPSHOTS=dir: heap snapshots around the run, to see what a viewer holds (diff them by constructor).
      const snapshots = process.env.SSAI_CAPACITY_SNAPSHOTS;
      if (snapshots) v8.writeHeapSnapshot(`${snapshots}/before-${viewers}.heapsnapshot`);
      const cpu0 = process.cpuUsage();
      const world0 = await worldCpuMs();
      const main0 = await mainThreadCpuMs();
      // the measured part starts after the sessions and the ramp: stall times are made relative to it afterwards
      const loadStart = performance.now();
      const engineStalls = watchStalls(() => loadStart);
      // SSAI_CAPACITY_TIMELINE=1: every 500 ms the engine's main-thread CPU, its decisions and retirements, to lay the
      // latency tail over the break cycle (printed by phase at the end of the level).
      const samples: Array<{ at: number; elu: EventLoopUtilization; mainMs: number; allMs: number; worldMs: number; sent: number; slow: number; retired: number; inFlight: number; decidedS: number; decided: number }> = [];
      const sampler = process.env.SSAI_CAPACITY_TIMELINE ? setInterval(() => {
        void (async () => {
          const text = await (await fetch(`${engine.url}/metrics`)).text();
          const c = process.cpuUsage();
          samples.push({ at: Date.now(), elu: perfHooks.eventLoopUtilization(),  mainMs: await mainThreadCpuMs(), allMs: (c.user + c.system) / 1000, worldMs: await worldCpuMs(), sent: metric(text, 'ssai_ad_server_requests_total'), slow: metric(text, 'ssai_request_duration_seconds_count{kind="media"}') - metric(text, 'ssai_request_duration_seconds_bucket{le="0.05",kind="media"}'), retired: metric(text, 'ssai_breaks_retired_total'), inFlight: metric(text, 'ssai_decisions_in_flight'), decidedS: metric(text, 'ssai_decision_duration_seconds_sum'), decided: metric(text, 'ssai_decision_duration_seconds_count') });
        })();
      }, 500) : undefined;
      // SSAI_CAPACITY_PROFILE=dir: a CPU profile of this process's main thread (the one answering playlists) over the
      // sessions, the ramp and the run, for the DevTools' Performance panel.
      const profiler = process.env.SSAI_CAPACITY_PROFILE ? new Session() : undefined;
      if (profiler) {
        profiler.connect();
        await profiler.post('Profiler.enable');
        await profiler.post('Profiler.start');
      }
      // SSAI_CAPACITY_ALLOCATIONS=dir: where this process's main thread allocates over the sessions, the ramp and the run
      // (a sampling heap profile that keeps what the GC collected too: what feeds the collector, not what stays)
      const allocations = process.env.SSAI_CAPACITY_ALLOCATIONS ? new Session() : undefined;
      if (allocations) {
        allocations.connect();
        await allocations.post('HeapProfiler.enable');
        await allocations.post('HeapProfiler.startSampling', { samplingInterval: 32_768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      }
      // Each engine thread's CPU and run-queue wait (ssai_thread_* from the engine's registry, read from /proc) once a
      // second, to give the measured part alone: the main thread waiting for a core is starved, not slow.
      const threadSamples: ThreadSample[] = [];
      const threadSampler = setInterval(() => { void threadSample(engine.ctx.metrics.registry).then((t) => threadSamples.push(t)); }, 1000);
      const proxy = await runLoad(engine.url, viewers, `/v1/master/${guid}/live/master.m3u8${mode === 'guided' ? '?ads.mode=guided' : ''}`);
      clearInterval(threadSampler);
      if (profiler) {
        const { profile } = await profiler.post('Profiler.stop');
        await writeFile(`${process.env.SSAI_CAPACITY_PROFILE}/${cueForm}-${mode}-${viewers}.cpuprofile`, JSON.stringify(profile));
        profiler.disconnect();
      }
      if (allocations) {
        const { profile } = await allocations.post('HeapProfiler.stopSampling');
        await writeFile(`${process.env.SSAI_CAPACITY_ALLOCATIONS}/${cueForm}-${mode}-${viewers}.heapprofile`, JSON.stringify(profile));
        allocations.disconnect();
      }
      const stallsOfEngine = engineStalls.stop();
      if (sampler) {
        clearInterval(sampler);
        printTimeline(proxy, samples, threadSamples, phaseOf);
      }
      const cpu1 = process.cpuUsage(cpu0);
      const worldMs = (await worldCpuMs()) - world0;
      const mainMs = (await mainThreadCpuMs()) - main0;
      const heapAfter = await heap(threadHeapUsed);
      if (snapshots) v8.writeHeapSnapshot(`${snapshots}/after-${viewers}.heapsnapshot`);
      const metricsAfter = await (await fetch(`${engine.url}/metrics`)).text();
      const delta = (name: string) => metric(metricsAfter, name) - metric(metricsBefore, name);
      const availSeconds = delta('ssai_avail_seconds_total');
      const filledSeconds = delta('ssai_avail_filled_seconds_total');
      await engine.close();
      // The static baseline at the same rate: the origin's media playlist from a bare node:http server in this process;
      // with segments, the floor of the same traffic without SSAI (floorServer).
      const originText = await (await fetch(`${w.first.origin}/live/v0.m3u8`)).text();
      const segmentRedirects = delta('ssai_playlists_served_total{kind="segment"');
      const beaconsSent = delta('ssai_beacons_total{result="sent"}');
      const bare = process.env.SSAI_CAPACITY_SEGMENTS !== '0'
        ? floorServer(originText, w.first.vast, segmentRedirects ? beaconsSent / segmentRedirects : 0)
        : { server: http.createServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' }); res.end(originText); }), close: async () => undefined };
      await new Promise<void>((r) => bare.server.listen(0, '127.0.0.1', () => r()));
      const cpu2 = process.cpuUsage();
      const worldBaseline0 = await worldCpuMs();
      const baseline = await runLoad(`http://127.0.0.1:${(bare.server.address() as AddressInfo).port}`, viewers, '', '/live/v0.m3u8');
      const cpu3 = process.cpuUsage(cpu2);
      const worldBaselineMs = (await worldCpuMs()) - worldBaseline0;
      bare.server.close();
      await bare.close();
      // CPU of this process per answered request: a figure other work on the machine shifts far less than latency.
      const cpuUs = (c: NodeJS.CpuUsage, n: number) => Math.round((c.user + c.system) / Math.max(1, n));
      const run = {
        cueForm, mode, viewers, ratePerSecond: Math.round(viewers / (PERIOD_MS / 1000)), proxy, baseline,
        // the engine's own event-loop stalls over 50 ms, ms from the load generator's start (sessions, ramp, run)
        engineStalls: stallsOfEngine,
        fill: availSeconds > 0 ? Math.round((filledSeconds / availSeconds) * 1000) / 1000 : null, availSeconds, filledSeconds,
        decisionsLate: delta('ssai_decisions_late_total'), decisionsEarly: delta('ssai_decisions_early_total'),
        beacons: { sent: delta('ssai_beacons_total{result="sent"}'), failed: delta('ssai_beacons_total{result="failed"}'), duplicate: delta('ssai_beacons_total{result="duplicate"}') },
        bytesPerViewer: Math.round((heapAfter - heapBefore) / viewers),
        cpuUsPerRequest: { proxy: cpuUs(cpu1, proxy.answered + proxy.ramp.sent + viewers), baseline: cpuUs(cpu3, baseline.answered + baseline.ramp.sent) },
        // where the machine's two cores went over the ramp and the run (ms): the engine, the load generator, origin + ad server
        cpuMs: { engine: Math.round((cpu1.user + cpu1.system) / 1000), engineMainThread: mainMs, load: proxy.cpuMs, world: worldMs, wallMs: (proxy.ramp.seconds + seconds) * 1000 },
        threads: threadShares(threadSamples, proxy.measureFromWallMs, proxy.measureFromWallMs + seconds * 1000),
        // the same for the baseline: how much of the machine the traffic takes with no SSAI at all (the floor)
        baselineCpuMs: { server: Math.round((cpu3.user + cpu3.system) / 1000), load: baseline.cpuMs, world: worldBaselineMs, wallMs: (baseline.ramp.seconds + seconds) * 1000 },
      };
      runs.push(run);
      process.stdout.write(`${JSON.stringify(run)}\n`);
    }
    // The VAST answer of one viewer, read below by the cheap inline path and by the full client (DOM + vast-client).
    vastText = await (await fetch(`${w.first.vast}/vast-viewer?sid=0b7d5c1e-8f3a-4d2b-9c6e-1a2b3c4d5e6f`)).text();
    w.proc.stdin!.end();
  }
  const { VastDecisionClient } = await import('../ssai/decide/vast-decision.js');
  const { inlineLinearAds } = await import('../ssai/parse/vast-inline.js');
  const full = new VastDecisionClient({ inlineFastPath: false });
  const timeIt = async (f: () => unknown, n: number): Promise<number> => {
    for (let i = 0; i < n / 10; i++) await f();
    const t = performance.now();
    for (let i = 0; i < n; i++) await f();
    return Math.round(((performance.now() - t) * 1000) / n);
  };
  const vastParseUs = { inline: await timeIt(() => inlineLinearAds(vastText), 5000), fullClient: await timeIt(() => full.fromText(vastText, 'http://127.0.0.1/vast'), 500) };
  const result = {
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, memoryGb: Math.round(os.totalmem() / 2 ** 30), loadAverageBefore: loadBefore, loadAverageAfter: loadavg() },
    method: `open loop: the sessions are made (one master playlist each, 64 at a time), the viewers join over a ${rampSeconds} s ramp (each at its own moment; reported apart), then ${seconds} s are measured: every viewer its own session and own ads (ad server /vast-viewer), one media playlist request per ${PERIOD_MS / 1000} s at its own phase, latency from the scheduled send${process.env.SSAI_CAPACITY_SEGMENTS !== '0' ? ', and each new ad segment among its playlist\'s last three fetched once (a redirect that fires the beacons)' : ''}; ad decisions on ${process.env.SSAI_DECISION_THREADS ?? '1'} decision thread(s)${process.env.SSAI_CAPACITY_CUT === '0' ? ', playlists waiting for a break still being decided (cutBeforeUndecidedBreaks off)' : ''}; origin (${cueForms.join(' cues, then ')} cues, 2 s segments, a 10 s break every 20 s) and ad server in one child process, load generator in another (${nativeLoad ? 'the C one, bench/lib/open-loop-load.c: one epoll loop, keep-alive connections of a pool; the sessions made through undici' : 'an undici pool'}${nativeLoad && (process.env.SSAI_CAPACITY_MODES ?? '').includes('guided') ? '; the Node one for guided viewers' : ''}), engine in this one; baseline: a bare node:http server answering the origin's media playlist at the same rate from this process${process.env.SSAI_CAPACITY_SEGMENTS !== '0' ? ', its last three segments, 10 s of every 20, segment URIs that the viewers fetch once each and that it answers with a 302 and the engine\'s beacons per segment of the run before, sent through the beacon thread (the floor of the same traffic without SSAI)' : ''}`,
    goal: { viewers: 10_000, p99Ms: 50, fill: 1, bytesPerViewer: 2048 },
    vastParseUs,
    runs,
  };
  await mkdir('bench/results', { recursive: true });
  await writeFile('bench/results/ssai-capacity.json', JSON.stringify(result, null, 2) + '\n');
  const row = (r: Record<string, unknown>) => {
    const p = r.proxy as LoadResult, b = r.baseline as LoadResult;
    const cpu = r.cpuMs as { engine: number; engineMainThread: number; load: number; world: number; wallMs: number };
    const share = (ms: number) => Math.round((ms / cpu.wallMs) * 100) / 100;
    const worst = Math.max(...p.bySecond.map((x) => x.p99Ms));
    const lists = p.assetLists ? ` (asset lists p99 ${p.assetLists.p99Ms} ms, ${p.assetLists.filled} of ${p.assetLists.sent} with ads)` : '';
    return `| ${r.cueForm} | ${r.mode} | ${r.viewers} | ${r.ratePerSecond} | ${p.p50Ms} | ${p.p99Ms} | ${p.p999Ms} | ${p.maxMs} | ${worst} | ${p.ramp.p99Ms} | ${p.errors} | ${r.fill}${lists} | ${r.decisionsEarly} / ${r.decisionsLate} | ${r.bytesPerViewer} | ${(r.cpuUsPerRequest as { proxy: number }).proxy} | ${share(cpu.engine)} (${share(cpu.engineMainThread)}) / ${share(cpu.load)} / ${share(cpu.world)} | ${threadCell(r.threads as ThreadShares | undefined)} | ${b.p50Ms} | ${b.p99Ms} | ${b.errors} | ${(r.cpuUsPerRequest as { baseline: number }).baseline} | ${floorCell(r.baselineCpuMs as CpuSplit | undefined)} |\n`;
  };
  await writeFile('bench/results/ssai-capacity.md', `# bench/ssai-capacity\n\n${result.date} · ${result.machine.cpus}× ${result.machine.model} · ${result.machine.memoryGb} GB · Node ${result.machine.node} · load average ${loadBefore.join('/')} before, ${result.machine.loadAverageAfter.join('/')} after (other work shared the machine)\n\n`
    + `Command: \`${process.env.SSAI_CAPACITY_MODES ? `SSAI_CAPACITY_MODES=${process.env.SSAI_CAPACITY_MODES} ` : ''}NODE_OPTIONS=--expose-gc npx tsx bench/ssai-capacity.ts ${levels.join(',')} ${seconds} ${cueForms.join(',')} ${rampSeconds}\`\n\nMethod: ${result.method}.\n\nGoal: 10,000 viewers, p99 < 50 ms through break starts, every break filled, ≤ 2 KB per viewer.\n\n`
    + '| cues | mode | viewers | req/s | p50 ms | p99 ms | p99.9 ms | max ms | worst p99 of one second | ramp p99 ms | errors | fill | decisions early / late | heap B/viewer | CPU µs/req | cores: engine (its main thread) / load / origin + ad server | engine threads, measured part: cores (share of the time waiting for a core) | baseline p50 ms | baseline p99 ms | baseline errors | baseline CPU µs/req | baseline cores: server / load / origin + ad server = machine |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
    + runs.map(row).join('')
    + `\nOne viewer's VAST answer (2 inline ads) read by the inline path: ${vastParseUs.inline} µs; by the full client (DOM + vast-client): ${vastParseUs.fullClient} µs.\n`
    + `\nCPU µs/req: CPU time of the engine process (all its threads) over the ramp and the run divided by the requests answered (sessions included): other work on the machine shifts it far less than latency. Cores: CPU time of each process over the ramp and the run divided by its wall time (the engine's main thread, the one answering playlists, in brackets), from /proc. Engine threads: over the measured part only, from the engine's ssai_thread_cpu_seconds_total and ssai_thread_run_queue_wait_seconds_total (/proc schedstat): main (playlists), decisions, beacons, other (V8's and libuv's helpers), each thread's cores and, in brackets, the share of the wall time it was ready to run but waited for a core. Baseline cores: the same split while the baseline ran, and their sum: the share of the machine the traffic takes with no SSAI (of ${os.cpus().length} cores).\n`);
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  process.exit(0);
}

/**
 * The run by second of the break cycle (SSAI_CAPACITY_TIMELINE=1): each phase's p99s, the engine's event loop and
 * cores, and each engine thread's cores and, in brackets, the share of the time it waited for a core (a thread that
 * waits while the loop is busy is starved by the others, not slow).
 */
function printTimeline(proxy: LoadResult, samples: Array<{ at: number; elu: EventLoopUtilization; mainMs: number; allMs: number; worldMs: number; sent: number; slow: number; retired: number; inFlight: number; decidedS: number; decided: number }>,
  threadSamples: ThreadSample[], phaseOf: (wallMs: number) => number): void {
  type Row = { p99: number[]; late: number[]; active: number; cpu: number; other: number; world: number; sent: number; slow: number; retired: number; span: number; threads: Map<string, { cpu: number; wait: number }>; threadSpan: number; inFlight: number; inFlightSamples: number; decidedS: number; decided: number };
  const rows = new Map<number, Row>();
  const row = (k: number): Row => {
    let r = rows.get(k);
    if (!r) rows.set(k, r = { p99: [], late: [], active: 0, cpu: 0, other: 0, world: 0, sent: 0, slow: 0, retired: 0, span: 0, threads: new Map(), threadSpan: 0, inFlight: 0, inFlightSamples: 0, decidedS: 0, decided: 0 });
    return r;
  };
  for (const x of proxy.bySecond) {
    const r = row(phaseOf(proxy.measureFromWallMs + x.s * 1000 + 500));
    r.p99.push(x.p99Ms);
    r.late.push(x.sendLateP99Ms);
  }
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1]!, b = samples[i]!;
    const r = row(phaseOf((a.at + b.at) / 2));
    r.active += b.elu.active - a.elu.active; r.cpu += b.mainMs - a.mainMs; r.other += (b.allMs - a.allMs) - (b.mainMs - a.mainMs); r.world += b.worldMs - a.worldMs; r.sent += b.sent - a.sent; r.slow += b.slow - a.slow; r.retired += b.retired - a.retired; r.span += b.at - a.at;
    r.inFlight += b.inFlight; r.inFlightSamples++; r.decidedS += b.decidedS - a.decidedS; r.decided += b.decided - a.decided;
  }
  for (let i = 1; i < threadSamples.length; i++) {
    const a = threadSamples[i - 1]!, b = threadSamples[i]!;
    const r = row(phaseOf((a.at + b.at) / 2));
    r.threadSpan += (b.at - a.at) / 1000;
    for (const [thread, cpu] of b.cpu) {
      const t = r.threads.get(thread) ?? { cpu: 0, wait: 0 };
      t.cpu += cpu - (a.cpu.get(thread) ?? 0);
      t.wait += (b.wait.get(thread) ?? 0) - (a.wait.get(thread) ?? 0);
      r.threads.set(thread, t);
    }
  }
  process.stderr.write('phase s | p99 ms by second of the run | of which the load generator sent late (p99) | event loop busy | cores: engine main thread, its other threads, origin + ad server | engine threads: cores (waiting for a core) | decisions sent/s | decisions in flight (mean of samples) | ms a decision took (mean) | retired/s | media replies over 50 ms in the engine\n');
  for (const [k, r] of [...rows].sort((a, b) => a[0] - b[0])) {
    const per = (n: number) => (r.span ? Math.round((n / r.span) * 1000) : 0);
    const threads: ThreadShares = {};
    for (const [thread, t] of r.threads) threads[thread] = shareOf(t.cpu, t.wait, r.threadSpan);
    process.stderr.write(`${k} | ${r.p99.join(' ')} | ${r.late.join(' ')} | ${r.span ? (r.active / r.span).toFixed(2) : '-'} | ${r.span ? [r.cpu, r.other, r.world].map((x) => (x / r.span).toFixed(2)).join(' ') : '-'} | ${r.threadSpan ? threadCell(threads) : '-'} | ${per(r.sent)} | ${r.inFlightSamples ? Math.round(r.inFlight / r.inFlightSamples) : '-'} | ${r.decided ? Math.round((r.decidedS / r.decided) * 1000) : '-'} | ${per(r.retired)} | ${r.slow}\n`);
  }
}

if (role === 'world') await world(process.argv[3] ?? 'daterange-ahead');
else if (role === 'load') {
  const [, , , base, viewers, seconds, rampSeconds, master, mediaPath] = process.argv;
  await load(base!, Number(viewers), Number(seconds), Number(rampSeconds), master === '-' ? '' : master!, mediaPath === '-' ? '' : mediaPath!);
} else await main();

type CpuSplit = { server: number; load: number; world: number; wallMs: number };
/** `server / load / world = sum` in cores over the wall time. */
function floorCell(c: CpuSplit | undefined): string {
  if (!c) return '-';
  const cores = (ms: number) => (ms / c.wallMs).toFixed(2);
  return `${cores(c.server)} / ${cores(c.load)} / ${cores(c.world)} = ${cores(c.server + c.load + c.world)}`;
}

type ThreadSample = { at: number; cpu: Map<string, number>; wait: Map<string, number> };
/** thread → cores and the share of the wall time it waited for a core, over the measured part */
type ThreadShares = Record<string, { cores: number; waiting: number }>;

/** One reading of the engine's per-thread counters (ssai/serve/thread-metrics.ts) from its registry, in process. */
async function threadSample(registry: import('prom-client').Registry): Promise<ThreadSample> {
  const read = async (name: string): Promise<Map<string, number>> => {
    const got = await registry.getSingleMetric(name)?.get();
    return new Map((got?.values ?? []).map((v) => [String(v.labels.thread), v.value]));
  };
  return { at: Date.now(), cpu: await read('ssai_thread_cpu_seconds_total'), wait: await read('ssai_thread_run_queue_wait_seconds_total') };
}

/** The per-thread shares between the first sample at or after `from` and the last at or before `to` (none: undefined). */
function threadShares(samples: ThreadSample[], from: number, to: number): ThreadShares | undefined {
  const inside = samples.filter((x) => x.at >= from && x.at <= to);
  const a = inside[0], b = inside[inside.length - 1];
  if (!a || !b || b.at <= a.at) return undefined;
  const wallS = (b.at - a.at) / 1000;
  const out: ThreadShares = {};
  for (const [thread, cpu] of b.cpu) out[thread] = shareOf(cpu - (a.cpu.get(thread) ?? 0), (b.wait.get(thread) ?? 0) - (a.wait.get(thread) ?? 0), wallS);
  return out;
}

/**
 * A thread's CPU and run-queue wait (seconds) over `wallS` as cores and a share of the time, to two decimals (a
 * declaration: main() runs at the module's top-level await, before the module's later constants exist).
 */
function shareOf(cpuS: number, waitS: number, wallS: number): { cores: number; waiting: number } {
  return { cores: Math.round((cpuS / wallS) * 100) / 100, waiting: Math.round((waitS / wallS) * 100) / 100 };
}

function threadCell(t: ThreadShares | undefined): string {
  if (!t) return '-';
  const order = (k: string) => (k === 'main' ? 0 : k.startsWith('decisions') ? 1 : k === 'beacons' ? 2 : 3);
  return Object.entries(t).sort((x, y) => order(x[0]) - order(y[0]) || x[0].localeCompare(y[0]))
    .map(([k, v]) => `${k} ${v.cores} (${Math.round(v.waiting * 100)}%)`).join(', ');
}
