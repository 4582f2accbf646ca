// Live benchmark (issue 18): how many channels of the catalog's 720p + 480p ladder run in real time on this machine,
// and the delay from a frame entering the encoder to its segment being in the engine's playlist. Baseline from the same
// run: ONE hand-written ffmpeg command for the same ladder writing its own HLS playlist (no engine in the path).
// Writes bench/results/live.json and live.md. Run: npm run bench:live  (BENCH_MAX_CHANNELS, BENCH_SECONDS, BENCH_SEGMENT)
import { execFile, spawn } from 'node:child_process';
import { access, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateMedia } from '../fixtures/generate-media.js';
import { startEngine, type RunningEngine } from '../wiring/engine.js';
import { createLogger } from '../kernel/core/logger.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const MAX_CHANNELS = Number(process.env['BENCH_MAX_CHANNELS'] ?? 3);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 36);
const SEGMENT = Number(process.env['BENCH_SEGMENT'] ?? 6);
const PASSWORD = 'bench-password-123';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor(s.length / 2)]! : NaN; };
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

interface Delays { firstFrame: number[]; lastFrame: number[] }

/**
 * Watches a media playlist file; a segment `…_<n>.<ext>` of run 1 holds the input's frames [n·d, (n+1)·d) s after
 * `t0` (the encoder's spawn: -re reads in real time from then on), so its first frame waited `seen − (t0 + n·d)`.
 */
function watchPlaylist(file: string, t0: () => number | undefined, segment: number, pattern: RegExp): { stop(): Delays } {
  const seen = new Set<string>();
  const delays: Delays = { firstFrame: [], lastFrame: [] };
  const timer = setInterval(() => {
    let text = '';
    try { text = fs.readFileSync(file, 'utf8'); } catch { return; }
    const now = Date.now();
    for (const line of text.split('\n')) {
      const m = pattern.exec(line.trim());
      if (!m || seen.has(line)) continue;
      seen.add(line);
      const start = t0();
      if (start === undefined) continue;
      const n = Number(m[1]);
      delays.firstFrame.push((now - (start + n * segment * 1000)) / 1000);
      delays.lastFrame.push((now - (start + (n + 1) * segment * 1000)) / 1000);
    }
  }, 50);
  return { stop: () => { clearInterval(timer); return delays; } };
}

/** CPU seconds (user + system) a process has used so far, from /proc (insensitive to other load on a shared machine). */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in USER_HZ
  } catch {
    return undefined;
  }
}

function blueprint(): Record<string, any> {
  const b = JSON.parse(fs.readFileSync(path.join(root, 'fixtures/blueprints/url-pull-hls-ads.json'), 'utf8')) as Record<string, any>;
  b.components.encoder.input = { name: 'bench-in', type: 'MP4', sources: [{ url: 'test-media/bench-720p.mp4' }] };
  b.settings = { adServers: [] };
  b.components.encoder.channel.encoderSettings.outputGroups[0].outputGroupSettings.hlsGroupSettings.segmentLength = SEGMENT;
  return b;
}

async function engineRun(engine: RunningEngine, token: string, channels: number): Promise<Record<string, unknown>> {
  const call = async (method: string, url: string, body?: unknown) => {
    const response = await fetch(`${engine.url}${url}`, { method, headers: { Authorization: token, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return (await response.json()) as Record<string, any>;
  };
  const ids: string[] = [];
  for (let i = 0; i < channels; i++) ids.push((await call('POST', '/workflows', { name: `Bench ${i}`, blueprint: blueprint() })).id as string);
  await call('POST', '/channels', { workflows: ids });
  const runtime = engine.ctx.services.liveRuntime!;
  const dataDir = engine.ctx.config.dataDir;
  const watchers = ids.map((id) => watchPlaylist(path.join(dataDir, 'live', id, 'index_720p.m3u8'), () => runtime.channel(id)?.encoderStats().runStartedAt, SEGMENT, /^r1_720p_(\d+)\.ts$/));
  const speeds: number[][] = ids.map(() => []);
  const cpu: Array<{ pid: number; cpu: number; at: number } | undefined> = ids.map(() => undefined);
  const coresPerChannel: number[] = [];
  const started = Date.now();
  while (Date.now() - started < SECONDS * 1000) {
    await sleep(2000);
    // CPU of each encoder over the steady window: cores one channel needs at its speed
    ids.forEach((id, i) => {
      const pid = runtime.channel(id)?.encoderPid();
      const used = cpuSeconds(pid);
      if (!pid || used === undefined) return;
      const first = cpu[i];
      if (!first || first.pid !== pid || Date.now() - started <= 2 * SEGMENT * 1000) cpu[i] = { pid, cpu: used, at: Date.now() };
      else coresPerChannel[i] = (used - first.cpu) / ((Date.now() - first.at) / 1000);
    });
    // the first two segments are start-up: speed is read once the encoders are in steady state
    if (Date.now() - started > 2 * SEGMENT * 1000) ids.forEach((id, i) => { const s = runtime.channel(id)?.encoderStats().speedX; if (s !== undefined) speeds[i]!.push(s); });
  }
  const delays = watchers.map((w) => w.stop());
  const statuses = await Promise.all(ids.map(async (id) => (await call('GET', `/channels/${id}`)).channelStatus as string));
  await call('DELETE', '/channels', { workflows: ids });
  await engine.ctx.services.live!.channels.settled();
  const channelSpeeds = speeds.map((s) => round(median(s), 3));
  // cores per channel at real time (speed 1.0): the capacity of a quiet machine, whatever else runs now
  const coresAtRealTime = coresPerChannel.map((c, i) => c / Math.max(0.01, channelSpeeds[i] ?? 1));
  const meanCores = coresAtRealTime.reduce((a, b) => a + b, 0) / Math.max(1, coresAtRealTime.length);
  const segments = delays.map((d) => d.firstFrame.length);
  const expected = Math.floor(SECONDS / SEGMENT) - 1;
  return {
    channels, statuses, medianSpeed: channelSpeeds, segmentsWritten: segments, segmentsExpected: expected,
    realTime: channelSpeeds.every((s) => s >= 0.98) && segments.every((n) => n >= expected - 1),
    firstFrameDelaySec: round(median(delays.flatMap((d) => d.firstFrame))), lastFrameDelaySec: round(median(delays.flatMap((d) => d.lastFrame))),
    maxFirstFrameDelaySec: round(Math.max(...delays.flatMap((d) => d.firstFrame))),
    coresPerChannelAtRealTime: round(meanCores, 3), quietMachineCapacity: round(os.cpus().length / meanCores, 2),
  };
}

/** The baseline: ffmpeg alone, the same ladder, its own HLS muxer writing its own playlist. */
async function baselineRun(src: string): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-live-base-'));
  const t0 = Date.now();
  const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-re', '-stream_loop', '-1', '-i', src,
    '-filter_complex', '[0:v]split=2[a][b];[a]fps=30,scale=1280:720[v0];[b]fps=30,scale=854:480[v1]',
    '-map', '[v0]', '-map', '0:a', '-map', '[v1]', '-map', '0:a', '-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency', '-profile:v', 'high',
    '-b:v:0', '3000000', '-maxrate:v:0', '3000000', '-bufsize:v:0', '6000000', '-b:v:1', '1200000', '-maxrate:v:1', '1200000', '-bufsize:v:1', '2400000',
    '-g', '60', '-sc_threshold', '0', '-force_key_frames', `expr:gte(t,n_forced*${SEGMENT})`, '-c:a', 'aac', '-b:a', '128k',
    '-f', 'hls', '-hls_time', String(SEGMENT), '-hls_list_size', '10', '-var_stream_map', 'v:0,a:0 v:1,a:1', '-hls_segment_filename', path.join(dir, 's_%v_%d.ts'), path.join(dir, 'p_%v.m3u8'),
    '-progress', 'pipe:1'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const speeds: number[] = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    for (const m of chunk.matchAll(/speed=\s*([\d.]+)x/g)) if (Date.now() - t0 > 2 * SEGMENT * 1000) speeds.push(Number(m[1]));
  });
  const watcher = watchPlaylist(path.join(dir, 'p_0.m3u8'), () => t0, SEGMENT, /^s_0_(\d+)\.ts$/);
  await sleep(SECONDS * 1000);
  const delays = watcher.stop();
  child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
  return { medianSpeed: round(median(speeds), 3), segmentsWritten: delays.firstFrame.length, firstFrameDelaySec: round(median(delays.firstFrame)), lastFrameDelaySec: round(median(delays.lastFrame)) };
}

function ffmpegVersion(): Promise<string> {
  return new Promise((resolve) => execFile('ffmpeg', ['-version'], (_e, out) => resolve(out.split('\n')[0] ?? 'unknown')));
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-live-'));
  const media = path.join(root, 'test-media');
  await mkdir(media, { recursive: true });
  const src = path.join(media, 'bench-720p-20s.mp4');
  if (!(await access(src).then(() => true, () => false))) await generateMedia('hd', src, { seconds: 20, size: '1280x720' });
  await mkdir(path.join(dataDir, 'test-media'), { recursive: true });
  await fs.promises.copyFile(src, path.join(dataDir, 'test-media', 'bench-720p.mp4'));

  const baseline = await baselineRun(src);
  process.stderr.write(`baseline: ${JSON.stringify(baseline)}\n`);
  const engine = await startEngine({
    env: { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ENGINE_ADMIN_EMAIL: 'bench@example.test', ENGINE_ADMIN_PASSWORD: PASSWORD, PATH: process.env.PATH },
    logger: createLogger('silent'),
  });
  const login = await fetch(`${engine.url}/auth/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'bench@example.test', password: PASSWORD }) });
  const token = ((await login.json()) as { data: { IdToken: string } }).data.IdToken;
  const runs: Array<Record<string, unknown>> = [];
  try {
    for (let n = 1; n <= MAX_CHANNELS; n++) {
      const run = await engineRun(engine, token, n);
      process.stderr.write(`${n} channel(s): ${JSON.stringify(run)}\n`);
      runs.push(run);
    }
  } finally {
    await engine.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  const best = Math.max(0, ...runs.filter((r) => r.realTime).map((r) => Number(r.channels)));
  const load = os.loadavg().map((x) => round(x)).join(', ');
  const machine = `${os.cpus().length} × ${os.cpus()[0]?.model.split(' ').slice(0, 2).join(' ')}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${await ffmpegVersion()}`;
  const result = { at: new Date().toISOString(), machine, segmentSeconds: SEGMENT, secondsPerRun: SECONDS, baseline, runs, realTimeChannels: best, loadAverageAtEnd: load };
  await mkdir(path.join(here, 'results'), { recursive: true });
  await writeFile(path.join(here, 'results', 'live.json'), `${JSON.stringify(result, null, 2)}\n`);
  const rows = runs.map((r) => `| ${r.channels} | ${(r.medianSpeed as number[]).join(' / ')} | ${(r.segmentsWritten as number[]).join(' / ')} of ${r.segmentsExpected} | ${r.firstFrameDelaySec} | ${r.lastFrameDelaySec} | ${r.realTime ? 'yes' : 'no'} | ${r.coresPerChannelAtRealTime} | ${r.quietMachineCapacity} |`);
  await writeFile(path.join(here, 'results', 'live.md'), `# Live channel benchmark

Run ${result.at} on ${machine}.

Method: catalog blueprint url-pull-hls-ads ladder (720p 3 Mb/s + 480p 1.2 Mb/s, 30 fps, AAC 128k, x264 veryfast) fed by
a looped 720p MP4 (MP4 input, read in real time), ${SEGMENT} s segments; N channels run ${SECONDS} s at once. Speed =
median of ffmpeg's \`speed\` after the first two segments; real time = every channel ≥ 0.98x and its segments keep up.
Frame-to-playlist delay: for segment n, the time between the input's frame at n·d s (first frame) or (n+1)·d s (last
frame) entering the encoder (counted from the encoder's spawn, so start-up adds to it) and the segment appearing in the
engine's playlist (file polled every 50 ms). Baseline: one hand-written ffmpeg with the same ladder writing its own HLS.
Cores per channel: the encoder's CPU seconds (/proc) per wall second over the steady window, divided by its speed; the
quiet-machine capacity is the core count over that (what this machine runs in real time when nothing else does).

| channels | median speed | segments written | first-frame delay s | last-frame delay s | real time | cores per channel at 1.0x | channels a quiet machine runs |
|---|---|---|---|---|---|---|---|
${rows.join('\n')}

Baseline (ffmpeg alone, 1 channel): speed ${baseline.medianSpeed}x, first-frame delay ${baseline.firstFrameDelaySec} s, last-frame delay ${baseline.lastFrameDelaySec} s.

**${best} channel(s) in real time** (goal ≥ 2 on 2 cores); goal for the first-frame delay: ≤ ${SEGMENT + 1} s (one segment + 1 s).
Load average at the end: ${load} (the machine is shared: other load lowers these figures).
`);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

await main();
