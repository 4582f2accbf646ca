// Spec 3.3 archives: while the channel runs, every finished segment of the archived rendition is kept (a hard link, so
// the live window may delete its copy); at the last step of stopping they are merged into one MP4 in the media store.
// One pipeline runs per channel, so the raw segments sit under `0/` (the first pipeline's name-modifier prefix).
// fMP4 segments are kept with their run's initialization section (they cannot be read without it).
//
// A channel can have several encoder runs (slate then a push sender, a restart, an input switch): each run's timestamps
// and AAC priming start over, so the segments of different runs cannot simply be concatenated (the concat demuxer
// lines files up by their earliest stream, which leaves a gap in the video where runs join and an audio overlap). Each
// run is therefore merged on its own into a video and an audio file, and the runs are joined stream by stream: the
// video goes on exactly where the previous run's video ended, and each run's audio starts where it belongs against
// its own video (the previous run's audio tail is cut on an AAC frame boundary to make room). All stream copy.
import { appendFileSync, createReadStream, createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { appendFile, copyFile, link, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { execTool } from '../../media/exec-tool.js';
import { diskFullReason, isDiskFull, volumeFull } from '../../kernel/core/disk-full.js';

export interface ArchiveResult {
  /** file inside the media store (DATA_DIR/media/archives/…) */
  file: string;
  /** path relative to DATA_DIR/media */
  relativePath: string;
  segments: number;
  seconds: number;
  /** where the channel was off air (its packager gone, say): the merged file joins the runs, the hole is listed here */
  gaps: ArchiveGap[];
}

/**
 * A hole in the recording. The merge joins the runs on either side back to back (an MP4 has no "nothing here"), so
 * the hole is not in the file's timeline: it is listed with the archive (its `.json` beside it, the VOD's custom_data).
 */
export interface ArchiveGap {
  /** seconds into the merged archive where the hole is */
  atSeconds: number;
  /** how long the channel was off air */
  seconds: number;
  /** wall clock (ISO 8601) of the hole's start and end */
  from: string;
  to: string;
  reason: string;
}

export interface ArchiveRecorderOptions {
  dataDir: string;
  workflowId: string;
  ffmpegPath: string;
  ffprobePath: string;
}

interface KeptSegment {
  /** file name in the raw dir: `<index>_<run>.<ext>` (`<index>.<ext>` when kept by an engine that did not name runs) */
  name: string;
  /** the encoder run (`r2`) that wrote it: segments of one run share one clock */
  run: string;
  duration: number;
}

/** One encoder run merged on its own, as the join needs it. */
interface MergedRun {
  video: string;
  audio: string;
  /** where the run's video starts after its audio (s): the AAC priming, kept so each run stays in sync */
  videoLead: number;
  videoSeconds: number;
  /** one AAC frame (s): the previous run's audio is cut on a frame boundary */
  audioFrameSeconds: number;
}

// the index keeps names in recording order; the run name is the encoder run's file prefix
const KEPT_NAME = /^(\d{6})(?:_([A-Za-z0-9]+))?\.[A-Za-z0-9]+$/;
// an fMP4 run's initialization section, kept once per run (its segments cannot be read without it)
const KEPT_INIT = /^init_([A-Za-z0-9]+)\.mp4$/;

/** One line of the recording's journal (archive-work/<id>/journal.jsonl): a resumed channel reads durations and gaps back. */
type JournalLine = { segment: string; duration: number } | { gap: ArchiveGap };

export class ArchiveRecorder {
  private readonly rawDir: string;
  private readonly journal: string;
  private readonly segments: KeptSegment[] = [];
  private readonly gaps: ArchiveGap[] = [];
  /** run → its kept fMP4 initialization section (MPEG-TS runs have none) */
  private readonly inits = new Map<string, string>();
  private ready: Promise<unknown>;

  constructor(private readonly options: ArchiveRecorderOptions) {
    this.rawDir = path.join(options.dataDir, 'archive-work', options.workflowId, '0');
    this.journal = path.join(path.dirname(this.rawDir), 'journal.jsonl');
    this.ready = mkdir(this.rawDir, { recursive: true });
    // a channel resumed after an engine restart keeps what it recorded before, run boundaries included (in the names),
    // durations and gaps (in the journal)
    const durations = new Map<string, number>();
    try {
      const text = readFileSync(this.journal, 'utf8');
      // a line cut short (a crash, a full disk) is ended here, so the next one is not glued to it
      if (text && !text.endsWith('\n')) appendFileSync(this.journal, '\n');
      for (const line of text.split('\n')) {
        if (!line) continue;
        try {
          const entry = JSON.parse(line) as JournalLine;
          if ('gap' in entry) this.gaps.push(entry.gap);
          else durations.set(entry.segment, entry.duration);
        } catch {
          /* a line cut short by a crash or a full disk */
        }
      }
    } catch {
      /* first start, or an engine that kept no journal */
    }
    try {
      for (const name of readdirSync(this.rawDir).sort()) {
        const match = KEPT_NAME.exec(name);
        if (match) this.segments.push({ name, run: match[2] ?? '', duration: durations.get(name) ?? 0 });
        const init = KEPT_INIT.exec(name);
        if (init) this.inits.set(init[1]!, name);
      }
    } catch {
      /* first start */
    }
  }

  /** Lists a hole where the channel was off air; it goes with the merged archive. */
  async recordGap(gap: Omit<ArchiveGap, 'atSeconds'>): Promise<ArchiveGap> {
    await this.ready;
    const recorded = { atSeconds: Math.round(this.recordedSeconds * 1000) / 1000, ...gap };
    this.gaps.push(recorded);
    await appendFile(this.journal, `${JSON.stringify({ gap: recorded } satisfies JournalLine)}\n`);
    return recorded;
  }

  /**
   * Keeps one finished segment (`file` in the channel's public dir) of encoder run `run` (its file prefix, `r2`);
   * `initSection`: the fMP4 initialization section the segment needs (in the public dir), kept once per run.
   */
  async record(file: string, duration: number, run: string, initSection?: string): Promise<void> {
    await this.ready;
    const runName = run.replace(/[^A-Za-z0-9]/g, '');
    if (initSection && !this.inits.has(runName)) {
      const initName = `init_${runName}.mp4`;
      await keep(initSection, path.join(this.rawDir, initName));
      this.inits.set(runName, initName);
    }
    const name = `${String(this.segments.length).padStart(6, '0')}_${runName}${path.extname(file)}`;
    await keep(file, path.join(this.rawDir, name));
    this.segments.push({ name, run: runName, duration });
    await appendFile(this.journal, `${JSON.stringify({ segment: name, duration } satisfies JournalLine)}\n`);
  }

  /** the holes listed so far */
  get listedGaps(): readonly ArchiveGap[] {
    return this.gaps;
  }

  get recordedSeconds(): number {
    return this.segments.reduce((sum, s) => sum + s.duration, 0);
  }

  /** Merges what was recorded into one MP4 (stream copy); undefined when nothing was recorded. */
  async finish(): Promise<ArchiveResult | undefined> {
    await this.ready;
    try {
      if (this.segments.length === 0) return undefined;
      const relativePath = path.posix.join('archives', `${this.options.workflowId}.mp4`);
      const file = path.join(this.options.dataDir, 'media', relativePath);
      await mkdir(path.dirname(file), { recursive: true });
      const partial = `${file}.partial`;
      const record = `${file.slice(0, -path.extname(file).length)}.json`;
      const seconds = this.recordedSeconds;
      const gaps = [...this.gaps];
      try {
        const runs = consecutiveRuns(this.segments);
        if (runs.length === 1) await this.mergeOneRun(runs[0]!, partial, 'run-0');
        else await this.joinRuns(runs, partial);
        // the record of what the archive holds, and of the holes it does not show, beside it (served with it on /media)
        await writeFile(`${record}.partial`, JSON.stringify({ workflowId: this.options.workflowId, segments: this.segments.length, seconds, gaps }, null, 2));
        await rename(`${record}.partial`, record);
        await rename(partial, file);
      } catch (error) {
        // A full disk does not always say so: ffmpeg may end a cut-short MP4 without ENOSPC on stderr, and the next step
        // reads "moov atom not found". The volume is asked before the partial files are removed (which frees space).
        const full = isDiskFull(error) || volumeFull(this.rawDir) || volumeFull(path.dirname(file));
        // nothing half-written stays under a name that says complete (a full disk cuts the merge short)
        await Promise.all([rm(partial, { force: true }), rm(`${record}.partial`, { force: true }), rm(record, { force: true })]);
        if (full) throw new Error(diskFullReason('the archive'), { cause: error });
        throw error;
      }
      return { file, relativePath, segments: this.segments.length, seconds, gaps };
    } finally {
      await rm(path.dirname(this.rawDir), { recursive: true, force: true });
    }
  }

  /** Drops what was recorded (a failed start). */
  async discard(): Promise<void> {
    await this.ready;
    await rm(path.dirname(this.rawDir), { recursive: true, force: true });
  }

  /** One run: its segments share one clock, so they are read as they were written. */
  private async mergeOneRun(segments: KeptSegment[], output: string, name: string): Promise<void> {
    const input = await this.runInput(segments, name);
    await this.ffmpeg([...input.args, '-map', '0', '-c', 'copy', '-bsf:a', 'aac_adtstoasc', '-movflags', '+faststart', '-f', 'mp4', output]);
  }

  /**
   * How ffmpeg reads one run: MPEG-TS segments through the concat demuxer; fMP4 segments as one file, the run's
   * initialization section then its fragments byte after byte (what the HLS muxer wrote: one fragmented MP4).
   * `probe`: a file holding the run's first packets.
   */
  private async runInput(segments: KeptSegment[], name: string): Promise<{ args: string[]; probe: string }> {
    const init = this.inits.get(segments[0]!.run);
    if (!init) {
      const list = path.join(this.rawDir, `${name}.txt`);
      await writeFile(list, concatList(segments.map((s) => ({ file: s.name }))));
      return { args: ['-f', 'concat', '-safe', '0', '-i', list], probe: path.join(this.rawDir, segments[0]!.name) };
    }
    const joined = path.join(this.rawDir, `${name}.fragmented.mp4`);
    await copyFile(path.join(this.rawDir, init), joined);
    for (const segment of segments) await pipeline(createReadStream(path.join(this.rawDir, segment.name)), createWriteStream(joined, { flags: 'a' }));
    return { args: ['-i', joined], probe: joined };
  }

  private async joinRuns(runs: KeptSegment[][], output: string): Promise<void> {
    const merged: MergedRun[] = [];
    for (const [i, segments] of runs.entries()) merged.push(await this.mergeRunByStream(segments, `run-${i}`));
    // output timeline (s): video of run i starts at videoAt[i], its audio at videoAt[i] - videoLead
    const first = merged[0]!;
    const videoOrigin = Math.max(0, first.videoLead);
    const audioOrigin = Math.max(0, -first.videoLead);
    const videoEntries: ConcatEntry[] = [];
    const audioEntries: ConcatEntry[] = [];
    let videoAt = videoOrigin;
    let audioAt = audioOrigin;
    merged.forEach((run, i) => {
      const next = merged[i + 1];
      if (!next) {
        videoEntries.push({ file: run.video });
        audioEntries.push({ file: run.audio });
        return;
      }
      videoEntries.push({ file: run.video, duration: run.videoSeconds });
      const nextVideoAt = videoAt + run.videoSeconds;
      const nextAudioAt = Math.max(audioAt, nextVideoAt - next.videoLead);
      const room = nextAudioAt - audioAt;
      // the concat demuxer drops packets from `outpoint` on: cut on the last whole frame that fits, so no audio frame
      // of this run runs into the next run's first one (a gap of less than a frame instead)
      const outpoint = Math.floor(room / run.audioFrameSeconds) * run.audioFrameSeconds;
      audioEntries.push({ file: run.audio, outpoint, duration: room });
      videoAt = nextVideoAt;
      audioAt = nextAudioAt;
    });
    const videoList = path.join(this.rawDir, 'video.txt');
    const audioList = path.join(this.rawDir, 'audio.txt');
    await writeFile(videoList, concatList(videoEntries));
    await writeFile(audioList, concatList(audioEntries));
    const offset = (seconds: number): string[] => (seconds > 0 ? ['-itsoffset', seconds.toFixed(6)] : []);
    await this.ffmpeg([
      ...offset(videoOrigin), '-f', 'concat', '-safe', '0', '-i', videoList,
      ...offset(audioOrigin), '-f', 'concat', '-safe', '0', '-i', audioList,
      '-map', '0:v:0', '-map', '1:a:0', '-c', 'copy', '-movflags', '+faststart', '-f', 'mp4', output,
    ]);
  }

  /**
   * The segments of one run as a video-only and an audio-only MP4, each starting at 0 (so its length is exactly its
   * frames, with no edit list), and what the join needs to know of them. Every run has one video and one audio stream:
   * the channel's encoder always writes both (the slate's sound is silence).
   */
  private async mergeRunByStream(segments: KeptSegment[], name: string): Promise<MergedRun> {
    const input = await this.runInput(segments, name);
    const video = path.join(this.rawDir, `${name}.video.mp4`);
    const audio = path.join(this.rawDir, `${name}.audio.mp4`);
    await this.ffmpeg([
      ...input.args,
      '-map', '0:v:0', '-c', 'copy', '-avoid_negative_ts', 'make_zero', '-f', 'mp4', video,
      '-map', '0:a:0', '-c', 'copy', '-bsf:a', 'aac_adtstoasc', '-avoid_negative_ts', 'make_zero', '-f', 'mp4', audio,
    ]);
    const starts = await this.ffprobe(['-show_entries', 'stream=codec_type,start_time', input.probe]);
    const startOf = (type: string): number => Number(starts.streams?.find((s) => s.codec_type === type)?.start_time ?? 0);
    const videoStream = await this.ffprobe(['-show_entries', 'stream=duration', video]);
    const firstAudio = await this.ffprobe(['-read_intervals', '%+#1', '-show_entries', 'packet=duration_time', audio]);
    return {
      video, audio,
      videoLead: startOf('video') - startOf('audio'),
      videoSeconds: Number(videoStream.streams?.[0]?.duration ?? 0),
      audioFrameSeconds: Number(firstAudio.packets?.[0]?.duration_time ?? 1024 / 48_000),
    };
  }

  private async ffmpeg(args: string[]): Promise<void> {
    await runTool(this.options.ffmpegPath, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...args], 'the archive could not be merged');
  }

  private async ffprobe(args: string[]): Promise<ProbeAnswer> {
    const stdout = await runTool(this.options.ffprobePath, ['-v', 'error', '-of', 'json', ...args], 'an archived run could not be read');
    return JSON.parse(stdout) as ProbeAnswer;
  }
}

interface ProbeAnswer {
  streams?: Array<{ codec_type?: string; start_time?: string; duration?: string }>;
  packets?: Array<{ duration_time?: string }>;
}

interface ConcatEntry {
  file: string;
  /** seconds of the file that are used (packets from here on are dropped) */
  outpoint?: number;
  /** where the next file starts, after this one's start (s) */
  duration?: number;
}

/** The concat demuxer's list; times in whole microseconds, rounded down (an outpoint never lets one more frame in). */
function concatList(entries: ConcatEntry[]): string {
  const seconds = (value: number): string => (Math.floor(value * 1e6) / 1e6).toFixed(6);
  return entries.map((e) => [
    `file '${e.file.replace(/'/g, "'\\''")}'`,
    ...(e.outpoint !== undefined ? [`outpoint ${seconds(e.outpoint)}`] : []),
    ...(e.duration !== undefined ? [`duration ${seconds(e.duration)}`] : []),
  ].join('\n')).join('\n') + '\n';
}

/** Kept segments in recording order, split where the encoder run changes. */
function consecutiveRuns(segments: KeptSegment[]): KeptSegment[][] {
  const runs: KeptSegment[][] = [];
  for (const segment of segments) {
    const current = runs.at(-1);
    if (current && current[0]!.run === segment.run) current.push(segment);
    else runs.push([segment]);
  }
  return runs;
}

/** A hard link (the live window may delete the public copy), or a copy where links are not possible. */
async function keep(file: string, target: string): Promise<void> {
  await link(file, target).catch(() => copyFile(file, target));
}

/** The tool's stdout; a failure names `failure` with the tail of its stderr. */
async function runTool(tool: string, args: string[], failure: string): Promise<string> {
  const out = await execTool(tool, args, 15 * 60_000);
  if (out.exitCode !== 0) throw new Error(`${failure}: ${out.stderr.trim().slice(-500)}`);
  return out.stdout;
}
