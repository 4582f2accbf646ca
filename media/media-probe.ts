// The streams of one HLS segment (with its init segment when fMP4), read by ffprobe from the bytes: what the proxy
// matches creatives to (issue 19 point 1) and what `engine check-playlist` compares between content and ad segments.
import { FfmpegProcess } from './ffmpeg-process.js';
import { ffprobeBin } from './tool-paths.js';

export type SegmentStreams = {
  video?: { codec: string; profile?: string; level?: number; width: number; height: number; frameRate?: number };
  audio?: { codec: string; sampleRate: number; channels: number };
};

const MAX_BYTES = 16 * 1024 * 1024;

/** GETs a URL's bytes (bounded), undefined on any failure. */
export async function fetchBytes(url: string, timeoutMs = 5000): Promise<Buffer | undefined> {
  try {
    // fetch follows the proxy's /v1/segment redirects to the ad media.
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (res.status !== 200 || !res.body) { await res.body?.cancel(); return undefined; }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of res.body) {
      size += c.length;
      if (size > MAX_BYTES) { await res.body.cancel().catch(() => undefined); return undefined; }
      chunks.push(Buffer.from(c));
    }
    return Buffer.concat(chunks);
  } catch {
    return undefined;
  }
}

type ProbeJson = { streams?: Array<{ codec_type?: string; codec_name?: string; profile?: string; level?: number; width?: number; height?: number;
  r_frame_rate?: string; sample_rate?: string; channels?: number }> };

/** ffprobe over the bytes on stdin; undefined when ffprobe is missing or reads no stream. */
export async function probeBytes(bytes: Buffer, timeoutMs = 5000): Promise<SegmentStreams | undefined> {
  const exit = await new FfmpegProcess({
    bin: ffprobeBin(), args: ['-v', 'error', '-print_format', 'json', '-show_streams', '-i', 'pipe:0'],
    group: false, stdin: bytes, keepOutput: Number.POSITIVE_INFINITY, timeoutMs, timeoutSignal: 'SIGKILL',
  }).exited;
  // ended by the time limit (or any signal): no answer, whatever it printed
  if (exit.signal !== null || exit.error !== undefined) return undefined;
  try {
    const streams = (JSON.parse(exit.stdout) as ProbeJson).streams ?? [];
    const v = streams.find((s) => s.codec_type === 'video');
    const a = streams.find((s) => s.codec_type === 'audio');
    const r: SegmentStreams = {};
    if (v) {
      const [num, den] = (v.r_frame_rate ?? '').split('/').map(Number);
      const fps = num && den ? num / den : undefined;
      r.video = { codec: v.codec_name ?? '', width: v.width ?? 0, height: v.height ?? 0,
        ...(v.profile ? { profile: v.profile } : {}), ...(v.level !== undefined ? { level: v.level } : {}),
        ...(fps && fps < 240 ? { frameRate: Math.round(fps * 1000) / 1000 } : {}) };
    }
    if (a) r.audio = { codec: a.codec_name ?? '', sampleRate: Number(a.sample_rate) || 0, channels: a.channels ?? 0 };
    return v || a ? r : undefined;
  } catch {
    return undefined;
  }
}

/** The streams of a segment: its init segment (fMP4) and the segment fetched, joined and probed. */
export async function probeSegment(uri: string, mapUri?: string, timeoutMs = 5000): Promise<SegmentStreams | undefined> {
  const [init, seg] = await Promise.all([mapUri ? fetchBytes(mapUri, timeoutMs) : Promise.resolve(Buffer.alloc(0)), fetchBytes(uri, timeoutMs)]);
  if (!init || !seg) return undefined;
  return probeBytes(Buffer.concat([init, seg]), timeoutMs);
}
