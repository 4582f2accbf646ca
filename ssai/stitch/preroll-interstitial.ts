// The live pre-roll of a guided playlist (issue 31 item 4): one HLS Interstitial with CUE="PRE,ONCE" that every
// viewer's player plays once, at playback start, from its own asset list (the URI is relative: it resolves under each
// viewer's session URL, so the text stays the same for every viewer). Pure.
import { INTERSTITIAL_CLASS } from './interstitials.js';

const DAY_MS = 86_400_000;

/**
 * The pre-roll's START-DATE: the UTC midnight before the window's first segment. A player ignores the date of a
 * CUE="PRE" interstitial (it plays before the content), but an ID must keep its attributes across reloads (hls.js
 * drops a DATERANGE whose START-DATE changed), and this one changes once a day rather than with every window.
 */
export const prerollStartMs = (firstSegmentMs: number): number => Math.floor(firstSegmentMs / DAY_MS) * DAY_MS;

/**
 * The pre-roll's date range. No DURATION (each viewer's ads have their own length, in their asset list) and no
 * X-RESUME-OFFSET: a player joins the live content after a live pre-roll (hls.js: at its live start position).
 */
export function prerollInterstitial(id: string, startMs: number, assetListUri: string): string {
  return `#EXT-X-DATERANGE:ID="${id}",CLASS="${INTERSTITIAL_CLASS}",START-DATE="${new Date(startMs).toISOString()}",CUE="PRE,ONCE",`
    + `X-ASSET-LIST="${assetListUri}",X-RESTRICT="SKIP,JUMP"`;
}

/** A guided playlist with the pre-roll's date range before every other tag of its first segment (played first). */
export function withPrerollInterstitial(playlist: string, line: string): string {
  const lines = playlist.split('\n');
  // after the playlist's header: before the first segment's own tags (its date, the breaks' date ranges)
  let at = lines.findIndex((l) => l.startsWith('#EXTINF') || l.startsWith('#EXT-X-DATERANGE') || l.startsWith('#EXT-X-PROGRAM-DATE-TIME'));
  if (at < 0) at = lines.length;
  lines.splice(at, 0, line);
  return lines.join('\n');
}
