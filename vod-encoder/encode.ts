// One ffmpeg run per source: split → N scaled H.264 renditions + AAC into CMAF fMP4 segments shared by HLS and DASH.
//
// Why the `dash` muxer with `-hls_playlist 1`: it writes the MPD *and* HLS media/master playlists over the very same
// fMP4 segments in one pass (no second packaging step, no duplicated bytes), segments are GOP aligned across
// renditions (forced keyframes every segment), and both hls.js and ffmpeg read the result (checked in the e2e test).
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Parser } from 'm3u8-parser';
import type { Logger } from 'pino';
import { failure, type VodFailure, type VodResult } from './errors.js';
import { ffmpegOnce, newCommand, runFluent, type EncodeProgress } from './ffmpeg-runner.js';
import { chooseLadder, type Ladder } from './ladder.js';
import { probeMedia, type MediaInfo } from './probe.js';
import { makePoster, makeSprite } from './thumbnails.js';

export type { EncodeProgress } from './ffmpeg-runner.js';

export interface EncodeOptions {
  /** Final output directory; the encode writes to a sibling temp dir and renames it here only on success. */
  outDir: string;
  /** x264 preset; `veryfast` by default, tests pass `ultrafast`. */
  preset?: string;
  /** Overrides the ladder chosen from the probe. */
  ladder?: Ladder;
  /** Skips probing when the caller already probed. */
  mediaInfo?: MediaInfo;
  onProgress?: (p: EncodeProgress) => void;
  logger?: Logger;
}

/** Layout of a finished encode; paths are relative to `outDir`. */
export interface EncodeOutputs {
  outDir: string;
  cmafDir: string;
  hlsMaster: string;
  dashManifest: string;
  mp4: Array<{ height: number; path: string }>;
  poster: string;
  sprite: string;
  thumbsVtt: string;
  ladder: Ladder;
  mediaInfo: MediaInfo;
  elapsedMs: number;
}

export interface EncodeHandle {
  done: Promise<VodResult<EncodeOutputs>>;
  cancel(): void;
}

export const CMAF_DIR = 'cmaf';
export const HLS_MASTER_NAME = 'master.m3u8';
export const DASH_MANIFEST_NAME = 'manifest.mpd';

/** ffmpeg arguments of the single ladder encode (also used by the bench's comparison). */
export function ladderEncodeArgs(media: MediaInfo, ladder: Ladder, preset: string): {
  filter: string; maps: string[]; output: string[]; silentAudio: boolean;
} {
  const n = ladder.rungs.length;
  const pre = media.frameRate > 60 ? `fps=${ladder.frameRate},` : '';
  const labels = ladder.rungs.map((_, i) => `[s${i}]`).join('');
  // One display aspect for all rungs: the dash muxer refuses an adaptation set whose rungs differ (854x480 vs 640x360).
  const dar = `${media.width}/${media.height}`;
  const scales = ladder.rungs.map((r, i) => `[s${i}]scale=${r.width}:${r.height},setdar=${dar},format=yuv420p[v${i}]`);
  const filter = [`[0:v:0]${pre}split=${n}${labels}`, ...scales].join(';');
  const silentAudio = !media.hasAudio;
  const maps = [...ladder.rungs.map((_, i) => `[v${i}]`), silentAudio ? '1:a:0' : '0:a:0'];
  const seg = ladder.segmentDurationSec;
  // No B-frames (-bf 0): with them the first frame's composition offset (2 frames, hidden by an edit list that hls.js
  // ignores) shifts each item of a linear channel by 67 ms in hls.js, and the muxer cuts audio at the keyframe's DTS
  // (53 ms early, plus a 43 ms audio-only last segment the linear channel drops): holes at every join. Without them,
  // video starts at PTS 0 and audio segments end within one AAC frame of the video's, the last one with it.
  const output: string[] = ['-c:v', 'libx264', '-preset', preset, '-profile:v', 'high', '-bf', '0'];
  ladder.rungs.forEach((r, i) => {
    output.push(`-b:v:${i}`, String(r.videoBitrate), `-maxrate:v:${i}`, String(r.maxrate), `-bufsize:v:${i}`, String(r.bufsize));
  });
  output.push(
    // Keyframe exactly at every segment boundary in every rendition, so segments align for ABR switching.
    '-force_key_frames', `expr:gte(t,n_forced*${seg})`, '-sc_threshold', '0',
    '-c:a', 'aac', '-b:a', String(ladder.audioBitrate), '-ar', String(ladder.audioSampleRate),
    '-ac', String(ladder.audioChannels),
    ...(silentAudio ? ['-shortest'] : []),
    '-f', 'dash', '-seg_duration', String(seg), '-use_template', '1', '-use_timeline', '1',
    '-hls_playlist', '1', '-hls_master_name', HLS_MASTER_NAME,
    '-adaptation_sets', 'id=0,streams=v id=1,streams=a',
    '-init_seg_name', 'init_$RepresentationID$.m4s',
    '-media_seg_name', 'chunk_$RepresentationID$_$Number%05d$.m4s',
  );
  return { filter, maps, output, silentAudio };
}

/** Marks the muxer's media playlists as VOD and drops its wall-clock PROGRAM-DATE-TIME (meaningless for a file). */
export async function finalizeMediaPlaylists(cmafDir: string): Promise<void> {
  for (const name of await readdir(cmafDir)) {
    if (!name.endsWith('.m3u8') || name === HLS_MASTER_NAME) continue;
    const file = path.join(cmafDir, name);
    const lines = (await readFile(file, 'utf8')).split('\n').filter((l) => !l.startsWith('#EXT-X-PROGRAM-DATE-TIME'));
    if (!lines.some((l) => l.startsWith('#EXT-X-PLAYLIST-TYPE'))) {
      const at = lines.findIndex((l) => l.startsWith('#EXT-X-VERSION'));
      lines.splice(at + 1, 0, '#EXT-X-PLAYLIST-TYPE:VOD');
    }
    await writeFile(file, lines.join('\n'));
  }
}

/** Reads the master the muxer wrote back to pair each height with its media playlist and find the audio playlist. */
async function readMasterPairs(cmafDir: string): Promise<{ video: Array<{ height: number; uri: string }>; audio: string }> {
  const parser = new Parser();
  parser.push(await readFile(path.join(cmafDir, HLS_MASTER_NAME), 'utf8'));
  parser.end();
  const video = (parser.manifest.playlists ?? []).map((p) => ({ height: p.attributes.RESOLUTION?.height ?? 0, uri: p.uri }));
  const groups = Object.values(parser.manifest.mediaGroups?.['AUDIO'] ?? {});
  const audio = groups.flatMap((g) => Object.values(g)).map((e) => e.uri).find((u): u is string => Boolean(u));
  if (!audio || video.length === 0) throw new Error('master playlist lacks video variants or the audio rendition');
  return { video, audio };
}

export function encodeVod(source: string, opts: EncodeOptions): EncodeHandle {
  const abort = new AbortController();
  let cancelMain: (() => void) | null = null;
  // Disk errors (mkdir, rename) must become a typed failure too, never a rejected promise.
  const done = runEncode(source, opts, abort.signal, (c) => { cancelMain = c; })
    .catch(async (e: unknown) => {
      await rm(`${path.resolve(opts.outDir)}.partial`, { recursive: true, force: true }).catch(() => undefined);
      return failure('VOD_ENCODE_FAILED', e instanceof Error ? e.message : String(e));
    });
  return {
    done,
    cancel() {
      abort.abort();
      cancelMain?.();
    },
  };
}

async function runEncode(
  source: string, opts: EncodeOptions, signal: AbortSignal, setCancel: (c: () => void) => void,
): Promise<VodResult<EncodeOutputs>> {
  const started = Date.now();
  const log = opts.logger;
  const outDir = path.resolve(opts.outDir);
  const work = `${outDir}.partial`;
  const report = (p: EncodeProgress): void => {
    opts.onProgress?.(p);
    log?.debug({ progress: p }, 'vod encode progress');
  };
  let media = opts.mediaInfo;
  if (!media) {
    const probed = await probeMedia(source);
    if (!probed.ok) return probed;
    media = probed.value;
  }
  if (signal.aborted) return failure('VOD_ENCODE_CANCELED', 'canceled by the caller');
  const ladder = opts.ladder ?? chooseLadder(media);
  const preset = opts.preset ?? 'veryfast';
  const cmafDir = path.join(work, CMAF_DIR);
  const fail = async (f: VodResult<never> & { ok: false }): Promise<{ ok: false; error: VodFailure }> => {
    await rm(work, { recursive: true, force: true });
    log?.warn({ code: f.error.code, reason: f.error.reason }, 'vod encode failed');
    return f;
  };
  await rm(work, { recursive: true, force: true });
  await mkdir(cmafDir, { recursive: true });
  await mkdir(path.join(work, 'mp4'), { recursive: true });
  await mkdir(path.join(work, 'thumbs'), { recursive: true });
  log?.info({ source, rungs: ladder.rungs.map((r) => `${r.width}x${r.height}@${r.videoBitrate}`), preset }, 'vod encode start');

  const args = ladderEncodeArgs(media, ladder, preset);
  const cmd = newCommand().input(source);
  if (args.silentAudio) {
    cmd.input(`anullsrc=r=${ladder.audioSampleRate}:cl=stereo`).inputOptions('-f', 'lavfi');
  }
  cmd.complexFilter(args.filter);
  cmd.output(path.join(cmafDir, DASH_MANIFEST_NAME));
  cmd.outputOptions(...args.maps.flatMap((m) => ['-map', m]), ...args.output);
  const main = runFluent(cmd, {
    durationSec: media.durationSec,
    errorCode: 'VOD_ENCODE_FAILED',
    onProgress: ({ timeSec, speedX }) => {
      const frac = Math.min(1, timeSec / media.durationSec);
      const eta = speedX > 0 ? (media.durationSec - timeSec) / speedX : 0;
      report({ percent: Math.round(frac * 850) / 10, speedX, etaSec: Math.max(0, Math.round(eta)), stage: 'encode' });
    },
  });
  setCancel(main.cancel);
  if (signal.aborted) main.cancel();
  const encoded = await main.done;
  if (!encoded.ok) return fail(encoded);
  await finalizeMediaPlaylists(cmafDir);

  // MP4 per height: remux (-c copy) the same CMAF segments, so MP4 and HLS/DASH frames are identical and cost no encode.
  let pairs: Awaited<ReturnType<typeof readMasterPairs>>;
  try {
    pairs = await readMasterPairs(cmafDir);
  } catch (e) {
    return fail(failure('VOD_OUTPUT_INVALID', e instanceof Error ? e.message : String(e)));
  }
  // The remuxes only copy bytes and the sprite reads the smallest CMAF rendition directly, so all run side by side.
  const top = ladder.rungs.reduce((a, b) => (b.height > a.height ? b : a));
  const byHeight = [...pairs.video].sort((a, b) => b.height - a.height);
  const best = byHeight[0];
  const smallest = byHeight[byHeight.length - 1];
  if (!best || !smallest) return fail(failure('VOD_OUTPUT_INVALID', 'the master lists no video variant'));
  const spriteJob = makeSprite(path.join(cmafDir, smallest.uri), path.join(work, 'thumbs'),
    { durationSec: media.durationSec, width: top.width, height: top.height }, signal);
  let remuxed = 0;
  const results = await Promise.all(pairs.video.map(async (v) => {
    const rel = path.join('mp4', `${v.height}.mp4`);
    const r = await ffmpegOnce(['-v', 'error', '-i', path.join(cmafDir, v.uri), '-i', path.join(cmafDir, pairs.audio),
      '-map', '0:v:0', '-map', '1:a:0', '-c', 'copy', '-movflags', '+faststart', path.join(work, rel)],
    'VOD_ENCODE_FAILED', signal);
    remuxed++;
    report({ percent: 85 + Math.round((remuxed / pairs.video.length) * 70) / 10, speedX: 0, etaSec: 1, stage: 'mp4' });
    return r.ok ? { ok: true as const, value: { height: v.height, path: rel } } : r;
  }));
  const sprite = await spriteJob;
  const mp4: EncodeOutputs['mp4'] = [];
  for (const r of results) {
    if (!r.ok) return fail(r);
    mp4.push(r.value);
  }
  if (!sprite.ok) return fail(sprite);
  // Input seeking is exact and cheap in an MP4; in the HLS rendition ffmpeg may seek past every frame.
  const poster = await makePoster(path.join(work, 'mp4', `${best.height}.mp4`), path.join(work, 'thumbs', 'poster.jpg'),
    media.durationSec, signal);
  if (!poster.ok) return fail(poster);
  if (signal.aborted) return fail(failure('VOD_ENCODE_CANCELED', 'canceled by the caller'));

  await rm(outDir, { recursive: true, force: true });
  await rename(work, outDir);
  const elapsedMs = Date.now() - started;
  report({ percent: 100, speedX: media.durationSec / (elapsedMs / 1000), etaSec: 0, stage: 'done' });
  log?.info({ outDir, elapsedMs, mp4Bytes: (await stat(path.join(outDir, 'mp4', `${best.height}.mp4`))).size }, 'vod encode done');
  return {
    ok: true,
    value: {
      outDir,
      cmafDir: CMAF_DIR,
      hlsMaster: path.join(CMAF_DIR, HLS_MASTER_NAME),
      dashManifest: path.join(CMAF_DIR, DASH_MANIFEST_NAME),
      mp4,
      poster: path.join('thumbs', 'poster.jpg'),
      sprite: path.join('thumbs', 'sprite.jpg'),
      thumbsVtt: path.join('thumbs', 'thumbs.vtt'),
      ladder,
      mediaInfo: media,
      elapsedMs,
    },
  };
}
