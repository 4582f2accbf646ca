// One run of a channel's ffmpeg (one input, or the slate): spawns it and reports each segment it finishes, read from
// ffmpeg's private playlists. A channel has one run at a time; a new run (restart, switch, slate) gets a new prefix.
import { copyFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import HLS from 'hls-parser';
import { encodedRenditions, type EncoderPlan } from './encoder-plan.js';
import { encoderArgs, privatePlaylist, type RunInput, type RunPaths } from './ffmpeg-args.js';
import { FfmpegProcess, type FfmpegExit, type ProgressSample } from '../../media/ffmpeg-process.js';

export interface FinishedSegment {
  renditionId: string;
  /** run prefix and index of the segment within the run: the same for every rendition */
  run: string;
  index: number;
  /** file name inside the channel's public dir */
  file: string;
  duration: number;
  /** fMP4 initialization section file, in the public dir */
  map?: string;
}

export interface EncoderRunOptions {
  ffmpegPath: string;
  plan: EncoderPlan;
  input: RunInput;
  paths: RunPaths;
  /** start of this run's timestamps on the channel timeline (seconds) */
  tsOffsetSec?: number;
  onSegment(segment: FinishedSegment): void;
  onProgress?(sample: ProgressSample): void;
}

const POLL_MS = 200;

export class EncoderRun {
  readonly process: FfmpegProcess;
  readonly exited: Promise<FfmpegExit>;
  readonly kind: RunInput['kind'];
  segments = 0;
  /** seconds of media of the first rendition this run finished */
  produced = 0;
  readonly tsOffsetSec: number;
  lastSegmentAt = Date.now();
  readonly startedAt = Date.now();
  private readonly seen = new Map<string, number>();
  private readonly copiedMaps = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(private readonly options: EncoderRunOptions) {
    this.kind = options.input.kind;
    this.tsOffsetSec = options.tsOffsetSec ?? 0;
    this.process = new FfmpegProcess({
      bin: options.ffmpegPath,
      args: encoderArgs(options.plan, options.input, options.paths, options.tsOffsetSec),
      pidFile: path.join(options.paths.workDir, `${options.paths.prefix}.pid`),
      // the reason of a run that failed, bounded: it goes into logs and alarms
      tailLines: 8,
      tailChars: 1500,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.exited = this.process.exited.then(async (exit) => {
      clearInterval(this.timer);
      await this.poll(); // segments finished right before the exit still count
      return exit;
    });
  }

  get prefix(): string {
    return this.options.paths.prefix;
  }

  /** Ends the run cleanly: the segment in progress is finished and reported before `exited` resolves. */
  async finish(graceMs = 3000): Promise<FfmpegExit> {
    return this.process.finish(graceMs).then(() => this.exited);
  }

  async kill(): Promise<FfmpegExit> {
    clearInterval(this.timer);
    return this.process.kill();
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      for (const rendition of encodedRenditions(this.options.plan)) await this.pollRendition(rendition.id);
    } finally {
      this.polling = false;
    }
  }

  private async pollRendition(renditionId: string): Promise<void> {
    const text = await readFile(privatePlaylist(this.options.paths, renditionId), 'utf8').catch(() => undefined);
    if (!text) return;
    let playlist: ReturnType<typeof HLS.parse>;
    try {
      playlist = HLS.parse(text);
    } catch {
      return; // caught mid-write: the next poll reads it whole
    }
    if (playlist.isMasterPlaylist) return;
    const last = this.seen.get(renditionId) ?? -1;
    for (const segment of playlist.segments) {
      if (segment.mediaSequenceNumber <= last) continue;
      this.seen.set(renditionId, segment.mediaSequenceNumber);
      const file = path.basename(segment.uri);
      let map: string | undefined;
      if (segment.map?.uri) {
        map = path.basename(segment.map.uri);
        if (!this.copiedMaps.has(map)) {
          // ffmpeg writes the init section next to its playlist (the private dir): publish it once
          await copyFile(path.join(this.options.paths.workDir, map), path.join(this.options.paths.publicDir, map)).catch(() => undefined);
          this.copiedMaps.add(map);
        }
      }
      if (renditionId === this.options.plan.renditions[0]?.id) {
        this.segments += 1;
        this.produced += segment.duration;
        this.lastSegmentAt = Date.now();
      }
      this.options.onSegment({ renditionId, run: this.prefix, index: segment.mediaSequenceNumber, file, duration: segment.duration, ...(map ? { map } : {}) });
    }
  }
}
