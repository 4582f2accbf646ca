// Ingest benchmark: per push protocol, a real sender through the engine's front (RTMP server + FLV relay, or UDP
// relay) to an encoder-side ffmpeg, against the same sender straight to an ffmpeg listener (what ffmpeg alone
// does, with no key or address check). Measures connect time (sender start → first frame at the receiver, and
// → the front's `connected`) and CPU during a steady window: the relay's (this Node process) and the receiver's.
// Writes bench/results/ingest.json and ingest.md. Run: npm run bench:ingest (BENCH_ROUNDS, BENCH_WINDOW_S).
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnFfmpeg, type StartedFfmpeg } from '../media/ffmpeg-process.js';
import type { IngestFront } from '../packager/ingest/ingest-front.js';
import { RtmpServer } from '../packager/ingest/rtmp/rtmp-server.js';
import { openRtmpFront } from '../packager/ingest/rtmp/rtmp-front.js';
import { listenerArgs, openUdpFront, type UdpProtocol } from '../packager/ingest/udp/udp-front.js';
import { freeLoopbackPort } from '../packager/ingest/udp/udp-ports.js';
import type { PushProtocol } from '../packager/ingest/push-ingest.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const WINDOW_S = Number(process.env['BENCH_WINDOW_S'] ?? 8);
const FFMPEG = process.env['FFMPEG_PATH'] ?? 'ffmpeg';
const PASSPHRASE = 'bench-passphrase-0123';
const PROTOCOLS: PushProtocol[] = ['RTMP_PUSH', 'SRT_PUSH', 'RIST', 'RTP', 'RTP_FEC'];

type Mode = 'direct' | 'front';

interface Sample {
  protocol: PushProtocol;
  mode: Mode;
  /** sender start → first video frame out of the receiver */
  firstFrameMs: number;
  /** sender start → the front's `connected` event (front only) */
  connectedMs: number | undefined;
  /** CPU of this Node process over the window, % of one core (the relay's cost; ~0 in direct mode) */
  nodeCpuPct: number;
  /** CPU of the receiving ffmpeg over the window, % of one core */
  receiverCpuPct: number;
  /** CPU of the UDP front's private listener ffmpeg over the window, % of one core (0 where there is none) */
  listenerCpuPct: number;
  /** frames per second the receiver got over the window */
  fps: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** user+system CPU seconds of a live process, from /proc. */
async function processCpuSec(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function ffmpegVersion(): Promise<string> {
  return new Promise((resolve) => execFile(FFMPEG, ['-version'], (_e, out) => resolve(out.split('\n')[0] ?? 'unknown')));
}

function senderArgs(protocol: PushProtocol, source: string, port: number): string[] {
  const input = ['-loglevel', 'error', '-re', '-stream_loop', '-1', '-i', source, '-c', 'copy'];
  switch (protocol) {
    case 'RTMP_PUSH': return [...input, '-f', 'flv', `rtmp://127.0.0.1:${port}/live/bench-key`];
    case 'SRT_PUSH': return [...input, '-f', 'mpegts', `srt://127.0.0.1:${port}?passphrase=${PASSPHRASE}`];
    case 'RIST': return [...input, '-f', 'mpegts', `rist://127.0.0.1:${port}`];
    case 'RTP': return [...input, '-f', 'rtp_mpegts', `rtp://127.0.0.1:${port}`];
    case 'RTP_FEC': return [...input, '-f', 'rtp_mpegts', '-fec', 'prompeg=l=5:d=5', `rtp://127.0.0.1:${port}`];
  }
}

/** The receiver copies (no decode), so its CPU is the transport's; stats every 100 ms for the first-frame time. */
function receive(inputArgs: string[]): StartedFfmpeg {
  return spawnFfmpeg(FFMPEG, ['-stats_period', '0.1', '-loglevel', 'error', ...inputArgs, '-map', '0', '-c', 'copy', '-f', 'null', '-']);
}

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(10);
  }
}

async function runOnce(protocol: PushProtocol, mode: Mode, source: string): Promise<Sample> {
  const children: StartedFfmpeg[] = [];
  let front: IngestFront | undefined;
  let listenerPid: () => number | undefined = () => undefined;
  let rtmp: RtmpServer | undefined;
  try {
    let port: number;
    let receiver: StartedFfmpeg | undefined;
    let connectedAt: number | undefined;
    const startReceiver = (args: string[]) => {
      receiver = receive(args);
      children.push(receiver);
    };
    if (mode === 'direct') {
      if (protocol === 'RTMP_PUSH') {
        port = await freeTcpPort();
        startReceiver(['-listen', '1', '-f', 'flv', '-i', `rtmp://127.0.0.1:${port}/live/bench-key`]);
      } else {
        port = await freeLoopbackPort(protocol === 'RTP' || protocol === 'RTP_FEC' ? [1, 2, 4] : []);
        startReceiver(listenerArgs(protocol as UdpProtocol, port, PASSPHRASE));
      }
    } else if (protocol === 'RTMP_PUSH') {
      rtmp = new RtmpServer();
      port = await rtmp.listen(0, '127.0.0.1');
      const opened = await openRtmpFront({ server: rtmp, streamKey: 'bench-key', cidrs: ['127.0.0.1/32'] });
      front = opened;
      // the contract: the encoder is spawned on `connected`
      opened.subscribe((event) => {
        if (event.type !== 'connected') return;
        connectedAt = Date.now();
        startReceiver(opened.encoderInputArgs());
      });
    } else {
      const opened = await openUdpFront({ protocol: protocol as UdpProtocol, host: '127.0.0.1', port: 0, cidrs: ['127.0.0.1/32'], passphrase: protocol === 'SRT_PUSH' ? PASSPHRASE : undefined });
      front = opened;
      port = opened.port;
      listenerPid = () => opened.listenerPid();
      // the same contract as RTMP: the encoder is spawned on `connected` and reads the front's private listener
      opened.subscribe((event) => {
        if (event.type !== 'connected' || connectedAt !== undefined) return;
        connectedAt = Date.now();
        startReceiver(opened.encoderInputArgs());
      });
    }
    // let a listener bind before the sender starts (the receiver in direct mode, the front's own in front mode)
    await sleep(700);
    const startedAt = Date.now();
    children.push(spawnFfmpeg(FFMPEG, senderArgs(protocol, source, port)));
    await waitFor(() => (receiver?.progress.frames ?? 0) > 0, 30_000, `${protocol} ${mode} first frame`);
    const firstFrameMs = Date.now() - startedAt;
    await sleep(1_000); // past the start-up burst
    const active = receiver as unknown as StartedFfmpeg;
    const node0 = process.cpuUsage();
    const receiver0 = await processCpuSec(active.pid);
    const listener = listenerPid();
    const listener0 = listener ? await processCpuSec(listener) : 0;
    const frames0 = active.progress.frames;
    const t0 = performance.now();
    await sleep(WINDOW_S * 1000);
    const seconds = (performance.now() - t0) / 1000;
    const node1 = process.cpuUsage(node0);
    const receiver1 = await processCpuSec(active.pid);
    const listener1 = listener ? await processCpuSec(listener).catch(() => listener0) : 0;
    return {
      protocol,
      mode,
      firstFrameMs,
      connectedMs: connectedAt === undefined ? undefined : connectedAt - startedAt,
      nodeCpuPct: round(((node1.user + node1.system) / 1e6 / seconds) * 100),
      receiverCpuPct: round(((receiver1 - receiver0) / seconds) * 100),
      listenerCpuPct: round(((listener1 - listener0) / seconds) * 100),
      fps: round((active.progress.frames - frames0) / seconds),
    };
  } finally {
    await Promise.all(children.map((child) => child.stop(1_000)));
    await front?.close();
    await rtmp?.close();
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : round(((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2);
}

async function main(): Promise<void> {
  const work = path.join(os.tmpdir(), `bench-ingest-${process.pid}`);
  await mkdir(work, { recursive: true });
  const source = path.join(work, 'source.ts');
  process.stderr.write('encoding the 10 s 640x360 source once...\n');
  await new Promise<void>((resolve, reject) => execFile(FFMPEG, [
    '-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=1000:sample_rate=48000',
    '-t', '10', '-pix_fmt', 'yuv420p', '-c:v', 'libx264', '-preset', 'veryfast', '-b:v', '1500k', '-g', '25', '-c:a', 'aac', '-b:a', '128k', '-f', 'mpegts', source,
  ], (error, _out, stderr) => (error ? reject(new Error(stderr)) : resolve())));

  const samples: Sample[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const protocol of PROTOCOLS) {
      // ABBA over rounds: slow drift of a shared machine hits both modes alike
      const modes: Mode[] = round % 2 === 0 ? ['direct', 'front'] : ['front', 'direct'];
      for (const mode of modes) {
        process.stderr.write(`round ${round + 1}/${ROUNDS} ${protocol} ${mode}...\n`);
        samples.push(await runOnce(protocol, mode, source));
      }
    }
  }
  await rm(work, { recursive: true, force: true });

  const rows = PROTOCOLS.flatMap((protocol) => (['direct', 'front'] as const).map((mode) => {
    const mine = samples.filter((sample) => sample.protocol === protocol && sample.mode === mode);
    const connected = mine.map((sample) => sample.connectedMs).filter((value): value is number => value !== undefined);
    return {
      protocol,
      mode,
      firstFrameMs: median(mine.map((sample) => sample.firstFrameMs)),
      connectedMs: connected.length ? median(connected) : null,
      nodeCpuPct: median(mine.map((sample) => sample.nodeCpuPct)),
      receiverCpuPct: median(mine.map((sample) => sample.receiverCpuPct)),
      listenerCpuPct: median(mine.map((sample) => sample.listenerCpuPct)),
      fps: median(mine.map((sample) => sample.fps)),
    };
  }));
  const cpus = os.cpus();
  const result = {
    date: new Date().toISOString(),
    machine: { cpuModel: cpus[0]?.model ?? 'unknown', cpuCount: cpus.length, memGiB: Math.round(os.totalmem() / 2 ** 30), os: `${os.type()} ${os.release()}`, node: process.version, ffmpeg: await ffmpegVersion() },
    method: `A 10 s 640x360 25 fps H.264 1.5 Mbps + AAC 128k MPEG-TS source, sent looped in real time with -c copy by ffmpeg on loopback. `
      + `"direct": the sender pushes to an ffmpeg listener (rtmp -listen 1, srt listener, rist @, rtp) with no key or address check; `
      + `"front": the same sender through the engine's front, the receiver spawned on "connected" (RTMP: our RTMP server + loopback FLV; `
      + `UDP: our relay, then the front's private ffmpeg listener (copy to MPEG-TS), then loopback TCP). The receiver copies to null (no decode). `
      + `Relay CPU is this Node process; the front's listener ffmpeg has its own column. `
      + `First frame = sender start → first frame reported by the receiver (-stats_period 0.1); CPU over a ${WINDOW_S} s steady window `
      + `1 s after the first frame, % of one core, from process.cpuUsage (relay) and /proc (receiver). Median of ${ROUNDS} rounds, ABBA order.`,
    rows,
    samples,
    loadAverage1mAtEnd: round(os.loadavg()[0] ?? 0),
  };
  const out = path.join(root, 'bench', 'results');
  await mkdir(out, { recursive: true });
  await writeFile(path.join(out, 'ingest.json'), `${JSON.stringify(result, null, 2)}\n`);
  const table = rows.map((row) => `| ${row.protocol} | ${row.mode === 'direct' ? 'ffmpeg listener (baseline)' : 'engine front'} | ${row.firstFrameMs} | ${row.connectedMs ?? '–'} | ${row.nodeCpuPct} | ${row.listenerCpuPct} | ${row.receiverCpuPct} | ${row.fps} |`);
  await writeFile(path.join(out, 'ingest.md'), [
    '# Ingest benchmark', '',
    `Run ${result.date} on ${result.machine.cpuCount} × ${result.machine.cpuModel}, ${result.machine.memGiB} GiB, ${result.machine.os}, Node ${result.machine.node}, ${result.machine.ffmpeg}.`, '',
    `Method: ${result.method}`, '',
    '| protocol | path | first frame ms | connected ms | relay CPU % | front listener CPU % | receiver CPU % | fps |',
    '|---|---|---|---|---|---|---|---|',
    ...table, '',
    `Load average at the end: ${result.loadAverage1mAtEnd} (the machine is shared; compare rows of one run only).`, '',
  ].join('\n'));
  process.stdout.write(`${table.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
