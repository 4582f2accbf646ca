// bench/ssai-burst (issue 28): what a crowd does to the SSAI proxy and to the ad server, in one run.
// 1. Burst fill: viewers (each its own session and own ads, the creatives prepared) load their first media playlist
//    with a break in the window, 1,000 joining within a second and 5,000 within a second; how many got their ad within the decision
//    deadline (the default 1.5 s), reply latency, and the ad server's peak second.
// 2. The ad server's peak second through a break with and without the configuration's ad_server_max_rps: viewers
//    reloading every 2 s at their own phase, the break announced ahead (EXT-X-DATERANGE 16 s or ~6 s before it) or appearing
//    at the live edge with no notice (EXT-X-CUE-OUT); peak requests in a second, fill, decisions late.
// The origin and the ad server run in a child process (which counts the ad server's requests by second), the load
// generator in another, the engine in this one.
// Usage: NODE_OPTIONS=--expose-gc npx tsx bench/ssai-burst.ts [joinPerSecond=1000,5000] [reloadViewers=2000] [cap=200]
// (a burst is one second's crowd: 1,000 viewers joining at 1,000 a second, 5,000 at 5,000)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const role = process.argv[2]?.startsWith('--role=') ? process.argv[2].slice(7) : 'main';
const SELF = fileURLToPath(import.meta.url);
const PERIOD_MS = 2000;

/** Runs this file in a child node process with a role; resolves with the child and its first stdout line (JSON). */
async function child<T>(args: string[]): Promise<{ proc: ChildProcess; first: T; nextLine: () => Promise<string> }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', SELF, ...args], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, NODE_OPTIONS: '--max-old-space-size=2048' } });
  const it = createInterface({ input: proc.stdout! })[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done) throw new Error(`child ${args[0]} ended before answering`);
  const nextLine = async () => { const n = await it.next(); if (n.done) throw new Error('child ended'); return n.value; };
  return { proc, first: JSON.parse(first.value) as T, nextLine };
}

// ---------------------------------------------------------------------------------------------------------------
// world: an origin per cue form and the ad server, whose requests are counted by wall-clock second
// ---------------------------------------------------------------------------------------------------------------
async function world(): Promise<void> {
  const { OriginServer, CLIP_SEGMENTS, SEGMENT_SECONDS, BREAK_START } = await import('../fixtures/origin-server.js');
  const { VastServer } = await import('../fixtures/vast-server.js');
  const { announceBreaksAhead } = await import('../fixtures/announce-ahead.js');
  // The burst origin holds a break in every window (frozen); the others move in real time.
  const frozen = await OriginServer.start({ cueForm: 'cue-out', startSeconds: (CLIP_SEGMENTS + BREAK_START + 3) * SEGMENT_SECONDS });
  const ahead = await OriginServer.start({ cueForm: 'daterange-ahead', realTime: true, startSeconds: (CLIP_SEGMENTS - 1) * SEGMENT_SECONDS });
  const edge = await OriginServer.start({ cueForm: 'cue-out', realTime: true, startSeconds: (CLIP_SEGMENTS - 1) * SEGMENT_SECONDS });
  // As the live packager writes them: each break announced 16 s ahead (the fixture's own announcement comes ~6 s
  // ahead), the same EXT-X-DATERANGE (ID, START-DATE, SCTE-35) on the live edge's segment from then on.
  const ahead16 = await OriginServer.start({ cueForm: 'daterange-ahead', realTime: true, startSeconds: (CLIP_SEGMENTS - 1) * SEGMENT_SECONDS });
  announceBreaksAhead(ahead16, 16);

  const vast = await VastServer.start();
  // The ad server's requests by second and by `run` query parameter; its own log is emptied as it goes.
  const bySecond = new Map<string, Map<number, number>>();
  setInterval(() => {
    for (const r of vast.requests.splice(0)) {
      const run = r.query.get('run') ?? '';
      let m = bySecond.get(run);
      if (!m) bySecond.set(run, m = new Map());
      const s = Math.floor(r.at / 1000);
      m.set(s, (m.get(s) ?? 0) + 1);
    }
  }, 200).unref();
  const stats = http.createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    const run = q.get('run') ?? '';
    const from = Math.floor(Number(q.get('from') ?? 0) / 1000);
    setTimeout(() => { // the last 200 ms counted first
      const counts = [...(bySecond.get(run) ?? new Map<number, number>()).entries()].filter(([sec]) => sec >= from).map(([, n]) => n);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ requests: counts.reduce((a, b) => a + b, 0), peakPerSecond: Math.max(0, ...counts) }));
    }, 250);
  });
  await new Promise<void>((r) => stats.listen(0, '127.0.0.1', () => r()));
  process.stdout.write(`${JSON.stringify({ frozen: frozen.url, ahead: ahead.url, ahead16: ahead16.url, edge: edge.url, vast: vast.url, stats: `http://127.0.0.1:${(stats.address() as AddressInfo).port}` })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------------------------
// load: sessions first, then a burst of first playlists, or reloads every 2 s
// ---------------------------------------------------------------------------------------------------------------
type BurstResult = { viewers: number; filled: number; errors: number; p50Ms: number; p99Ms: number; maxMs: number; joinSeconds: number };
type ReloadResult = { viewers: number; filledViewers: number; errors: number; p99Ms: number };

async function load(mode: string, base: string, masterPath: string, viewers: number, arg: number): Promise<void> {
  const { Pool } = await import('undici');
  const pool = new Pool(base, { connections: Math.min(2048, Math.max(64, viewers)), keepAliveTimeout: 30_000 });
  const get = async (p: string): Promise<{ status: number; text: string }> => {
    const r = await pool.request({ path: p, method: 'GET' });
    return { status: r.statusCode, text: await r.body.text() };
  };
  const media: string[] = new Array<string>(viewers);
  let next = 0;
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (next < viewers) {
      const i = next++;
      const m = await get(masterPath);
      const uri = m.text.split('\n').find((l, k, all) => l && !l.startsWith('#') && all[k - 1]?.startsWith('#EXT-X-STREAM-INF'));
      if (m.status !== 200 || !uri) throw new Error(`master answered ${m.status}`);
      media[i] = uri;
    }
  }));
  const quantile = (sorted: number[], p: number) => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0) * 10) / 10;
  if (mode === 'burst') {
    // `arg` viewers a second: viewer i sends at t0 + i / rate (open loop, latency from the scheduled send)
    const rate = arg;
    const latencies: number[] = [];
    let filled = 0, errors = 0;
    const t0 = performance.now() + 100;
    await Promise.all(media.map(async (uri, i) => {
      const at = t0 + (i * 1000) / rate;
      const wait = at - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      try {
        const r = await get(uri);
        if (r.status !== 200) errors++;
        else if (r.text.includes('/v1/segment/')) filled++;
      } catch { errors++; }
      latencies.push(performance.now() - at);
    }));
    latencies.sort((a, b) => a - b);
    const result: BurstResult = { viewers, filled, errors, p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99), maxMs: quantile(latencies, 1), joinSeconds: viewers / rate };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    // reloads every 2 s at each viewer's own phase: a break cycle to settle (the breaks already in the window decided),
    // then `arg` seconds measured; a viewer is filled once a measured reply holds its ads
    const startAt = performance.now() + 500;
    const measureFrom = startAt + 20_000;
    const until = measureFrom + arg * 1000;
    process.stdout.write(`${JSON.stringify({ measureFromWall: Math.round(performance.timeOrigin + measureFrom) })}\n`);
    const filled = new Array<boolean>(viewers).fill(false);
    const latencies: number[] = [];
    let errors = 0;
    await Promise.all(media.map(async (uri, i) => {
      let at = startAt + Math.random() * PERIOD_MS;
      for (; at < until; at += PERIOD_MS) {
        const wait = at - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const measured = at >= measureFrom;
        try {
          const r = await get(uri);
          if (r.status !== 200) { if (measured) errors++; }
          else if (measured && r.text.includes('/v1/segment/')) filled[i] = true;
        } catch { if (measured) errors++; }
        if (measured) latencies.push(performance.now() - at);
      }
    }));
    latencies.sort((a, b) => a - b);
    const result: ReloadResult = { viewers, filledViewers: filled.filter(Boolean).length, errors, p99Ms: quantile(latencies, 0.99) };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  }
  await pool.close();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------------------------
async function main(): Promise<void> {
  const burstLevels = (process.argv[2] ?? '1000,5000').split(',').map(Number);
  const reloadViewers = Number(process.argv[3] ?? 2000);
  const cap = Number(process.argv[4] ?? 200);
  const reloadSeconds = 20; // measured: one break cycle (a 10 s break every 20 s), after one to settle
  const loadBefore = os.loadavg().map((x) => Math.round(x * 100) / 100);
  const { startEngineWith } = await import('../test/ssai/setup.js');
  const w = await child<{ frozen: string; ahead: string; ahead16: string; edge: string; vast: string; stats: string }>(['--role=world']);
  // The engine as shipped: the 1.5 s decision deadline, one decision thread.
  const engine = await startEngineWith({ originCacheMs: undefined, creativeWaitMs: 60_000, decisionDeadlineMs: 1500, env: { LOG_LEVEL: 'silent' } });
  const auth = { Authorization: (await engine.login()).IdToken };
  const metricsText = async () => (await fetch(`${engine.url}/metrics`)).text();
  const metric = (text: string, name: string): number => text.split('\n').filter((l) => l.startsWith(name) && !l.startsWith('#'))
    .reduce((t, l) => t + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  let runNo = 0;
  const configure = async (origin: string, maxRps?: number): Promise<{ guid: string; run: string }> => {
    const run = `r${++runNo}`;
    const created = await engine.api('POST', '/broker/adinserts', { headers: auth, body: {
      name: run, type: 'live', ad_server: `${w.first.vast}/vast-viewer?sid=[session.id]&run=${run}`, source_url: `${origin}/`,
      ...(maxRps ? { ad_server_max_rps: maxRps } : {}),
    } });
    if (created.status !== 200) throw new Error(JSON.stringify(created.body));
    return { guid: created.body.guid as string, run };
  };
  const adServer = async (run: string, from = 0) => (await (await fetch(`${w.first.stats}/?run=${run}&from=${from}`)).json()) as { requests: number; peakPerSecond: number };
  // The creatives of this ladder prepared once (cached on disk across runs): a viewer through a break of the frozen origin.
  const warm = await configure(w.first.frozen);
  for (let tries = 0; tries < 60; tries++) {
    const master = await (await fetch(`${engine.url}/v1/master/${warm.guid}/live/master.m3u8`)).text();
    const uri = master.split('\n').find((l, k, all) => l && !l.startsWith('#') && all[k - 1]?.startsWith('#EXT-X-STREAM-INF'))!;
    if ((await (await fetch(`${engine.url}${uri}`)).text()).includes('/v1/segment/')) break;
    await new Promise((r) => setTimeout(r, 2000));
  }

  const bursts: Array<Record<string, unknown>> = [];
  // A second's crowd at each rate: `rate` viewers joining over one second.
  for (const rate of burstLevels) {
    {
      const viewers = rate;
      const { guid, run } = await configure(w.first.frozen);
      const before = await metricsText();
      const c = await child<BurstResult>(['--role=load', 'burst', engine.url, `/v1/master/${guid}/live/master.m3u8`, String(viewers), String(rate)]);
      const after = await metricsText();
      const row = { joinPerSecond: rate, ...c.first, decisionsLate: metric(after, 'ssai_decisions_late_total') - metric(before, 'ssai_decisions_late_total'), adServer: await adServer(run) };
      bursts.push(row);
      process.stdout.write(`${JSON.stringify(row)}\n`);
    }
  }

  const capRuns: Array<Record<string, unknown>> = [];
  const styles = [
    ['announced 16 s ahead (EXT-X-DATERANGE)', w.first.ahead16],
    ['announced ~6 s ahead (EXT-X-DATERANGE)', w.first.ahead],
    ['at the live edge (EXT-X-CUE-OUT, no notice)', w.first.edge],
  ] as const;
  for (const [style, origin] of styles) {
    for (const maxRps of [undefined, cap]) {
      const { guid, run } = await configure(origin, maxRps);
      const c = await child<{ measureFromWall: number }>(['--role=load', 'reload', engine.url, `/v1/master/${guid}/live/master.m3u8`, String(reloadViewers), String(reloadSeconds)]);
      // the engine's counters from the start of the measured part
      await new Promise((r) => setTimeout(r, Math.max(0, c.first.measureFromWall - Date.now())));
      const before = await metricsText();
      const measured = JSON.parse(await c.nextLine()) as ReloadResult;
      const after = await metricsText();
      const d = (name: string) => metric(after, name) - metric(before, name);
      const row = {
        style, cap: maxRps ?? null, ...measured, adServer: await adServer(run, c.first.measureFromWall),
        fill: d('ssai_avail_seconds_total') > 0 ? Math.round((d('ssai_avail_filled_seconds_total') / d('ssai_avail_seconds_total')) * 1000) / 1000 : null,
        decisionsLate: d('ssai_decisions_late_total'), decisionsAheadLate: d('ssai_decisions_ahead_late_total'),
      };
      capRuns.push(row);
      process.stdout.write(`${JSON.stringify(row)}\n`);
    }
  }
  await engine.close();
  w.proc.stdin!.end();
  const result = {
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, memoryGb: Math.round(os.totalmem() / 2 ** 30), loadAverageBefore: loadBefore, loadAverageAfter: os.loadavg().map((x) => Math.round(x * 100) / 100) },
    method: 'one engine (decision deadline 1.5 s, one decision thread); every viewer its own session and own ads (/vast-viewer, answering at once), its session made first (a master playlist); origins and ad server in one child process (the ad server counts its requests by wall-clock second), load generator (undici pool) in another. Burst: each viewer loads its first media playlist once, viewer i at i / rate s, a break in the window (EXT-X-CUE-OUT, frozen window); filled = the reply holds its ads. Reloads: every viewer reloads every 2 s at its own phase through a real-time origin (a 10 s break every 20 s), 20 s to settle (the window always holds a break: its decisions made) then 20 s measured, one break cycle; filled = one of its measured replies held its ads (of the new break, or of the one before still in the window), fill = ad seconds over avail seconds of the decisions made in the measured part; the ad server counted over the measured part',
    bursts, capRuns,
  };
  await mkdir('bench/results', { recursive: true });
  await writeFile('bench/results/ssai-burst.json', JSON.stringify(result, null, 2) + '\n');
  const b = (r: Record<string, unknown>) => {
    const a = r.adServer as { requests: number; peakPerSecond: number };
    return `| ${r.viewers} | ${r.joinPerSecond} | ${r.filled} (${(Number(r.filled) / Number(r.viewers)).toFixed(3)}) | ${r.decisionsLate} | ${r.errors} | ${r.p50Ms} | ${r.p99Ms} | ${r.maxMs} | ${a.requests} | ${a.peakPerSecond} |\n`;
  };
  const c = (r: Record<string, unknown>) => {
    const a = r.adServer as { requests: number; peakPerSecond: number };
    return `| ${r.style} | ${r.cap ?? 'none'} | ${r.viewers} | ${a.peakPerSecond} | ${a.requests} | ${r.filledViewers} | ${r.fill} | ${r.decisionsLate} | ${r.decisionsAheadLate} | ${r.p99Ms} | ${r.errors} |\n`;
  };
  await writeFile('bench/results/ssai-burst.md', `# bench/ssai-burst\n\n${result.date} · ${result.machine.cpus}× ${result.machine.model} · ${result.machine.memoryGb} GB · Node ${result.machine.node} · load average ${loadBefore.join('/')} before, ${result.machine.loadAverageAfter.join('/')} after (other work shared the machine)\n\n`
    + `Command: \`NODE_OPTIONS=--expose-gc npx tsx bench/ssai-burst.ts ${burstLevels.join(',')} ${reloadViewers} ${cap}\`\n\nMethod: ${result.method}.\n\n`
    + '## Burst fill: viewers joining with a break in the window\n\n| viewers | joining per second | filled | decisions late (slate or content) | errors | p50 ms | p99 ms | max ms | ad server requests | ad server peak second |\n|---|---|---|---|---|---|---|---|---|---|\n'
    + bursts.map(b).join('')
    + `\n## The ad server's peak second through a break, with and without ad_server_max_rps\n\n| break | cap | viewers | ad server peak second | ad server requests | viewers filled | fill (seconds) | decisions late | announced decisions not made in their lead | playlist p99 ms | errors |\n|---|---|---|---|---|---|---|---|---|---|---|\n`
    + capRuns.map(c).join(''));
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  process.exit(0);
}

if (role === 'world') await world();
else if (role === 'load') {
  const [, , , mode, base, masterPath, viewers, arg] = process.argv;
  await load(mode!, base!, masterPath!, Number(viewers), Number(arg));
} else await main();
