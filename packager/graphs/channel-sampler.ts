// The eight graph metrics of spec 4.2.12 for one channel, sampled every few seconds from ffmpeg's -progress output,
// the process's read counter (/proc/<pid>/io: what a pull input or a push front delivered) and the channel's own
// counters. Units follow the graphs endpoint: Mb/s, counts, frames/s, ms, packets, percent.
import { readFileSync } from 'node:fs';
import type { ChannelMetric } from '../channel-runtime.js';
import type { ProgressSample } from '../encode/ffmpeg-process.js';

export interface SamplerSources {
  /** the encoder on air, for its read counter */
  encoderPid(): number | undefined;
  /** bytes the ingest front received (push fronts), when it counts them */
  frontBytesIn(): number;
  packetsLost(): number;
  activeAlarms(): number;
  /** true while the slate is on air instead of the input */
  slateOnAir(): boolean;
}

export const SAMPLE_INTERVAL_MS = 5000;

function readBytes(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const m = /^rchar:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

export class ChannelSampler {
  private timer: NodeJS.Timeout | undefined;
  private last = Date.now();
  private bytesOut = 0;
  private dropped = 0;
  private lastDropTotal: number | undefined;
  private lastFrontBytes = 0;
  private lastLost = 0;
  private lastRead: { pid: number; bytes: number } | undefined;
  private fps = 0;
  private speed = 1;
  private fillMs = 0;
  private lastFillCheck = Date.now();

  constructor(private readonly sources: SamplerSources, private readonly emit: (metric: ChannelMetric, value: number) => void, private readonly intervalMs = SAMPLE_INTERVAL_MS) {}

  start(): void {
    this.last = Date.now();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One -progress block of the encoder on air. */
  progress(sample: ProgressSample): void {
    const fps = Number(sample.fps);
    if (Number.isFinite(fps)) this.fps = fps;
    const speed = Number.parseFloat(sample.speed ?? '');
    if (Number.isFinite(speed)) this.speed = speed;
    const drops = Number(sample.drop_frames);
    if (Number.isFinite(drops)) {
      // a new run starts counting from zero
      if (this.lastDropTotal !== undefined && drops >= this.lastDropTotal) this.dropped += drops - this.lastDropTotal;
      this.lastDropTotal = drops;
    }
  }

  /** The encoder's latest speed (1.0 = real time), for the benchmark. */
  get speedX(): number {
    return this.speed;
  }

  /** A new encoder run: its counters start over. */
  newRun(): void {
    this.lastDropTotal = undefined;
  }

  /** Bytes of a finished segment, or sent to a push destination. */
  output(bytes: number): void {
    this.bytesOut += bytes;
  }

  private accountFill(now: number): void {
    if (this.sources.slateOnAir()) this.fillMs += now - this.lastFillCheck;
    this.lastFillCheck = now;
  }

  sample(): void {
    const now = Date.now();
    const seconds = Math.max(0.001, (now - this.last) / 1000);
    this.last = now;
    this.accountFill(now);

    let bytesIn = this.sources.frontBytesIn() - this.lastFrontBytes;
    this.lastFrontBytes += bytesIn;
    if (bytesIn <= 0) {
      // pull inputs: what the encoder read (a new process starts its counter over)
      const pid = this.sources.encoderPid();
      const read = readBytes(pid);
      // a process first seen here started after the previous sample: all it read is new
      bytesIn = pid && read !== undefined ? Math.max(0, read - (this.lastRead?.pid === pid ? this.lastRead.bytes : 0)) : 0;
      this.lastRead = pid && read !== undefined ? { pid, bytes: read } : undefined;
    }
    const lost = this.sources.packetsLost();
    const values: Record<ChannelMetric, number> = {
      NETWORK_IN: (bytesIn * 8) / seconds / 1e6,
      NETWORK_OUT: (this.bytesOut * 8) / seconds / 1e6,
      DROPPED_FRAMES: this.dropped,
      ACTIVE_ALERTS: this.sources.activeAlarms(),
      INPUT_VIDEO_FRAME_RATE: this.sources.slateOnAir() ? 0 : this.fps,
      FILL_MS: this.fillMs,
      UDP_INPUT_LOSS: Math.max(0, lost - this.lastLost),
      // share of the interval the encoder could not keep real time (speed < 1)
      SVQ_TIME: Math.max(0, Math.min(100, (1 - this.speed) * 100)),
    };
    this.lastLost = lost;
    this.bytesOut = 0;
    this.dropped = 0;
    this.fillMs = 0;
    for (const [metric, value] of Object.entries(values) as Array<[ChannelMetric, number]>) this.emit(metric, Math.round(value * 1000) / 1000);
  }
}
