// Decodes an HLS timeline with ffmpeg span by span: each run of segments under one EXT-X-MAP without a discontinuity
// is joined behind its init segment and decoded alone (ffmpeg's HLS demuxer keeps the first init segment's codec
// configuration across a MAP change, so a timeline of differently encoded parts is decoded per part).
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { probeBytes } from '../../media/media-probe.js';
import type { MediaSegment } from '../../media/playlist-scanner.js';

/** ffmpeg decodes a file to nothing: its errors, the video frames and the media seconds it decoded. */
export function ffmpegDecode(input: string): Promise<{ errors: string; frames: number; seconds: number }> {
  return new Promise((resolve) => {
    execFile('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-progress', 'pipe:1', '-i', input, '-f', 'null', '-'], { maxBuffer: 8 * 1024 * 1024, timeout: 60_000 },
      (err, stdout, stderr) => {
        const last = (key: string) => Number([...stdout.matchAll(new RegExp(`^${key}=(\\d+)`, 'gm'))].at(-1)?.[1] ?? 0);
        resolve({ errors: err ? `${err.message}\n${stderr}` : stderr, frames: last('frame'), seconds: last('out_time_us') / 1e6 });
      });
  });
}

/** Segments with absolute URIs (and map URIs) against the playlist's URL. */
export function absoluteSegments(segments: MediaSegment[], base: string): MediaSegment[] {
  const abs = (u: string) => new URL(u, base).href;
  return segments.map((s) => ({ ...s, uri: abs(s.uri), ...(s.map ? { map: { ...s.map, uri: abs(s.map.uri) } } : {}) }));
}

export type Decoded = { spans: number; errors: string; seconds: number; frames: number; decodedSeconds: number; spansWithoutAudio: number };

/** Downloads a timeline (following redirects) and decodes it span by span; `seconds` is what the playlist says. */
export async function decodeSpans(segments: MediaSegment[], dir: string, name: string): Promise<Decoded> {
  const get = async (url: string): Promise<Buffer> => {
    const res = await fetch(url);
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  };
  const spans: MediaSegment[][] = [];
  for (const s of segments) {
    const last = spans.at(-1);
    if (!last || s.discontinuity || s.map?.uri !== last[0]!.map?.uri) spans.push([s]);
    else last.push(s);
  }
  const errors: string[] = [];
  const out = { seconds: 0, frames: 0, decodedSeconds: 0, spansWithoutAudio: 0 };
  for (const [i, span] of spans.entries()) {
    const parts = await Promise.all([...(span[0]!.map ? [get(span[0]!.map.uri)] : []), ...span.map((s) => get(s.uri))]);
    const file = path.join(dir, `${name}-${i}.${span[0]!.map ? 'mp4' : 'ts'}`);
    const bytes = Buffer.concat(parts);
    await writeFile(file, bytes);
    const d = await ffmpegDecode(file);
    if (d.errors) errors.push(`span ${i} (${span[0]!.uri} …): ${d.errors}`);
    if (!(await probeBytes(bytes))?.audio) out.spansWithoutAudio++;
    out.frames += d.frames;
    out.decodedSeconds += d.seconds;
    out.seconds += span.reduce((t, s) => t + s.duration, 0);
  }
  return { spans: spans.length, errors: errors.join('\n'), ...out };
}
