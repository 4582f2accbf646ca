// Decodes an HLS timeline with ffmpeg span by span: each run of segments under one EXT-X-MAP without a discontinuity
// is joined behind its init segment and decoded alone (ffmpeg's HLS demuxer keeps the first init segment's codec
// configuration across a MAP change, so a timeline of differently encoded parts is decoded per part).
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { MediaSegment } from '../../ssai/playlist-scanner.js';

export function ffmpegDecode(input: string): Promise<string> {
  return new Promise((resolve) => {
    execFile('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-i', input, '-f', 'null', '-'], { maxBuffer: 8 * 1024 * 1024, timeout: 60_000 },
      (err, _o, stderr) => resolve(err ? `${err.message}\n${stderr}` : stderr));
  });
}

/** Segments with absolute URIs (and map URIs) against the playlist's URL. */
export function absoluteSegments(segments: MediaSegment[], base: string): MediaSegment[] {
  const abs = (u: string) => new URL(u, base).href;
  return segments.map((s) => ({ ...s, uri: abs(s.uri), ...(s.map ? { map: { ...s.map, uri: abs(s.map.uri) } } : {}) }));
}

export async function decodeSpans(segments: MediaSegment[], dir: string, name: string): Promise<{ spans: number; errors: string; seconds: number }> {
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
  let seconds = 0;
  for (const [i, span] of spans.entries()) {
    const parts = await Promise.all([...(span[0]!.map ? [get(span[0]!.map.uri)] : []), ...span.map((s) => get(s.uri))]);
    const file = path.join(dir, `${name}-${i}.mp4`);
    await writeFile(file, Buffer.concat(parts));
    const e = await ffmpegDecode(file);
    if (e) errors.push(`span ${i} (${span[0]!.uri} …): ${e}`);
    seconds += span.reduce((t, s) => t + s.duration, 0);
  }
  return { spans: spans.length, errors: errors.join('\n'), seconds };
}
