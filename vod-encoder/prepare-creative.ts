// Ad creatives and slates as HLS renditions in the shape of the content they replace (issue 19 point 1): its container
// (MPEG-TS or fMP4 segments), muxed or demuxed audio, H.264 profile/level, sizes, bitrates, frame rate, audio rate and
// channels, segment duration; so the SSAI proxy can stitch them without decoder surprises. Cached on disk by creative
// id + URL + shape.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile, access } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Parser } from 'm3u8-parser';
import type { Logger } from 'pino';
import { Agent, interceptors, request } from 'undici';
import { failure, type VodResult } from './errors.js';
import { ffmpegOnce } from './ffmpeg-runner.js';
import type { Ladder, Rung } from './ladder.js';
import { probeMedia } from './probe.js';

export type H264Profile = 'baseline' | 'main' | 'high';
/** A content rendition: its size and bitrate, and the H.264 profile and level its CODECS names (default High, level auto). */
export type TargetRung = Rung & { profile?: H264Profile; level?: string };
/**
 * The content's ladder and shape: what every creative rendition must match (the encoder's Ladder plus the container
 * and audio layout). Absent fields mean the encoder's own output: fMP4 segments, demuxed audio, High profile.
 */
export type TargetLadder = Omit<Ladder, 'rungs'> & {
  rungs: TargetRung[];
  /** segment container of the content: MPEG-TS segments, or fMP4 behind an EXT-X-MAP (default) */
  container?: 'ts' | 'fmp4';
  /** audio muxed into each video segment (content without a separate audio rendition) */
  muxedAudio?: boolean;
};

export interface PreparedSegment {
  /** Relative to the creative's `dir`, POSIX separators. */
  path: string;
  duration: number;
}
export interface PreparedRendition {
  width: number;
  height: number;
  bandwidth: number;
  playlistPath: string;
  segments: PreparedSegment[];
  initSegment?: string;
}
export interface PreparedAudio {
  bandwidth: number;
  sampleRate: number;
  channels: number;
  playlistPath: string;
  segments: PreparedSegment[];
  initSegment?: string;
}
export interface PreparedCreative {
  creativeKey: string;
  /** Absolute directory holding master.m3u8 and the renditions. */
  dir: string;
  masterPath: string;
  /** Exact video duration: frames / frame rate. */
  durationSec: number;
  renditions: PreparedRendition[];
  /** The demuxed audio rendition (GROUP-ID "aud") every video rendition points at; absent when the audio is muxed. */
  audioOnly?: PreparedAudio;
  /** MPEG-TS or fMP4 segments (absent in results cached before issue 19: fMP4). */
  container?: 'ts' | 'fmp4';
  /** the audio is in every video rendition's segments */
  muxedAudio?: boolean;
  /** True when served from the cache without running ffmpeg. */
  cached: boolean;
}

export interface PrepareOptions {
  cacheDir: string;
  creativeId?: string;
  fetchTimeoutMs?: number;
  /** Largest accepted media file. */
  maxBytes?: number;
  preset?: string;
  logger?: Logger;
  /** Stops the download and ffmpeg (the worker's job signal: the queue is closing). */
  signal?: AbortSignal;
}

const RESULT_FILE = 'creative.json';
const inFlight = new Map<string, Promise<VodResult<PreparedCreative>>>();
const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const exists = (f: string): Promise<boolean> => access(f).then(() => true, () => false);

/** Cache key: creative id + media file URL hash + ladder hash, its shape included (one creative serves several contents). */
/**
 * The version of how creatives are encoded, in their key: a change that players see (2: no B-frames, whose offset left
 * a hole after each ad) prepares every creative again instead of serving the ones cached on disk before it.
 */
const CREATIVE_ENCODING = 2;

export function creativeKey(creativeId: string, mediaFileUrl: string, ladder: TargetLadder): string {
  const id = creativeId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'creative';
  return `${id}-${sha(mediaFileUrl).slice(0, 16)}-${sha(JSON.stringify(ladder) + CREATIVE_ENCODING).slice(0, 8)}`;
}

async function download(url: string, file: string, timeoutMs: number, maxBytes: number, signal?: AbortSignal): Promise<VodResult<void>> {
  const agent = new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs }).compose(interceptors.redirect({ maxRedirections: 5 }));
  try {
    const timeout = AbortSignal.timeout(timeoutMs);
    const res = await request(url, { dispatcher: agent, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    if (res.statusCode !== 200) {
      await res.body.dump();
      return failure('VOD_CREATIVE_FETCH_FAILED', `GET ${url} answered ${res.statusCode}`);
    }
    const length = Number(res.headers['content-length'] ?? 0);
    if (length > maxBytes) {
      await res.body.dump();
      return failure('VOD_CREATIVE_FETCH_FAILED', `media file is ${length} bytes, over the ${maxBytes} limit`);
    }
    let seen = 0;
    // Counts as it streams: a missing or lying content-length cannot fill the disk.
    await pipeline(res.body, async function* limit(source: AsyncIterable<Buffer>) {
      for await (const chunk of source) {
        seen += chunk.length;
        if (seen > maxBytes) throw new Error(`media file over the ${maxBytes} byte limit`);
        yield chunk;
      }
    }, createWriteStream(file));
    return { ok: true, value: undefined };
  } catch (e) {
    return failure('VOD_CREATIVE_FETCH_FAILED', `GET ${url}: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    await agent.close();
  }
}

async function readPlaylist(dir: string, rel: string): Promise<{ segments: PreparedSegment[]; initSegment?: string }> {
  const p = new Parser();
  p.push(await readFile(path.join(dir, rel), 'utf8'));
  p.end();
  const base = path.posix.dirname(rel);
  const init = p.manifest.segments[0]?.map?.uri;
  return {
    segments: p.manifest.segments.map((s) => ({ path: path.posix.join(base, s.uri), duration: s.duration })),
    ...(init ? { initSegment: path.posix.join(base, init) } : {}),
  };
}

interface TranscodeInput {
  /** ffmpeg input arguments (e.g. `-i file`, or `-loop 1 -i image -f lavfi -i anullsrc`). */
  inputArgs: string[];
  /** Audio input label for the filter graph, e.g. `0:a:0` or `1:a:0`. */
  audioInput: string;
  durationSec: number;
}

/** One ffmpeg run: fps-locked, letterboxed renditions cut to a whole frame count, audio padded/trimmed to match. */
async function transcode(input: TranscodeInput, ladder: TargetLadder, dir: string, preset: string, signal?: AbortSignal): Promise<VodResult<void>> {
  const fps = ladder.frameRate;
  const frames = Math.max(1, Math.round(input.durationSec * fps));
  const samples = Math.round((frames / fps) * ladder.audioSampleRate);
  const n = ladder.rungs.length;
  const split = ladder.rungs.map((_, i) => `[s${i}]`).join('');
  const filter = [
    `[0:v:0]fps=${fps},trim=end_frame=${frames},setpts=PTS-STARTPTS,split=${n}${split}`,
    ...ladder.rungs.map((r, i) => `[s${i}]scale=${r.width}:${r.height}:force_original_aspect_ratio=decrease,`
      + `pad=${r.width}:${r.height}:(ow-iw)/2:(oh-ih)/2,setsar=1,format=yuv420p[v${i}]`),
    // apad then atrim to the exact sample count of the video's frames: audio and video end together.
    `[${input.audioInput}]aresample=${ladder.audioSampleRate},apad,atrim=end_sample=${samples},asetpts=PTS-STARTPTS[aout]`,
  ];
  const muxed = ladder.muxedAudio === true;
  const ts = ladder.container === 'ts';
  // Muxed: one copy of the audio per video rendition, each in that rendition's segments.
  if (muxed) filter.push(`[aout]asplit=${n}${ladder.rungs.map((_, i) => `[a${i}]`).join('')}`);
  const args = [...input.inputArgs, '-v', 'error', '-filter_complex', filter.join(';')];
  ladder.rungs.forEach((r, i) => args.push('-map', `[v${i}]`, `-b:v:${i}`, String(r.videoBitrate),
    `-maxrate:v:${i}`, String(r.maxrate), `-bufsize:v:${i}`, String(r.bufsize), `-profile:v:${i}`, r.profile ?? 'high',
    ...(r.level ? [`-level:v:${i}`, r.level] : [])));
  if (muxed) ladder.rungs.forEach((_, i) => args.push('-map', `[a${i}]`));
  else args.push('-map', '[aout]');
  const streamMap = muxed
    ? ladder.rungs.map((_, i) => `v:${i},a:${i},name:v${i}`).join(' ')
    : [...ladder.rungs.map((_, i) => `v:${i},agroup:aud,name:v${i}`), 'a:0,agroup:aud,name:audio'].join(' ');
  // No B-frames, as the content's encode (encode.ts): hls.js would place what follows the ad 67 ms late (a hole).
  args.push('-c:v', 'libx264', '-preset', preset, '-bf', '0', '-r', String(fps),
    '-force_key_frames', `expr:gte(t,n_forced*${ladder.segmentDurationSec})`, '-sc_threshold', '0',
    '-c:a', 'aac', '-b:a', String(ladder.audioBitrate), '-ar', String(ladder.audioSampleRate), '-ac', String(ladder.audioChannels),
    '-f', 'hls', '-hls_time', String(ladder.segmentDurationSec), '-hls_playlist_type', 'vod',
    ...(ts ? ['-hls_segment_type', 'mpegts'] : ['-hls_segment_type', 'fmp4', '-hls_fmp4_init_filename', 'init.mp4']),
    '-hls_flags', 'independent_segments', '-master_pl_name', 'master.m3u8',
    '-hls_segment_filename', path.join(dir, '%v', ts ? 'seg_%03d.ts' : 'seg_%03d.m4s'), '-var_stream_map', streamMap, path.join(dir, '%v', 'index.m3u8'));
  return ffmpegOnce(args, 'VOD_CREATIVE_TRANSCODE_FAILED', signal);
}

/** Reads the written playlists back from `from`; the result names `dir`, where they live once renamed. */
async function readBack(from: string, dir: string, key: string, ladder: TargetLadder, durationSec: number): Promise<PreparedCreative> {
  const renditions: PreparedRendition[] = [];
  for (const [i, r] of ladder.rungs.entries()) {
    const playlistPath = `v${i}/index.m3u8`;
    renditions.push({ width: r.width, height: r.height, bandwidth: r.videoBitrate + ladder.audioBitrate, playlistPath,
      ...(await readPlaylist(from, playlistPath)) });
  }
  const shape = { container: ladder.container ?? 'fmp4', muxedAudio: ladder.muxedAudio === true } as const;
  if (shape.muxedAudio) return { creativeKey: key, dir, masterPath: 'master.m3u8', durationSec, renditions, cached: false, ...shape };
  const audioPath = 'audio/index.m3u8';
  return {
    creativeKey: key, dir, masterPath: 'master.m3u8', durationSec, renditions, cached: false, ...shape,
    audioOnly: { bandwidth: ladder.audioBitrate, sampleRate: ladder.audioSampleRate, channels: ladder.audioChannels,
      playlistPath: audioPath, ...(await readPlaylist(from, audioPath)) },
  };
}

/** Runs `make` once per key (concurrent callers share it) and caches the result as JSON next to the media. */
async function cached(key: string, opts: PrepareOptions,
  make: (work: string) => Promise<VodResult<{ durationSec: number; ladder: TargetLadder }>>): Promise<VodResult<PreparedCreative>> {
  const dir = path.join(path.resolve(opts.cacheDir), key);
  const resultFile = path.join(dir, RESULT_FILE);
  if ((await exists(resultFile)) && (await exists(path.join(dir, 'master.m3u8')))) {
    const hit = JSON.parse(await readFile(resultFile, 'utf8')) as PreparedCreative;
    opts.logger?.debug({ key }, 'creative cache hit');
    return { ok: true, value: { ...hit, dir, cached: true } };
  }
  const running = inFlight.get(key);
  if (running) return running;
  const job = (async (): Promise<VodResult<PreparedCreative>> => {
    const work = `${dir}.partial-${process.pid}`;
    await rm(work, { recursive: true, force: true });
    await mkdir(work, { recursive: true });
    try {
      const made = await make(work);
      if (!made.ok) return made;
      const result = await readBack(work, dir, key, made.value.ladder, made.value.durationSec);
      await rm(path.join(work, 'source'), { force: true });
      await writeFile(path.join(work, RESULT_FILE), JSON.stringify(result, null, 1));
      await rm(dir, { recursive: true, force: true });
      await rename(work, dir);
      opts.logger?.info({ key, durationSec: result.durationSec }, 'creative prepared');
      return { ok: true, value: result };
    } catch (e) {
      return failure('VOD_CREATIVE_TRANSCODE_FAILED', e instanceof Error ? e.message : String(e));
    } finally {
      // Never a rejection, and the key is always freed: a stuck in-flight entry would fail every later call.
      await rm(work, { recursive: true, force: true }).catch(() => undefined);
      inFlight.delete(key);
    }
  })();
  inFlight.set(key, job);
  return job;
}

const layout = (l: TargetLadder): string => (l.audioChannels === 1 ? 'mono' : 'stereo');

export async function prepareCreative(mediaFileUrl: string, targetLadder: TargetLadder,
  opts: PrepareOptions): Promise<VodResult<PreparedCreative>> {
  const key = creativeKey(opts.creativeId ?? 'creative', mediaFileUrl, targetLadder);
  return cached(key, opts, async (work) => {
    const source = path.join(work, 'source');
    const got = await download(mediaFileUrl, source, opts.fetchTimeoutMs ?? 30_000, opts.maxBytes ?? 512 * 1024 * 1024, opts.signal);
    if (!got.ok) return got;
    const probe = await probeMedia(source);
    if (!probe.ok) return failure('VOD_CREATIVE_TRANSCODE_FAILED', `${probe.error.message}: ${probe.error.reason}`);
    const media = probe.value;
    const fps = targetLadder.frameRate;
    // A creative without audio still gets an audio track, or the stitched stream would lose its audio group.
    const inputArgs = ['-i', source, ...(media.hasAudio ? [] : ['-f', 'lavfi', '-i', `anullsrc=r=${targetLadder.audioSampleRate}:cl=${layout(targetLadder)}`])];
    const durationSec = Math.max(1, Math.round(media.durationSec * fps)) / fps;
    const t = await transcode({ inputArgs, audioInput: media.hasAudio ? '0:a:0' : '1:a:0', durationSec }, targetLadder, work,
      opts.preset ?? 'veryfast', opts.signal);
    return t.ok ? { ok: true, value: { durationSec, ladder: targetLadder } } : t;
  });
}

/** A still image (local path or http(s) URL) held for `durationSec` with silence, as the same renditions. */
export async function prepareSlate(imageUrlOrPath: string, targetLadder: TargetLadder, durationSec: number,
  opts: PrepareOptions): Promise<VodResult<PreparedCreative>> {
  const key = creativeKey(`slate-${durationSec}`, imageUrlOrPath, targetLadder);
  return cached(key, opts, async (work) => {
    let image = imageUrlOrPath;
    if (/^https?:\/\//.test(imageUrlOrPath)) {
      image = path.join(work, 'source');
      const got = await download(imageUrlOrPath, image, opts.fetchTimeoutMs ?? 30_000, opts.maxBytes ?? 64 * 1024 * 1024, opts.signal);
      if (!got.ok) return got;
    }
    const fps = targetLadder.frameRate;
    const exact = Math.max(1, Math.round(durationSec * fps)) / fps;
    const inputArgs = ['-loop', '1', '-framerate', String(fps), '-t', String(exact + 1), '-i', image,
      '-f', 'lavfi', '-i', `anullsrc=r=${targetLadder.audioSampleRate}:cl=${layout(targetLadder)}`];
    const t = await transcode({ inputArgs, audioInput: '1:a:0', durationSec: exact }, targetLadder, work, opts.preset ?? 'veryfast', opts.signal);
    return t.ok ? { ok: true, value: { durationSec: exact, ladder: targetLadder } } : t;
  });
}
