// Encode benchmark: the engine's encodeVod of a 60 s 1080p source vs ONE hand-written ffmpeg command for the same
// ladder, same machine, same run. Writes bench/results/encode.json and encode.md. Run: npx tsx bench/encode.ts
import { execFile } from 'node:child_process';
import { access, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateMedia } from '../fixtures/generate-media.js';
import { encodeVod } from '../vod-encoder/encode.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 60);
const PRESET = 'veryfast';
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 2);

function ffmpeg(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('ffmpeg', args, { maxBuffer: 64 * 1024 * 1024 }, (err, _o, stderr) => (err ? reject(new Error(stderr.slice(-2000))) : resolve()));
  });
}
/** CPU seconds (user+sys) of this process's finished children: robust to other load on a shared machine. */
async function childCpuSec(): Promise<number> {
  const stat = await readFile('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) / 100; // cutime, cstime in USER_HZ (100 on Linux)
}

function ffmpegVersion(): Promise<string> {
  return new Promise((resolve) => execFile('ffmpeg', ['-version'], (_e, out) => resolve(out.split('\n')[0] ?? 'unknown')));
}

/** The baseline: what a person would type for the same ladder and packaging, without probe, MP4s or thumbnails. */
function handWritten(src: string, outDir: string): string[] {
  return [
    '-hide_banner', '-v', 'error', '-y', '-i', src,
    '-filter_complex', '[0:v]split=4[a][b][c][d];[a]scale=1920:1080,setdar=16/9[v0];[b]scale=1280:720,setdar=16/9[v1];'
      + '[c]scale=854:480,setdar=16/9[v2];[d]scale=640:360,setdar=16/9[v3]',
    '-map', '[v0]', '-map', '[v1]', '-map', '[v2]', '-map', '[v3]', '-map', '0:a',
    // no B-frames, as the engine's encode (vod-encoder/encode.ts): the same output settings, so the ratio is the pipeline's cost
    '-c:v', 'libx264', '-preset', PRESET, '-profile:v', 'high', '-bf', '0', '-pix_fmt', 'yuv420p',
    '-b:v:0', '5000k', '-maxrate:v:0', '5350k', '-bufsize:v:0', '10000k',
    '-b:v:1', '3000k', '-maxrate:v:1', '3210k', '-bufsize:v:1', '6000k',
    '-b:v:2', '1400k', '-maxrate:v:2', '1498k', '-bufsize:v:2', '2800k',
    '-b:v:3', '800k', '-maxrate:v:3', '856k', '-bufsize:v:3', '1600k',
    '-force_key_frames', 'expr:gte(t,n_forced*4)', '-sc_threshold', '0',
    '-c:a', 'aac', '-b:a', '128k', '-ar', '48000', '-ac', '2',
    '-f', 'dash', '-seg_duration', '4', '-use_template', '1', '-use_timeline', '1', '-hls_playlist', '1',
    '-adaptation_sets', 'id=0,streams=v id=1,streams=a', path.join(outDir, 'manifest.mpd'),
  ];
}

async function main(): Promise<void> {
  const media = path.join(root, 'test-media');
  await mkdir(media, { recursive: true });
  const src = path.join(media, `bench-1080p-${SECONDS}s.mp4`);
  if (!(await access(src).then(() => true, () => false))) {
    process.stderr.write(`generating ${src}\n`);
    await generateMedia('hd', src, { seconds: SECONDS, size: '1920x1080' });
  }
  const work = path.join(os.tmpdir(), `bench-encode-${process.pid}`);
  // ABBA order over rounds cancels slow drift of a shared machine; the best time of each method is compared.
  const hand: number[] = [];
  const engine: number[] = [];
  const handCpu: number[] = [];
  const engineCpu: number[] = [];
  let lastSpeed = 0;
  const runHand = async (): Promise<void> => {
    process.stderr.write('hand-written ffmpeg...\n');
    await rm(path.join(work, 'hand'), { recursive: true, force: true });
    await mkdir(path.join(work, 'hand'), { recursive: true });
    const t = performance.now();
    const c = await childCpuSec();
    await ffmpeg(handWritten(src, path.join(work, 'hand')));
    hand.push((performance.now() - t) / 1000);
    handCpu.push((await childCpuSec()) - c);
  };
  const runEngine = async (): Promise<void> => {
    process.stderr.write('engine encodeVod...\n');
    const t = performance.now();
    const c = await childCpuSec();
    const r = await encodeVod(src, { outDir: path.join(work, 'engine'), preset: PRESET,
      onProgress: (p) => { if (p.stage === 'encode' && p.speedX > 0) lastSpeed = p.speedX; } }).done;
    engine.push((performance.now() - t) / 1000);
    engineCpu.push((await childCpuSec()) - c);
    if (!r.ok) throw new Error(`engine encode failed: ${r.error.reason}`);
  };
  for (let i = 0; i < ROUNDS; i++) {
    if (i % 2 === 0) { await runHand(); await runEngine(); } else { await runEngine(); await runHand(); }
  }
  await rm(work, { recursive: true, force: true });
  const handSec = Math.min(...hand);
  const engineSec = Math.min(...engine);

  const cpus = os.cpus();
  const result = {
    date: new Date().toISOString(),
    machine: { cpuModel: cpus[0]?.model ?? 'unknown', cpuCount: cpus.length, memGiB: Math.round(os.totalmem() / 2 ** 30),
      os: `${os.type()} ${os.release()}`, node: process.version, ffmpeg: await ffmpegVersion() },
    method: `${SECONDS} s 1920x1080 30 fps testsrc2+sine source; ladder 1080/720/480/360 at 5/3/1.4/0.8 Mbps + AAC 128k; `
      + `x264 preset ${PRESET}; 4 s CMAF segments, HLS+DASH. Engine = probe + one-run encode + per-height MP4 remux + poster `
      + 'and sprite; baseline = one hand-written ffmpeg command (encode + dash/hls packaging only). '
      + `${ROUNDS} rounds in ABBA order, best time of each method compared.`,
    sourceSeconds: SECONDS,
    handWrittenSeconds: round(handSec),
    engineSeconds: round(engineSec),
    ratio: round(handSec / engineSec),
    engineXRealtime: round(SECONDS / engineSec),
    handWrittenXRealtime: round(SECONDS / handSec),
    engineLastReportedSpeedX: lastSpeed,
    rawSeconds: { handWritten: hand.map(round), engine: engine.map(round) },
    cpuSeconds: { handWritten: handCpu.map(round), engine: engineCpu.map(round) },
    cpuRatio: round(Math.min(...handCpu) / Math.min(...engineCpu)),
    loadAverage1mAtEnd: round(os.loadavg()[0] ?? 0),
  };
  const out = path.join(root, 'bench', 'results');
  await mkdir(out, { recursive: true });
  await writeFile(path.join(out, 'encode.json'), `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(path.join(out, 'encode.md'), [
    '# VOD encode benchmark', '',
    `Run ${result.date} on ${result.machine.cpuCount} × ${result.machine.cpuModel}, ${result.machine.memGiB} GiB, `
      + `${result.machine.os}, Node ${result.machine.node}, ${result.machine.ffmpeg}.`, '',
    `Method: ${result.method}`, '',
    '| method | seconds | x realtime |', '|---|---|---|',
    `| hand-written ffmpeg (baseline) | ${result.handWrittenSeconds} | ${result.handWrittenXRealtime} |`,
    `| engine encodeVod | ${result.engineSeconds} | ${result.engineXRealtime} |`, '',
    `Ratio baseline / engine: **${result.ratio}** (goal ≥ 0.9).`, '',
    `Raw seconds: baseline ${hand.map(round).join(', ')}; engine ${engine.map(round).join(', ')}.`, '',
    `CPU seconds of the ffmpeg children (insensitive to other load): baseline ${handCpu.map(round).join(', ')}; `
      + `engine ${engineCpu.map(round).join(', ')}; ratio ${result.cpuRatio}. Load average at the end: ${result.loadAverage1mAtEnd}.`, '',
  ].join('\n'));
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
