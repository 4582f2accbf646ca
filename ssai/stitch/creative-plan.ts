// A prepared creative as URLs of the served media store (issue 5 "Ad decisions"): what a decision's ads and slate
// are stitched from, stored once per creative key and shared by every session.
import path from 'node:path';
import type { PreparedCreative } from '../../vod-encoder/prepare-creative.js';
import type { VariantEntry } from './manifest-rewriter.js';

export type CreativeTrack = { segments: Array<{ uri: string; duration: number }>; mapUri?: string; bandwidth: number; width?: number; height?: number };
/** A prepared creative as URLs: shared by every session (stored once per creative key). */
export type CreativePlan = { key: string; duration: number; video: CreativeTrack[]; audio?: CreativeTrack };

/** The rendition of a creative closest in bandwidth and resolution to a content variant. */
export function closestTrack(plan: CreativePlan, entry: VariantEntry): CreativeTrack | undefined {
  const h = Number((entry.resolution ?? '').split('x')[1] ?? 0);
  const bw = entry.bandwidth ?? 0;
  let best: CreativeTrack | undefined;
  let bestScore = Infinity;
  for (const t of plan.video) {
    const score = Math.abs(Math.log((t.bandwidth || 1) / (bw || 1))) + (h && t.height ? Math.abs(Math.log(t.height / h)) : 0);
    if (score < bestScore) { best = t; bestScore = score; }
  }
  return best;
}

/**
 * A prepared creative as URLs, through `creativeUrl` (public URL of a file of a prepared creative); undefined when
 * any of its files is outside the served media store.
 */
export function planOf(key: string, p: PreparedCreative, creativeUrl: (dir: string, relPath: string) => string | undefined): CreativePlan | undefined {
  const url = (rel: string) => creativeUrl(p.dir, rel);
  const track = (segments: PreparedCreative['renditions'][number]['segments'], init: string | undefined, bandwidth: number, size?: { width: number; height: number }): CreativeTrack | undefined => {
    const segs = segments.map((s) => ({ uri: url(s.path), duration: s.duration }));
    if (segs.some((s) => s.uri === undefined)) return undefined;
    const t: CreativeTrack = { segments: segs as Array<{ uri: string; duration: number }>, bandwidth, ...(size ?? {}) };
    if (init) { const m = url(init); if (!m) return undefined; t.mapUri = m; }
    return t;
  };
  const video: CreativeTrack[] = [];
  for (const r of p.renditions) {
    const t = track(r.segments, r.initSegment, r.bandwidth, { width: r.width, height: r.height });
    if (!t) return undefined;
    video.push(t);
  }
  const audio = p.audioOnly && track(p.audioOnly.segments, p.audioOnly.initSegment, p.audioOnly.bandwidth);
  return { key, duration: p.durationSec, video, ...(audio ? { audio } : {}) };
}

/** Maps a creative directory inside the media store to its public URL. */
export function mediaStoreUrl(mediaDir: string, mediaBaseUrl: () => string): (dir: string, rel: string) => string | undefined {
  return (dir, rel) => {
    const relDir = path.relative(mediaDir, dir);
    if (relDir.startsWith('..') || path.isAbsolute(relDir)) return undefined;
    const parts = [...relDir.split(path.sep), ...rel.split('/')].filter(Boolean).map(encodeURIComponent);
    return `${mediaBaseUrl()}/${parts.join('/')}`;
  };
}
