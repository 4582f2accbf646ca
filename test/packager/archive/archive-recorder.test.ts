// The archive of a channel whose encoder ran twice (the slate, then a push sender; a restart; a switch): the second
// run's clock and AAC priming start over and its first segment carries the MPEG-TS discontinuity indicator. The merged
// MP4 must play as one: video frames evenly spaced across the join, audio never running back or into itself, nothing
// lost, and ffmpeg decoding it without a warning. The runs are written by the channel's own ffmpeg arguments.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import HLS from 'hls-parser';
import { ArchiveRecorder } from '../../../packager/archive/archive-recorder.js';
import type { EncoderPlan } from '../../../packager/encode/encoder-plan.js';
import { encoderArgs, privatePlaylist, type RunPaths } from '../../../packager/encode/ffmpeg-args.js';

const FFMPEG = process.env.FFMPEG_PATH ?? 'ffmpeg';
const FFPROBE = process.env.FFPROBE_PATH ?? 'ffprobe';
const FPS = 15;

const planFor = (segmentType: 'ts' | 'fmp4'): EncoderPlan => ({
  renditions: [{ id: 'archive', width: 160, height: 90, videoBitrate: 150_000, profile: 'main', frameRate: FPS, gopFrames: FPS, audioBitrate: 64_000, audioSampleRate: 48_000, audioChannels: 2 }],
  hls: { destinationId: 'hls', segmentSeconds: 1, segmentType },
  archiveRenditionId: 'archive',
  rtmp: [],
});

function run(tool: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(tool, args, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => (error ? reject(new Error(`${tool} failed: ${stderr}`)) : resolve({ stdout, stderr })));
  });
}

interface EncodedRun {
  prefix: string;
  /** `initSection`: the fMP4 initialization section */
  segments: Array<{ file: string; duration: number; initSection?: string }>;
  seconds: number;
}

/** One encoder run of `seconds` of test picture and tone, its timestamps starting at `tsOffsetSec` like the supervisor's. */
async function encodeRun(dir: string, plan: EncoderPlan, prefix: string, seconds: number, tsOffsetSec: number): Promise<EncodedRun> {
  const paths: RunPaths = { publicDir: dir, workDir: dir, prefix };
  const input = ['-f', 'lavfi', '-i', `testsrc2=size=320x180:rate=25:duration=${seconds}[out0];sine=frequency=440:sample_rate=44100:duration=${seconds}[out1]`];
  await run(FFMPEG, encoderArgs(plan, { kind: 'input', args: input }, paths, tsOffsetSec));
  const playlist = HLS.parse(fs.readFileSync(privatePlaylist(paths, 'archive'), 'utf8'));
  if (playlist.isMasterPlaylist) throw new Error('expected a media playlist');
  const segments = playlist.segments.map((s) => ({
    file: path.join(dir, path.basename(s.uri)), duration: s.duration, ...(s.map?.uri ? { initSection: path.join(dir, path.basename(s.map.uri)) } : {}),
  }));
  return { prefix, segments, seconds: segments.reduce((sum, s) => sum + s.duration, 0) };
}

/** Two runs as the supervisor writes them: the next one starts half a second after the highest timestamp written. */
async function encodeTwoRuns(dir: string, plan: EncoderPlan): Promise<EncodedRun[]> {
  fs.mkdirSync(dir, { recursive: true });
  const first = await encodeRun(dir, plan, 'r1', 3, 0);
  return [first, await encodeRun(dir, plan, 'r2', 2.5, first.seconds + 0.5)];
}

async function packets(file: string, stream: 'v' | 'a'): Promise<Array<{ pts: number; dts: number; duration: number }>> {
  const { stdout } = await run(FFPROBE, ['-v', 'error', '-select_streams', `${stream}:0`, '-show_entries', 'packet=pts_time,dts_time,duration_time', '-of', 'csv=p=0', file]);
  return stdout.trim().split('\n').map((line) => {
    const [pts, dts, duration] = line.split(',').map(Number);
    return { pts: pts!, dts: dts!, duration: duration! };
  });
}

describe('archive recorder', () => {
  let dir: string;
  let runs: EncodedRun[];
  let fragmentedRuns: EncodedRun[];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-recorder-'));
    runs = await encodeTwoRuns(path.join(dir, 'ts'), planFor('ts'));
    // the second run starts over: its first packets carry the discontinuity indicator (the join this test is about)
    expect(runs[1]!.segments[0]!.file).toMatch(/r2_archive_00000\.ts$/);
    fragmentedRuns = await encodeTwoRuns(path.join(dir, 'fmp4'), planFor('fmp4'));
    expect(fragmentedRuns[1]!.segments[0]).toMatchObject({ file: expect.stringMatching(/r2_archive_00000\.m4s$/), initSection: expect.stringMatching(/r2_.*init\.mp4$/) });
  }, 60_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function expectOneClean(file: string, encoded: EncodedRun[]): Promise<void> {
    const { stderr } = await run(FFMPEG, ['-v', 'warning', '-nostdin', '-i', file, '-f', 'null', '-']);
    expect(stderr).toBe('');

    const recorded = encoded.reduce((sum, r) => sum + r.seconds, 0);
    const { stdout } = await run(FFPROBE, ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file]);
    // ± 0.1 s per join (one at most here)
    expect(Math.abs(Number(stdout) - recorded), `archive ${stdout.trim()} s, runs ${recorded} s`).toBeLessThanOrEqual(0.1);

    const video = await packets(file, 'v');
    expect(video).toHaveLength(Math.round(recorded * FPS));
    for (let i = 1; i < video.length; i += 1) {
      // one frame apart everywhere, the join included (± 1 ms of rounding)
      expect(video[i]!.dts - video[i - 1]!.dts, `video frame ${i} at ${video[i]!.dts} s`).toBeCloseTo(1 / FPS, 3);
    }
    const audio = await packets(file, 'a');
    for (let i = 1; i < audio.length; i += 1) {
      const gap = audio[i]!.dts - audio[i - 1]!.dts;
      // increasing, and never by more than two AAC frames (a join may leave less than one frame of silence)
      expect(gap, `audio packet ${i} at ${audio[i]!.dts} s`).toBeGreaterThan(0);
      expect(gap, `audio packet ${i} at ${audio[i]!.dts} s`).toBeLessThan((2 * 1024) / 48_000);
    }
    // both streams cover the whole archive
    expect(Math.abs(audio.at(-1)!.pts + audio.at(-1)!.duration - (video.at(-1)!.pts + 1 / FPS))).toBeLessThan(0.1);
  }

  it('joins two encoder runs into one MP4 whose video and audio go on across the join', { timeout: 60_000 }, async () => {
    const dataDir = path.join(dir, 'data-joined');
    const recorder = new ArchiveRecorder({ dataDir, workflowId: 'wf-joined', ffmpegPath: FFMPEG, ffprobePath: FFPROBE });
    for (const r of runs) for (const s of r.segments) await recorder.record(s.file, s.duration, r.prefix);
    const result = await recorder.finish();
    expect(result).toMatchObject({ relativePath: 'archives/wf-joined.mp4', segments: runs[0]!.segments.length + runs[1]!.segments.length });
    expect(result!.seconds).toBeCloseTo(runs[0]!.seconds + runs[1]!.seconds, 3);
    await expectOneClean(result!.file, runs);
    // the raw segments are gone, the channel's own segments stay
    expect(fs.existsSync(path.join(dataDir, 'archive-work', 'wf-joined'))).toBe(false);
    expect(fs.existsSync(runs[0]!.segments[0]!.file)).toBe(true);
  });

  it('keeps the run boundaries of a channel resumed after an engine restart (a new recorder reads them from disk)', { timeout: 60_000 }, async () => {
    const dataDir = path.join(dir, 'data-resumed');
    const before = new ArchiveRecorder({ dataDir, workflowId: 'wf-resumed', ffmpegPath: FFMPEG, ffprobePath: FFPROBE });
    for (const s of runs[0]!.segments) await before.record(s.file, s.duration, runs[0]!.prefix);
    const after = new ArchiveRecorder({ dataDir, workflowId: 'wf-resumed', ffmpegPath: FFMPEG, ffprobePath: FFPROBE });
    for (const s of runs[1]!.segments) await after.record(s.file, s.duration, runs[1]!.prefix);
    const result = await after.finish();
    expect(result?.segments).toBe(runs[0]!.segments.length + runs[1]!.segments.length);
    await expectOneClean(result!.file, runs);
  });

  it('merges the fMP4 segments of one run with their initialization section', { timeout: 60_000 }, async () => {
    const recorder = new ArchiveRecorder({ dataDir: path.join(dir, 'data-fmp4-one'), workflowId: 'wf-fmp4-one', ffmpegPath: FFMPEG, ffprobePath: FFPROBE });
    const only = fragmentedRuns[0]!;
    for (const s of only.segments) await recorder.record(s.file, s.duration, only.prefix, s.initSection);
    const result = await recorder.finish();
    await expectOneClean(result!.file, [only]);
  });

  it('joins two fMP4 runs, each with its own initialization section, across an engine restart', { timeout: 60_000 }, async () => {
    const dataDir = path.join(dir, 'data-fmp4-joined');
    const before = new ArchiveRecorder({ dataDir, workflowId: 'wf-fmp4', ffmpegPath: FFMPEG, ffprobePath: FFPROBE });
    for (const s of fragmentedRuns[0]!.segments) await before.record(s.file, s.duration, fragmentedRuns[0]!.prefix, s.initSection);
    const after = new ArchiveRecorder({ dataDir, workflowId: 'wf-fmp4', ffmpegPath: FFMPEG, ffprobePath: FFPROBE });
    for (const s of fragmentedRuns[1]!.segments) await after.record(s.file, s.duration, fragmentedRuns[1]!.prefix, s.initSection);
    const result = await after.finish();
    await expectOneClean(result!.file, fragmentedRuns);
  });
});
