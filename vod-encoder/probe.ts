// ffprobe a source into the few facts the ladder and records need; a non-media file is a typed failure.
import { execTool } from '../media/exec-tool.js';
import { ffprobeBin } from '../media/tool-paths.js';
import { failure, firstErrorLine, stderrTail, type VodResult } from './errors.js';

export interface MediaInfo {
  durationSec: number;
  /** Display size: rotation applied (ffmpeg autorotates on decode) and non-square pixels widened. */
  width: number;
  height: number;
  frameRate: number;
  videoCodec: string;
  audioCodec: string | null;
  audioSampleRate: number | null;
  hasAudio: boolean;
  hasVideo: boolean;
}

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  sample_rate?: string;
  duration?: string;
  disposition?: { attached_pic?: number };
  sample_aspect_ratio?: string;
  tags?: { rotate?: string };
  side_data_list?: Array<{ rotation?: number }>;
}
interface ProbeJson {
  streams?: ProbeStream[];
  format?: { duration?: string; format_name?: string };
}

/** "30000/1001" → 29.97; 0 when unknown. */
export function parseRate(rate: string | undefined): number {
  if (!rate) return 0;
  const [n, d] = rate.split('/').map(Number);
  if (n === undefined || !Number.isFinite(n)) return 0;
  if (d === undefined) return n;
  return d > 0 ? n / d : 0;
}

export async function probeMedia(file: string): Promise<VodResult<MediaInfo>> {
  const out = await execTool(ffprobeBin(), [
    '-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file,
  ], 60_000);
  if (out.exitCode === -1 && /ENOENT/.test(out.stderr) && !/No such file/.test(out.stderr)) {
    return failure('VOD_PROBE_FAILED', stderrTail(out.stderr));
  }
  if (out.exitCode !== 0) return failure('VOD_NOT_MEDIA', firstErrorLine(out.stderr, file) || 'ffprobe rejected the file');
  let json: ProbeJson;
  try {
    json = JSON.parse(out.stdout) as ProbeJson;
  } catch {
    return failure('VOD_PROBE_FAILED', 'ffprobe printed no JSON');
  }
  const streams = json.streams ?? [];
  // Cover art is a video stream to ffprobe but not a video to us.
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  const audio = streams.find((s) => s.codec_type === 'audio');
  if (!video && !audio) return failure('VOD_NOT_MEDIA', `no audio or video stream (format ${json.format?.format_name ?? 'unknown'})`);
  if (!video) return failure('VOD_NO_VIDEO', 'the file holds audio only');
  const durationSec = Number(json.format?.duration ?? video.duration ?? NaN);
  if (!Number.isFinite(durationSec) || durationSec <= 0) {
    return failure('VOD_NOT_MEDIA', `no usable duration (format ${json.format?.format_name ?? 'unknown'})`);
  }
  if (!video.width || !video.height) return failure('VOD_NOT_MEDIA', 'the video stream has no dimensions');
  const frameRate = parseRate(video.avg_frame_rate) || parseRate(video.r_frame_rate);
  const { width, height } = displaySize(video, video.width, video.height);
  return {
    ok: true,
    value: {
      durationSec,
      width,
      height,
      frameRate: Math.round(frameRate * 1000) / 1000,
      videoCodec: video.codec_name ?? 'unknown',
      audioCodec: audio?.codec_name ?? null,
      audioSampleRate: audio?.sample_rate ? Number(audio.sample_rate) : null,
      hasAudio: Boolean(audio),
      hasVideo: true,
    },
  };
}

/** Phones store portrait video as landscape plus a rotation; anamorphic sources store a non-square SAR. */
function displaySize(v: ProbeStream, w: number, h: number): { width: number; height: number } {
  const sar = parseRate(v.sample_aspect_ratio?.replace(':', '/'));
  const width = sar > 0 && Math.abs(sar - 1) > 0.01 ? 2 * Math.round((w * sar) / 2) : w;
  const rotation = Math.abs(Number(v.side_data_list?.find((d) => d.rotation !== undefined)?.rotation ?? v.tags?.rotate ?? 0));
  return rotation % 180 === 90 ? { width: h, height: width } : { width, height: h };
}
