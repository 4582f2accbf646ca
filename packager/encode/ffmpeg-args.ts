// The argument list of a channel's one ffmpeg: decode the input once, scale to each rendition of the plan, encode
// with keyframes on segment boundaries (so renditions switch cleanly), write HLS segments per rendition. ffmpeg's own
// playlists are private (work dir): the engine reads them to learn of finished segments and writes the public ones.
import path from 'node:path';
import type { EncoderPlan } from './encoder-plan.js';
import { encodedRenditions, x264Level } from './encoder-plan.js';

export interface RunPaths {
  /** public directory of the channel (segments) */
  publicDir: string;
  /** private directory (ffmpeg's playlists) */
  workDir: string;
  /** prefix that makes this run's file names unique (`r3`) */
  prefix: string;
}

/** The private playlist ffmpeg writes for one rendition of one run. */
export const privatePlaylist = (paths: RunPaths, renditionId: string): string => path.join(paths.workDir, `${paths.prefix}_${renditionId}.m3u8`);

/** What a run encodes from: the ingest front's input arguments, or the slate (a generated picture and silence). */
export type RunInput = { kind: 'input'; args: string[] } | { kind: 'slate' };

function inputArgs(input: RunInput, plan: EncoderPlan): string[] {
  if (input.kind === 'input') return input.args;
  const top = plan.renditions[0]!;
  return [
    '-re', '-f', 'lavfi', '-i', `color=c=0x202838:size=${top.width}x${top.height}:rate=${top.frameRate}`,
    '-re', '-f', 'lavfi', '-i', `anullsrc=channel_layout=stereo:sample_rate=${top.audioSampleRate}`,
  ];
}

/**
 * `tsOffsetSec`: where this run's timestamps start on the channel's timeline, so they keep increasing across runs
 * (restart, slate, switch): a discontinuity stays marked, but ffmpeg-based readers (the RTMP relay, archive concat,
 * probes) never see time go backwards.
 */
export function encoderArgs(plan: EncoderPlan, input: RunInput, paths: RunPaths, tsOffsetSec = 0): string[] {
  const renditions = encodedRenditions(plan);
  const n = renditions.length;
  const audioInput = input.kind === 'slate' ? '1:a:0' : '0:a:0';
  const seg = plan.hls.segmentSeconds;
  const scaled = renditions.map((r, i) =>
    `[s${i}]fps=${r.frameRate},scale=${r.width}:${r.height}:force_original_aspect_ratio=decrease,pad=${r.width}:${r.height}:(ow-iw)/2:(oh-ih)/2,setsar=1,format=yuv420p[v${i}]`);
  const filter = `[0:v:0]split=${n}${renditions.map((_, i) => `[s${i}]`).join('')};${scaled.join(';')}`;
  const args = ['-hide_banner', '-nostdin', '-loglevel', 'warning', '-progress', 'pipe:1', '-stats_period', '2', ...inputArgs(input, plan), '-filter_complex', filter];
  renditions.forEach((r, i) => {
    args.push('-map', `[v${i}]`, '-map', audioInput);
  });
  args.push('-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency', '-sc_threshold', '0', '-force_key_frames', `expr:gte(t,n_forced*${seg})`);
  args.push('-c:a', 'aac');
  renditions.forEach((r, i) => {
    args.push(
      `-b:v:${i}`, String(r.videoBitrate), `-maxrate:v:${i}`, String(r.videoBitrate), `-bufsize:v:${i}`, String(r.videoBitrate * 2),
      `-profile:v:${i}`, r.profile, `-level:v:${i}`, x264Level(r), `-g:v:${i}`, String(r.gopFrames), `-keyint_min:v:${i}`, String(r.gopFrames),
      `-b:a:${i}`, String(r.audioBitrate), `-ar:a:${i}`, String(r.audioSampleRate), `-ac:a:${i}`, String(r.audioChannels),
    );
  });
  const ext = plan.hls.segmentType === 'fmp4' ? 'm4s' : 'ts';
  if (tsOffsetSec > 0) args.push('-output_ts_offset', tsOffsetSec.toFixed(3));
  args.push(
    '-f', 'hls', '-hls_time', String(seg), '-hls_list_size', '8', '-hls_flags', 'temp_file+independent_segments',
    '-hls_segment_type', plan.hls.segmentType === 'fmp4' ? 'fmp4' : 'mpegts',
    // Every run starts its MPEG-TS continuity counters and clock over: its first packets carry the discontinuity
    // indicator, so a reader going from the previous run's segments into this one (the slate and a push sender taking
    // turns) sees a signalled discontinuity, not corrupt packets.
    ...(plan.hls.segmentType === 'fmp4' ? ['-hls_fmp4_init_filename', `${paths.prefix}_%v_init.mp4`] : ['-hls_segment_options', 'mpegts_flags=+initial_discontinuity']),
    '-hls_segment_filename', path.join(paths.publicDir, `${paths.prefix}_%v_%05d.${ext}`),
    '-var_stream_map', renditions.map((r, i) => `v:${i},a:${i},name:${r.id}`).join(' '),
    path.join(paths.workDir, `${paths.prefix}_%v.m3u8`),
  );
  return args;
}
