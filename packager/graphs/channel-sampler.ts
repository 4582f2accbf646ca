// The eight graph metrics of spec 4.2.12 for one channel, sampled every few seconds from ffmpeg's -progress output,
// the process's read counter (/proc/<pid>/io: what a pull input or a push front delivered) and the channel's own
// counters. Units follow the graphs endpoint: Mb/s, counts, frames/s, ms, packets, percent.
import { readFileSync } from 'node:fs';
import type { ChannelMetric } from '../../kernel/seams/channel-runtime.js';
import type { ProgressSample } from '../../media/ffmpeg-process.js';

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

/**
 * A segment's bytes were made over its duration, not at the instant it was closed. Counted when closed, 6 s segments
 * sampled every 5 s gave one sample in six no segment at all: a steady channel's NETWORK_OUT fell to 0 every 30 s
 * (issue 26). Each segment is spread over the time it covers, and the part of an interval its rendition has not
 * closed yet is counted at the rendition's latest rate (corrected by nothing: the next segment counts only its part
 * after the interval), so a steady channel draws a steady line.
 */
class SpreadOutput {
  private readonly streams = new Map<string, { spans: Array<{ startMs: number; endMs: number; bytesPerMs: number }>; coveredUntil: number; bytesPerMs: number; lastSeconds: number }>();
  /** bytes sent as they went (push destinations) */
  private instant = 0;

  segment(stream: string, bytes: number, seconds: number, endMs: number): void {
    const durationMs = Math.max(1, seconds * 1000);
    const bytesPerMs = bytes / durationMs;
    const state = this.streams.get(stream) ?? { spans: [], coveredUntil: endMs - durationMs, bytesPerMs, lastSeconds: seconds };
    state.spans.push({ startMs: endMs - durationMs, endMs, bytesPerMs });
    state.coveredUntil = Math.max(state.coveredUntil, endMs);
    state.bytesPerMs = bytesPerMs;
    state.lastSeconds = seconds;
    this.streams.set(stream, state);
  }

  sent(bytes: number): void {
    this.instant += bytes;
  }

  /** Bytes out within [fromMs, toMs]; what ends before toMs is forgotten. */
  take(fromMs: number, toMs: number): number {
    let bytes = this.instant;
    this.instant = 0;
    for (const [name, state] of this.streams) {
      for (const span of state.spans) bytes += Math.max(0, Math.min(span.endMs, toMs) - Math.max(span.startMs, fromMs)) * span.bytesPerMs;
      state.spans = state.spans.filter((span) => span.endMs > toMs);
      // not closed yet: at the latest rate, for at most two segment lengths (a rendition that stopped drops to 0)
      const tailFrom = Math.max(fromMs, state.coveredUntil);
      const tailTo = Math.min(toMs, state.coveredUntil + 2 * state.lastSeconds * 1000);
      if (tailTo > tailFrom) bytes += (tailTo - tailFrom) * state.bytesPerMs;
      if (state.spans.length === 0 && state.coveredUntil + 2 * state.lastSeconds * 1000 < fromMs) this.streams.delete(name);
    }
    return bytes;
  }
}

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
  private last: number;
  private readonly bytesOut = new SpreadOutput();
  private dropped = 0;
  private lastDropTotal: number | undefined;
  private lastFrontBytes = 0;
  private lastLost = 0;
  private lastRead: { pid: number; bytes: number } | undefined;
  private fps = 0;
  private speed = 1;
  private fillMs = 0;
  private lastFillCheck: number;

  constructor(
    private readonly sources: SamplerSources,
    private readonly emit: (metric: ChannelMetric, value: number) => void,
    private readonly intervalMs = SAMPLE_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {
    this.last = now();
    this.lastFillCheck = now();
  }

  start(): void {
    this.last = this.now();
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

  /** Bytes sent to a push destination, as they go. */
  output(bytes: number): void {
    this.bytesOut.sent(bytes);
  }

  /** A finished segment of a rendition: its bytes count over the `seconds` before now. */
  segment(renditionId: string, bytes: number, seconds: number): void {
    this.bytesOut.segment(renditionId, bytes, seconds, this.now());
  }

  private accountFill(now: number): void {
    if (this.sources.slateOnAir()) this.fillMs += now - this.lastFillCheck;
    this.lastFillCheck = now;
  }

  sample(): void {
    const now = this.now();
    const seconds = Math.max(0.001, (now - this.last) / 1000);
    const bytesOut = this.bytesOut.take(this.last, now);
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
      NETWORK_OUT: (bytesOut * 8) / seconds / 1e6,
      DROPPED_FRAMES: this.dropped,
      ACTIVE_ALERTS: this.sources.activeAlarms(),
      INPUT_VIDEO_FRAME_RATE: this.sources.slateOnAir() ? 0 : this.fps,
      FILL_MS: this.fillMs,
      UDP_INPUT_LOSS: Math.max(0, lost - this.lastLost),
      // share of the interval the encoder could not keep real time (speed < 1)
      SVQ_TIME: Math.max(0, Math.min(100, (1 - this.speed) * 100)),
    };
    this.lastLost = lost;
    this.dropped = 0;
    this.fillMs = 0;
    for (const [metric, value] of Object.entries(values) as Array<[ChannelMetric, number]>) this.emit(metric, Math.round(value * 1000) / 1000);
  }
}
