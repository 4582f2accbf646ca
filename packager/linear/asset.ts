// A VOD (or the slate) as the linear assembler sees it: per track the init segment and the segment URLs, and one
// timing (the first video track's segment durations) shared by every track, so all renditions cut at the same places.

export interface Track {
  /** EXT-X-MAP URI (absolute) */
  init?: string;
  /** absolute segment URLs and their EXTINF durations in seconds */
  uris: string[];
  durations: number[];
}

export interface VariantTrack extends Track {
  bandwidth: number;
  /** CODECS of the variant (video and audio), as the asset's own master states it */
  codecs?: string;
  width?: number;
  height?: number;
}

export interface LinearAsset {
  /** the VOD guid, or `slate` */
  id: string;
  /** by ascending bandwidth */
  variants: VariantTrack[];
  audio?: Track;
  /** segment durations in ms (timing of the whole asset: the lowest video variant's) */
  durationsMs: number[];
  /** cumulative ends in ms: endsMs[i] = sum of durationsMs[0..i] */
  endsMs: number[];
  totalMs: number;
}

/** Builds the timing of an asset from its tracks; the segment count is the smallest of all tracks. */
export function makeAsset(id: string, variants: VariantTrack[], audio: Track | undefined): LinearAsset {
  const sorted = [...variants].sort((a, b) => a.bandwidth - b.bandwidth);
  const tracks: Track[] = [...sorted, ...(audio ? [audio] : [])];
  const count = tracks.length ? Math.min(...tracks.map((t) => Math.min(t.uris.length, t.durations.length))) : 0;
  const durationsMs = (sorted[0]?.durations ?? []).slice(0, count).map((d) => Math.round(d * 1000));
  const endsMs: number[] = [];
  let total = 0;
  for (const d of durationsMs) endsMs.push((total += d));
  return { id, variants: sorted, ...(audio ? { audio } : {}), durationsMs, endsMs, totalMs: total };
}

/** Index of the first element of an ascending array that is > x (the count of elements ≤ x). */
export function countAtMost(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The count of elements of an ascending array that are < x. */
export function countBelow(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
