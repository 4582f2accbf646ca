// Server-guided ad insertion (issue 30): a media playlist that keeps the origin's content and points players at each
// break with an HLS Interstitial (`EXT-X-DATERANGE` of CLASS "com.apple.hls.interstitial", RFC 8216bis appendix D),
// whose per-viewer asset list the player fetches. Pure: no I/O, no clock. The text names no viewer, so every viewer
// of a stream gets the same bytes (the asset list's URL is relative: it resolves under each viewer's playlist URL).
import type { MediaPlaylist } from '../../media/playlist-scanner.js';
import type { Avail } from '../parse/cue-finder.js';

export const INTERSTITIAL_CLASS = 'com.apple.hls.interstitial';

/**
 * Program date-times a playlist without them is given (the interstitials' START-DATE needs them): a VOD counts from a
 * fixed date (2000-01-01, not 1970: players take a zero date for none); a live window from an anchor the caller keeps.
 */
export const VOD_DATE_BASE_MS = Date.UTC(2000, 0, 1);

export interface GuidedOptions {
  /** the asset list of a break, relative to the media playlist's URL */
  assetListUri: (breakId: string) => string;
  /**
   * The date of the window's first segment where the origin gives none (see VOD_DATE_BASE_MS, LiveDateAnchors);
   * undefined when the origin's playlist has its own program date-times.
   */
  firstSegmentMs?: number;
}

/**
 * A break as an interstitial places it: its id, start date, length in seconds, whether that length is planned, and
 * the cue it comes from. The id is the start date: a cue's own id can change while the break is in the window (a
 * CUE-OUT alone at the edge is named by its date, a reload later by the CONT's SCTE-35 event id), and a player takes
 * an interstitial whose id changed for another break.
 */
export interface InterstitialBreak {
  id: string; startMs: number; durationSec: number; planned: boolean; avail: Avail;
  /** a VOD's VMAP pre-roll (played before the content) or post-roll (after it) */
  cue?: 'PRE' | 'POST';
}

/** The interstitial id of a break starting at `startMs`. */
export const interstitialId = (startMs: number): string => `break-${Math.round(startMs)}`;

/** Characters an attribute's quoted string cannot hold (RFC 8216 §4.2: no quote, CR or LF). */
const unquotable = /["\r\n]/g;

/**
 * Whether the origin's playlist dates any segment itself; the others are dated from them (as players do). Without any,
 * the proxy adds dates (see GuidedOptions.firstSegmentMs).
 */
export function hasOwnDates(pl: MediaPlaylist): boolean {
  return pl.segments.some((s) => s.pdtMs !== undefined);
}

/**
 * The segments' dates: the origin's where it gives them, and from them through the durations for the segments it
 * leaves undated (backward before its first date, forward after a discontinuity without one); with no date at all,
 * counted from `firstSegmentMs` (undefined: none known).
 */
export function segmentDates(pl: MediaPlaylist, firstSegmentMs?: number): Array<number | undefined> {
  const dates: Array<number | undefined> = pl.segments.map((s) => s.pdtMs);
  const firstDated = dates.findIndex((d) => d !== undefined);
  if (firstDated < 0) {
    if (firstSegmentMs === undefined) return dates;
    dates[0] = firstSegmentMs;
  } else {
    for (let i = firstDated - 1; i >= 0; i--) dates[i] = dates[i + 1]! - pl.segments[i]!.duration * 1000;
  }
  for (let i = 1; i < dates.length; i++) dates[i] ??= dates[i - 1]! + pl.segments[i - 1]!.duration * 1000;
  return dates;
}

/**
 * The VOD breaks of a VMAP (issue 30: `CUE="PRE"` for a pre-roll, `CUE="POST"` for a post-roll, a mid-roll at its
 * offset), inserted (the content stays). Their ids are the VMAP avails' own: stable per session, as the VMAP is.
 */
export function vmapInterstitials(pl: MediaPlaylist, avails: readonly Avail[], dates: ReadonlyArray<number | undefined>): InterstitialBreak[] {
  const first = pl.segments[0];
  const last = pl.segments[pl.segments.length - 1];
  const lastDate = dates[dates.length - 1];
  if (!first || !last || lastDate === undefined) return [];
  const endMs = lastDate + last.duration * 1000;
  const out: InterstitialBreak[] = [];
  for (const a of avails) {
    const k = a.startSegmentIndex - first.mediaSequence;
    const post = k >= pl.segments.length;
    const pre = k <= 0 && (a.contentOffsetSeconds ?? 0) === 0;
    const startMs = post ? endMs : dates[Math.max(0, k)];
    if (startMs === undefined) continue;
    out.push({ id: a.id, startMs, durationSec: a.duration, planned: false, avail: a, ...(pre ? { cue: 'PRE' as const } : post ? { cue: 'POST' as const } : {}) });
  }
  return out;
}

/**
 * Segments a live break stays announced after its end left the window: a player behind the edge may still be in it,
 * and a player drops an interstitial that leaves the playlist while it plays.
 */
const KEEP_AFTER_END_SEGMENTS = 3;

/**
 * The breaks of a playlist an interstitial can announce: each with its start date (its first segment's, else the
 * cue's). A live break whose start left the window stays announced, at the date it had (`known`: the start a break
 * was announced with, near an estimate), while its cues are in the window and its end is less than
 * KEEP_AFTER_END_SEGMENTS behind the window's start.
 */
export function interstitialBreaks(pl: MediaPlaylist, avails: readonly Avail[], dates: ReadonlyArray<number | undefined>,
  known?: (estimateMs: number, slotMs: number) => number | undefined): InterstitialBreak[] {
  const first = pl.segments[0];
  if (!first) return [];
  const windowStart = dates[0];
  const out: InterstitialBreak[] = [];
  const seen = new Set<string>();
  for (const a of avails) {
    let startMs: number | undefined;
    const k = a.startSegmentIndex - first.mediaSequence;
    const slotMs = (a.slotDuration || pl.targetDuration) * 1000;
    if (k >= 0 && k < pl.segments.length) startMs = dates[k];
    else if (k < 0) {
      // slid out: the date it was announced with (a cue's elapsed time or the estimate from the numbering may be off)
      const estimate = a.startPdtMs ?? (windowStart === undefined ? undefined : windowStart + k * slotMs);
      startMs = estimate === undefined ? undefined : known?.(estimate, slotMs) ?? estimate;
      if (startMs !== undefined && windowStart !== undefined && startMs + a.duration * 1000 + KEEP_AFTER_END_SEGMENTS * slotMs <= windowStart) continue;
    } else {
      // announced ahead: the cue's date, else counted on from the window's end
      const lastDate = dates[pl.segments.length - 1];
      const last = pl.segments[pl.segments.length - 1]!;
      startMs = a.startPdtMs ?? (lastDate === undefined ? undefined : lastDate + (last.duration + (k - pl.segments.length) * (a.slotDuration || pl.targetDuration)) * 1000);
    }
    if (startMs === undefined) continue;
    const id = interstitialId(startMs);
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({ id, startMs, durationSec: a.duration, planned: !a.durationFromCue && a.open, avail: a });
  }
  return out;
}

/** One interstitial's date range. Live: the break's content is skipped (resume after it); VOD: the ads are inserted. */
export function interstitialDateRange(b: InterstitialBreak, live: boolean, assetListUri: string): string {
  const attrs = [
    `ID="${b.id.replace(unquotable, '')}"`,
    `CLASS="${INTERSTITIAL_CLASS}"`,
    `START-DATE="${new Date(b.startMs).toISOString()}"`,
    ...(b.cue ? [`CUE="${b.cue}"`] : []),
    // a VMAP break's length is known once decided: the asset list gives it
    ...(b.durationSec > 0 ? [`${b.planned ? 'PLANNED-DURATION' : 'DURATION'}=${round3(b.durationSec)}`] : []),
    `X-ASSET-LIST="${assetListUri.replace(unquotable, '')}"`,
    `X-RESUME-OFFSET=${live ? round3(b.durationSec) : 0}`,
    // live: the break starts and ends on segment boundaries of the primary; neither may be skipped past
    ...(live ? ['X-SNAP="OUT,IN"'] : []),
    'X-RESTRICT="SKIP,JUMP"',
  ];
  return `#EXT-X-DATERANGE:${attrs.join(',')}`;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/**
 * The guided playlist: `passThrough` (the origin playlist as the proxy passes it on, one `#EXTINF` per segment of
 * `pl`, in order) with an interstitial per break, placed before the first segment, and a program date-time on each
 * segment that starts an undated run (the first, or one after a discontinuity), so that players resolve every date
 * as the proxy does. A segment the origin dated keeps its date.
 */
export function guidedMediaPlaylist(passThrough: string, pl: MediaPlaylist, breaks: readonly InterstitialBreak[], opts: GuidedOptions): string {
  const dates = segmentDates(pl, opts.firstSegmentMs);
  const live = !pl.endList;
  const ranges = breaks.map((b) => interstitialDateRange(b, live, opts.assetListUri(b.id)));
  const undatedRunStart = (k: number): boolean => {
    const seg = pl.segments[k];
    return seg !== undefined && seg.pdtMs === undefined && (k === 0 || seg.discontinuity) && dates[k] !== undefined;
  };
  if (!ranges.length && !pl.segments.some((_, k) => undatedRunStart(k))) return passThrough;
  const lines = passThrough.split('\n');
  const out: string[] = [];
  let k = 0;
  for (const line of lines) {
    if (line.startsWith('#EXTINF')) {
      if (k === 0) out.push(...ranges);
      if (undatedRunStart(k)) out.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(dates[k]!).toISOString()}`);
      k++;
    }
    out.push(line);
  }
  return out.join('\n');
}

/**
 * The start dates of the breaks announced per live stream in this process, so a break whose start left the window
 * keeps the date (and so the id) players know it by.
 */
export class AnnouncedBreaks {
  private readonly starts = new Map<string, number[]>();
  constructor(private readonly max = 10_000, private readonly perStream = 16) {}

  remember(stream: string, breaks: readonly InterstitialBreak[]): void {
    if (!breaks.length) return;
    let list = this.starts.get(stream);
    if (!list) {
      if (this.starts.size >= this.max) this.starts.delete(this.starts.keys().next().value!);
      this.starts.set(stream, list = []);
    }
    for (const b of breaks) if (!list.includes(b.startMs)) list.push(b.startMs);
    if (list.length > this.perStream) list.splice(0, list.length - this.perStream);
  }

  /** The start announced for this stream within half a slot of the estimate. */
  near(stream: string, estimateMs: number, slotMs: number): number | undefined {
    return this.starts.get(stream)?.find((ms) => Math.abs(ms - estimateMs) < slotMs / 2);
  }
}

/** A date a live stream without program date-times is counted from: the segment numbered `sequence` starts at `ms`. */
export interface DateAnchor { sequence: number; ms: number }

/**
 * The date of the window's first segment counted from an anchor: through the durations of the segments the window
 * lists when the anchor's segment is among them, else in target durations. Pure, so every proxy process counting from
 * one anchor (shared through the session store) gives a stream the same dates.
 */
export function firstSegmentMsFrom(anchor: DateAnchor, pl: MediaPlaylist): number {
  const first = pl.segments[0]!;
  const k = anchor.sequence - first.mediaSequence;
  if (k >= 0 && k < pl.segments.length) {
    let ms = anchor.ms;
    for (let i = 0; i < k; i++) ms -= pl.segments[i]!.duration * 1000;
    return ms;
  }
  return anchor.ms - k * (pl.targetDuration || 6) * 1000;
}

/** The anchor at the window's last segment (the next window still lists it), given its first segment's date. */
export function anchorAtLast(pl: MediaPlaylist, firstSegmentMs: number): DateAnchor {
  let ms = firstSegmentMs;
  for (let i = 0; i < pl.segments.length - 1; i++) ms += pl.segments[i]!.duration * 1000;
  return { sequence: pl.segments[pl.segments.length - 1]!.mediaSequence, ms };
}

/**
 * Dates for a live origin without program date-times, kept per stream in this process: a stream is dated from its
 * anchor (adopted from the session store, where every process shares one; else set from the clock on first sight:
 * the window's end is now), which moves on with the window.
 */
export class LiveDateAnchors {
  private readonly anchors = new Map<string, DateAnchor>();
  constructor(private readonly max = 10_000) {}

  /** The anchor a stream would get on first sight now. */
  static fresh(pl: MediaPlaylist, nowMs: number): DateAnchor {
    return anchorAtLast(pl, nowMs - pl.segments.reduce((t, s) => t + s.duration, 0) * 1000);
  }

  /** Takes the anchor another process set (see firstSegmentMsFrom). */
  adopt(stream: string, anchor: DateAnchor): void {
    if (!this.anchors.has(stream) && this.anchors.size >= this.max) this.anchors.delete(this.anchors.keys().next().value!);
    this.anchors.set(stream, anchor);
  }

  anchor(stream: string): DateAnchor | undefined {
    return this.anchors.get(stream);
  }

  /** The date of the window's first segment; `nowMs` dates the window's end when the stream is new here. */
  firstSegmentMs(stream: string, pl: MediaPlaylist, nowMs: number): number {
    if (!pl.segments[0]) return nowMs;
    const ms = firstSegmentMsFrom(this.anchors.get(stream) ?? LiveDateAnchors.fresh(pl, nowMs), pl);
    this.adopt(stream, anchorAtLast(pl, ms));
    return ms;
  }
}
