// bench/ssai-logic (issue 28 point 2): what the SSAI logic costs the playlists' thread per request, without sockets.
// bench/ssai-capacity measures the whole machine, where the kernel's loopback writes and node:http are half of the
// engine's main thread and the other processes share the two cores; its tail swings several-fold between runs. This
// one drives the engine's own request listener in process with plain request and reply objects (no socket, no HTTP
// parsing, no write), so the figure left is the engine's logic: the stitched playlists, the segment redirects with
// their beacon marks, the decisions' replies, the retirements, and the garbage they make.
// The traffic is that of bench/ssai-capacity: the same origin and ad server (its world child: a live origin with a 10 s
// break every 20 s, each viewer its own ads), every viewer its own session, one media playlist reload every 2 s at its
// own phase, each new ad segment among the playlist's last three fetched once (the redirect fires the beacons).
// Baseline, same harness, same schedule: a handler that answers the origin's playlist text and a 302 (the harness's
// own cost: timers, request objects, the viewers' parsing of the replies).
// Usage: NODE_OPTIONS=--expose-gc npx tsx bench/ssai-logic.ts [viewers=6000] [seconds=40] [cueForm=cue-out] [rampSeconds=20]
// → bench/results/ssai-logic.{md,json}. SSAI_LOGIC_PROFILE=dir: a CPU profile of the measured part (with SSAI_LOGIC_HEAP=1:
// its sampled allocations, young garbage included).
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { threadCpuMs } from '../ssai/decide/thread-times.js';
import { runViewerSchedule } from './lib/viewer-schedule.js';

/** The main thread's user and system CPU, ms (/proc, clock ticks of 10 ms): how much of it is the kernel's. */
function mainUserSystemMs(): { user: number; system: number } {
  const fields = readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}

const PERIOD_MS = 2000;
const CAPACITY = fileURLToPath(new URL('./ssai-capacity.ts', import.meta.url));

type Listener = (req: IncomingMessage, res: ServerResponse) => void;
type Answer = { status: number; body: string; location?: string };

/** One request through a request listener, with the fields the engine's raw handlers read; resolves with the answer. */
function call(listener: Listener, url: string): Promise<Answer> {
  return new Promise((resolve) => {
    let status = 0;
    let location: string | undefined;
    const req = { url, method: 'GET', headers: {}, socket: { remoteAddress: '127.0.0.1' } } as unknown as IncomingMessage;
    const reply: { headersSent: boolean; writeHead(code: number, headers?: string[]): unknown; end(body?: string | Buffer): unknown; destroy(): void } = {
      headersSent: false,
      writeHead(code, headers) {
        status = code;
        if (Array.isArray(headers)) for (let i = 0; i < headers.length; i += 2) if (headers[i] === 'location') location = headers[i + 1];
        reply.headersSent = true;
        return reply;
      },
      end(body) {
        resolve({ status, body: body === undefined ? '' : String(body), ...(location !== undefined ? { location } : {}) });
        return reply;
      },
      destroy() { resolve({ status: 0, body: '' }); },
    };
    const res = reply as unknown as ServerResponse;
    listener(req, res);
  });
}

type RunFigures = {
  requests: number; playlists: number; segments: number; withAds: number; errors: number; mainCpuMs: number; mainSystemMs: number; processCpuMs: number; wallMs: number; p99Ms: number;
  /** the main thread's busiest 2 s (its CPU over that time, in cores): a no-notice break's start, when every viewer needs a decision */
  peakMainCores: number;
};

/** The busiest PEAK_WINDOW_MS of the main thread, in cores, from samples of its CPU time taken every SAMPLE_MS or so. */
const PEAK_WINDOW_MS = 2000;
const SAMPLE_MS = 250;
function peakCores(samples: ReadonlyArray<{ at: number; cpuMs: number }>): number {
  let peak = 0;
  for (let a = 0, b = 0; a < samples.length; a++) {
    while (b < samples.length - 1 && samples[b]!.at - samples[a]!.at < PEAK_WINDOW_MS) b++;
    const span = samples[b]!.at - samples[a]!.at;
    if (span >= PEAK_WINDOW_MS * 0.9) peak = Math.max(peak, (samples[b]!.cpuMs - samples[a]!.cpuMs) / span);
  }
  return Math.round(peak * 100) / 100;
}

/**
 * Viewers on the capacity bench's schedule through `listener`: `media[i]` reloaded every 2 s from its phase, each new
 * /v1/segment/ URI among the reply's last three fetched once. CPU is counted over the measured part only.
 */
async function drive(listener: Listener, media: string[], seconds: number, rampMs: number, onMeasure?: () => Promise<void>, onEnd?: () => Promise<void>): Promise<RunFigures> {
  const viewers = media.length;
  const seen: string[][] = media.map(() => []);
  const latencies: number[] = [];
  let measuring = false;
  let playlists = 0, segments = 0, withAds = 0, errors = 0;
  const inflight = new Set<Promise<void>>();
  const fire = (i: number, scheduled: number): void => {
    const counted = measuring;
    const p = call(listener, media[i]!).then((a) => {
      if (counted) { playlists++; latencies.push(performance.now() - scheduled); }
      if (a.status !== 200) { if (counted) errors++; return; }
      if (!a.body.includes('/v1/segment/')) return;
      if (counted) withAds++;
      const lines = a.body.split('\n');
      let n = 0;
      for (let k = lines.length - 1; k >= 0 && n < 3; k--) {
        const uri = lines[k]!;
        if (!uri || uri.startsWith('#')) continue;
        n++;
        if (!uri.startsWith('/v1/segment/') || seen[i]!.includes(uri)) continue;
        seen[i]!.push(uri);
        if (seen[i]!.length > 8) seen[i]!.shift();
        const s = call(listener, uri).then((r) => { if (counted) { segments++; if (r.status !== 302) errors++; } });
        inflight.add(s);
        void s.finally(() => inflight.delete(s));
      }
    });
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
  };
  const t0 = performance.now() + 100;
  const measureFrom = t0 + rampMs;
  const end = measureFrom + seconds * 1000;
  let cpu0 = process.cpuUsage(), main0 = 0, wall0 = 0, system0 = 0;
  const cpuSamples: Array<{ at: number; cpuMs: number }> = [];
  await runViewerSchedule({
    viewers, rampMs, periodMs: PERIOD_MS, t0, end, fire,
    onTick: (now) => {
      if (measuring && now - (cpuSamples[cpuSamples.length - 1]?.at ?? 0) >= SAMPLE_MS) cpuSamples.push({ at: now, cpuMs: threadCpuMs(process.pid) ?? 0 });
      if (measuring || now < measureFrom) return;
      measuring = true;
      void onMeasure?.();
      cpu0 = process.cpuUsage();
      main0 = threadCpuMs(process.pid) ?? 0;
      system0 = mainUserSystemMs().system;
      wall0 = now;
    },
  });
  await Promise.all(inflight);
  const wallMs = performance.now() - wall0;
  const cpu = process.cpuUsage(cpu0);
  const mainCpuMs = (threadCpuMs(process.pid) ?? 0) - main0;
  const mainSystemMs = mainUserSystemMs().system - system0;
  await onEnd?.();
  latencies.sort((a, b) => a - b);
  return {
    requests: playlists + segments, playlists, segments, withAds, errors, mainCpuMs, mainSystemMs, processCpuMs: Math.round((cpu.user + cpu.system) / 1000), wallMs: Math.round(wallMs),
    p99Ms: Math.round((latencies[Math.floor(0.99 * latencies.length)] ?? 0) * 10) / 10, peakMainCores: peakCores(cpuSamples),
  };
}

async function main(): Promise<void> {
  const viewers = Number(process.argv[2] ?? 6000);
  const seconds = Number(process.argv[3] ?? 40);
  const cueForm = process.argv[4] ?? 'cue-out';
  const rampMs = Math.max(PERIOD_MS, Number(process.argv[5] ?? 20) * 1000);
  // the capacity bench's world: origin and ad server in a child process
  const world = spawn(process.execPath, ['--import', 'tsx', CAPACITY, '--role=world', cueForm], { stdio: ['pipe', 'pipe', 'inherit'] });
  const first = await createInterface({ input: world.stdout! })[Symbol.asyncIterator]().next();
  const w = JSON.parse(first.value as string) as { origin: string; vast: string };
  const { startEngineWith } = await import('../test/ssai/setup.js');
  const engine = await startEngineWith({ originCacheMs: undefined, creativeWaitMs: 60_000, decisionDeadlineMs: 40, cutBeforeUndecidedBreaks: true, env: { LOG_LEVEL: 'silent', SSAI_DECISION_THREADS: '1' } });
  const listener = (engine.server.listeners('request')[0]) as Listener;
  const auth = { Authorization: (await engine.login()).IdToken };
  const created = await engine.api('POST', '/broker/adinserts', { headers: auth, body: { name: 'logic', type: 'live', ad_server: `${w.vast}/vast-viewer?sid=[session.id]`, source_url: `${w.origin}/` } });
  const guid = created.body.guid as string;
  const masterPath = `/v1/master/${guid}/live/master.m3u8`;
  const mediaOf = (master: string): string => master.split('\n').find((l, k, all) => l && !l.startsWith('#') && all[k - 1]?.startsWith('#EXT-X-STREAM-INF'))!;
  // the creatives prepared once (cached on disk across runs): a warm-up session through a break
  for (let tries = 0; tries < 40; tries++) {
    const uri = mediaOf((await call(listener, masterPath)).body);
    if ((await call(listener, uri)).body.includes('/v1/segment/')) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const media: string[] = [];
  for (let i = 0; i < viewers; i++) media.push(mediaOf((await call(listener, masterPath)).body));

  const profileDir = process.env.SSAI_LOGIC_PROFILE;
  const profiler = profileDir ? new Session() : undefined;
  // SSAI_LOGIC_HEAP=1 with SSAI_LOGIC_PROFILE: the sampled allocations (what the garbage collector has to clear) instead
  const heapProfile = process.env.SSAI_LOGIC_HEAP === '1';
  const engineRun = await drive(listener, media, seconds, rampMs, async () => {
    if (!profiler) return;
    profiler.connect();
    if (heapProfile) {
      await profiler.post('HeapProfiler.enable');
      await profiler.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      return;
    }
    await profiler.post('Profiler.enable');
    // (every 200 µs: the default millisecond leaves a break's start, the busiest 2 s, a few hundred samples)
    await profiler.post('Profiler.setSamplingInterval', { interval: 200 });
    await profiler.post('Profiler.start');
  }, async () => {
    if (!profiler || !profileDir) return;
    await mkdir(profileDir, { recursive: true });
    if (heapProfile) {
      const { profile } = await profiler.post('HeapProfiler.stopSampling');
      await writeFile(`${profileDir}/ssai-logic-${cueForm}-${viewers}.heapprofile`, JSON.stringify(profile));
    } else {
      const { profile } = await profiler.post('Profiler.stop');
      await writeFile(`${profileDir}/ssai-logic-${cueForm}-${viewers}.cpuprofile`, JSON.stringify(profile));
    }
    profiler.disconnect();
  });
  await engine.close();

  // Baseline: the same harness and schedule against a handler with no SSAI logic: the origin's playlist text, whose
  // last three segments are segment URIs in the first 10 s of each 20 s (as a break's are), and a 302 for those.
  const originText = await (await fetch(`${w.origin}/live/v0.m3u8`)).text();
  const lines = originText.trimEnd().split('\n');
  const uriLines = lines.flatMap((l, k) => (l && !l.startsWith('#') ? [k] : [])).slice(-3);
  const bare: Listener = (req, res) => {
    if (req.url!.startsWith('/v1/segment/')) { res.writeHead(302, ['location', `${w.vast}/creative/floor.ts`]); res.end(); return; }
    const at = Math.floor(Date.now() / PERIOD_MS);
    const out = lines.slice();
    uriLines.forEach((line, k) => { const j = at - uriLines.length + 1 + k; if (j % 10 < 5) out[line] = `/v1/segment/floor/${j}.ts`; });
    res.writeHead(200, ['content-type', 'application/vnd.apple.mpegurl']);
    res.end(`${out.join('\n')}\n`);
  };
  // (SSAI_LOGIC_BASELINE=0: the engine alone, for quick comparisons of the engine's own figures)
  const baselineRun = process.env.SSAI_LOGIC_BASELINE === '0' ? engineRun : await drive(bare, media.map(() => '/live/v0.m3u8'), seconds, rampMs);
  world.stdin!.end();

  const perRequest = (r: RunFigures, ms: number) => Math.round((ms * 1000) / Math.max(1, r.requests) * 10) / 10;
  const result = {
    bench: 'ssai-logic', date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model ?? '', node: process.version, loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100) },
    command: `NODE_OPTIONS=--expose-gc npx tsx bench/ssai-logic.ts ${viewers} ${seconds} ${cueForm} ${rampMs / 1000}`,
    viewers, seconds, cueForm,
    engine: { ...engineRun, mainUsPerRequest: perRequest(engineRun, engineRun.mainCpuMs), processUsPerRequest: perRequest(engineRun, engineRun.processCpuMs), mainCores: Math.round((engineRun.mainCpuMs / engineRun.wallMs) * 100) / 100 },
    baseline: { ...baselineRun, mainUsPerRequest: perRequest(baselineRun, baselineRun.mainCpuMs), processUsPerRequest: perRequest(baselineRun, baselineRun.processCpuMs), mainCores: Math.round((baselineRun.mainCpuMs / baselineRun.wallMs) * 100) / 100 },
  };
  const e = result.engine, b = result.baseline;
  await writeFile('bench/results/ssai-logic.json', `${JSON.stringify(result, null, 2)}\n`);
  await writeFile('bench/results/ssai-logic.md', `# bench/ssai-logic\n\n${result.date} · ${result.machine.cpus}× ${result.machine.model} · Node ${result.machine.node} · load average ${result.machine.loadAverage.join('/')} after\n\n`
    + `Command: \`${result.command}\`\n\n`
    + 'Method: the engine\'s request listener driven in process (plain request and reply objects: no socket, no HTTP parsing, no write), on bench/ssai-capacity\'s traffic: its origin and ad server (a child process: a 10 s break every 20 s, each viewer its own ads), every viewer its own session, a media playlist reload every 2 s at its own phase, each new ad segment among the last three fetched once (the redirect fires the beacons). Measured after the viewers joined over the ramp. Main µs/request: the CPU of the thread answering the playlists (/proc) over the measured part, by the playlists and segment redirects answered; its busiest 2 s: that thread\'s CPU over the 2 s it was busiest (sampled every 250 ms), in cores, the start of a break every viewer needs a decision for. Baseline: the same harness and schedule against a handler that answers the origin\'s text (its last three segments as segment URIs in the first 10 s of every 20) and a 302: the harness\'s own cost.\n\n'
    + '| run | viewers | playlists | segments | with ads | errors | main thread µs/request | process µs/request | main thread cores | main thread, busiest 2 s | p99 ms (in process) |\n|---|---|---|---|---|---|---|---|---|---|---|\n'
    + `| engine | ${viewers} | ${e.playlists} | ${e.segments} | ${e.withAds} | ${e.errors} | ${e.mainUsPerRequest} | ${e.processUsPerRequest} | ${e.mainCores} | ${e.peakMainCores} | ${e.p99Ms} |\n`
    + `| baseline | ${viewers} | ${b.playlists} | ${b.segments} | ${b.withAds} | ${b.errors} | ${b.mainUsPerRequest} | ${b.processUsPerRequest} | ${b.mainCores} | ${b.peakMainCores} | ${b.p99Ms} |\n`
    + `\nThe SSAI logic's own cost on the playlists' thread: ${Math.round((e.mainUsPerRequest - b.mainUsPerRequest) * 10) / 10} µs per request.\n`);
  process.stdout.write(`${JSON.stringify({ engineMainSystemShare: Math.round((e.mainSystemMs / Math.max(1, e.mainCpuMs)) * 100) / 100, engineMainUsPerRequest: e.mainUsPerRequest, baselineMainUsPerRequest: b.mainUsPerRequest, engineMainCores: e.mainCores, engineMainPeakCores: e.peakMainCores, withAds: e.withAds, errors: e.errors })}\n`);
  process.exit(0);
}

await main();
