// Live pre-roll (issue 31 item 4): a viewer joining a live stream gets ads before the live content, asked of the
// configuration's live_preroll_ad_server once per session and never longer than live_preroll_max_seconds (as AWS
// Elemental MediaTailor's live pre-roll: the ads that fit the maximum, then straight back to the content). Pure: where
// a stitched session's pre-roll goes in its first live playlist, and the break it is decided as.
import type { AdPolicies } from '../../kernel/seams/adinserts.js';
import { parseAttributes, type MediaPlaylist } from '../../media/playlist-scanner.js';
import type { Avail } from '../parse/cue-finder.js';
import type { AvailRecord } from './avail-record.js';

/** The pre-roll's avail id: its record's key, its /v1/segment path and its guided asset list (cue ids never take it). */
export const PREROLL_AVAIL_ID = 'preroll';

/** The pre-roll's length when the configuration gives the ad server but no live_preroll_max_seconds. */
export const DEFAULT_LIVE_PREROLL_SECONDS = 30;

/**
 * How long after its creation a stitched session may still be given its pre-roll: at its first live playlist, which a
 * player asks for right after the multivariant playlist. A session older than this (one that played before the
 * configuration had a pre-roll) is never interrupted by one.
 */
export const PREROLL_JOIN_WINDOW_MS = 60_000;

/**
 * How far the chosen ads may run over the maximum: the encoder's rounding of a creative's length (a 6 s ad prepared
 * is 6.02 s), not a whole frame more. The cue breaks' tolerance (0.5 s) would let a 6.4 s ad into a 6 s maximum.
 */
export const PREROLL_TOLERANCE_SECONDS = 0.1;

/** The configuration's live pre-roll: its ad server and maximum, undefined when it has none. */
export function livePrerollOf(config: AdPolicies): { adServer: string; maxSeconds: number } | undefined {
  if (!config.livePrerollAdServer) return undefined;
  return { adServer: config.livePrerollAdServer, maxSeconds: config.livePrerollMaxSeconds ?? DEFAULT_LIVE_PREROLL_SECONDS };
}

export const isPreroll = (availId: string): boolean => availId === PREROLL_AVAIL_ID;

/** Where a stitched session's pre-roll goes: the break to decide, or why the viewer gets none. */
export type PrerollPlace = { avail: Avail } | { skip: string };

/**
 * The pre-roll of a viewer's first live playlist: a break starting at the segment a player starts at (the one that
 * starts the hold-back from the end: three target durations, or SERVER-CONTROL's HOLD-BACK, as hls.js and AVPlayer
 * start), as long as the maximum, less where a break of the window starts before that. A viewer joining inside a
 * break gets no pre-roll (the break is there to play).
 */
export function prerollPlace(pl: MediaPlaylist, avails: readonly Avail[], maxSeconds: number): PrerollPlace | undefined {
  const segs = pl.segments;
  if (!segs.length) return undefined;
  const target = pl.targetDuration || 6;
  const holdBack = holdBackOf(pl) ?? 3 * target;
  // The earliest segment whose start lies within the hold-back of the end (a little over is the EXTINF's rounding).
  let k = segs.length - 1;
  let behind = segs[k]!.duration;
  while (k > 0 && behind + segs[k - 1]!.duration <= holdBack + 0.5) behind += segs[--k]!.duration;
  const at = segs[k]!;
  const start = at.mediaSequence;
  const slot = nominal(pl);
  if (avails.some((a) => !a.insert && a.startSegmentIndex <= start && (a.endSegmentIndex === undefined || a.endSegmentIndex > start))) {
    return { skip: 'the viewer joined during a break' };
  }
  const next = Math.min(...avails.filter((a) => a.startSegmentIndex > start).map((a) => a.startSegmentIndex));
  let room = Infinity;
  if (Number.isFinite(next)) {
    room = 0;
    for (let s = start; s < next; s++) room += segs.find((x) => x.mediaSequence === s)?.duration ?? slot;
  }
  const seconds = Math.min(maxSeconds, room);
  if (seconds < slot / 2) return { skip: 'a break starts where the viewer joined' };
  const avail: Avail = {
    id: PREROLL_AVAIL_ID, startSegmentIndex: start, startVisible: true, duration: seconds, durationFromCue: true, open: false,
    kind: 'cue-out', slotDuration: slot,
    // a break of the window after it bounds its slots (the ads may run over by the tolerance)
    ...(Number.isFinite(next) ? { endSegmentIndex: next } : {}),
  };
  if (at.pdtMs !== undefined) avail.startPdtMs = at.pdtMs;
  return { avail };
}

/** A pre-roll the viewer does not get: no ads, at no place of the content (it never stands for a break). */
export function noPrerollRecord(why: string, target: number): AvailRecord {
  return { id: PREROLL_AVAIL_ID, index: 0, startSegmentIndex: -1, endSegmentIndex: -1, duration: 0, slotDuration: target, ads: [], skipped: [], error: `skipped: ${why}` };
}

/**
 * The cue breaks a stitched session leaves to their content because they begin during its pre-roll (only breaks the
 * origin announced after the viewer joined can: the pre-roll ends before those it saw).
 */
export function outsidePreroll(avails: Avail[], preroll: { startSegmentIndex: number; endSegmentIndex: number; startPdtMs?: number; slotDuration: number }): Avail[] {
  const { startSegmentIndex: start, endSegmentIndex: end } = preroll;
  if (end <= start) return avails;
  const endMs = preroll.startPdtMs === undefined ? undefined : preroll.startPdtMs + (end - start) * preroll.slotDuration * 1000;
  const during = (a: Avail): boolean => (a.startPdtMs !== undefined && endMs !== undefined
    ? a.startPdtMs >= preroll.startPdtMs! - preroll.slotDuration * 500 && a.startPdtMs < endMs - preroll.slotDuration * 500
    : a.startSegmentIndex >= start && a.startSegmentIndex < end);
  return avails.some(during) ? avails.filter((a) => !during(a)) : avails;
}

function holdBackOf(pl: MediaPlaylist): number | undefined {
  const control = pl.header.find((t) => t.name === 'EXT-X-SERVER-CONTROL');
  const v = control ? Number.parseFloat(parseAttributes(control.value)['HOLD-BACK'] ?? '') : NaN;
  return Number.isFinite(v) && v > 0 ? v : undefined;
}

/** The window's median segment length: the pre-roll's slot (the numbering of the stitched playlists counts in it). */
function nominal(pl: MediaPlaylist): number {
  const ds = pl.segments.map((s) => s.duration).sort((a, b) => a - b);
  return Math.round((ds[Math.floor(ds.length / 2)] ?? pl.targetDuration) * 1000) / 1000 || pl.targetDuration || 6;
}
