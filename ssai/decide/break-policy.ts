// The ad-operations policies of a break (issue 31 points 1 and 2), pure: whether the ads chosen personalise it
// (personalization threshold), and whether a live break is filled at all, or only its rest, given the viewer's live
// edge (avail suppression). The semantics follow the managed services' AvailSuppression (docs/ssai-ad-ops.md).
import type { AvailSuppression } from '../../kernel/seams/adinserts.js';
import type { MediaPlaylist } from '../../media/playlist-scanner.js';
import type { Avail } from '../parse/cue-finder.js';

/** What a decision needs of its configuration's policies (DecisionTask.policies); bumpers: ssai/decide/bumpers.ts. */
export type BreakPolicies = { personalizationThresholdSeconds?: number; bumperStartUrl?: string; bumperEndUrl?: string };

/**
 * The viewer's live edge, fixed at the session's first live playlist: the end of that playlist's window on the
 * stream's clock (its program date-time, where it has one) and on the wall clock when it was read.
 */
export type LiveEdge = { wallMs: number; pdtMs?: number };

/** How much of a live break a viewer's decision covers under avail suppression. */
export type SuppressionVerdict =
  | { fill: 'all' }
  | { fill: 'none'; why: string }
  /** PARTIAL_AVAIL: the break from `skipSeconds` after its start on (the part before plays its content) */
  | { fill: 'rest'; skipSeconds: number };

const FILL_ALL: SuppressionVerdict = { fill: 'all' };
/** Slack for segment lengths that do not add up exactly (4.011 for 4). */
const EPSILON_S = 1e-3;

/**
 * Whether the ads chosen personalise a break: false when they leave more of it unfilled than the threshold (then the
 * viewer sees the break's own content, neither ads nor slate). No threshold: always.
 */
export function personalised(breakSeconds: number, adSeconds: number, thresholdSeconds: number | undefined): boolean {
  if (thresholdSeconds === undefined) return true;
  return breakSeconds - adSeconds <= thresholdSeconds + EPSILON_S;
}

/** The live edge a playlist read at `readAtMs` shows: the end of its window. */
export function liveEdgeOf(pl: MediaPlaylist, readAtMs: number): LiveEdge {
  const last = pl.segments[pl.segments.length - 1];
  return last?.pdtMs !== undefined ? { wallMs: readAtMs, pdtMs: last.pdtMs + last.duration * 1000 } : { wallMs: readAtMs };
}

/** Seconds from a break's start to the end of the playlist's window (negative: the break starts after it). */
export function secondsBeforeWindowEnd(avail: Avail, pl: MediaPlaylist): number {
  const first = pl.segments[0];
  const last = pl.segments[pl.segments.length - 1];
  if (!first || !last) return 0;
  const slot = avail.slotDuration > 0 ? avail.slotDuration : pl.targetDuration || 6;
  if (avail.startSegmentIndex > last.mediaSequence) return -(avail.startSegmentIndex - last.mediaSequence - 1) * slot;
  let seconds = 0;
  for (const s of pl.segments) if (s.mediaSequence >= avail.startSegmentIndex) seconds += s.duration;
  // a break whose start slid out of the window: its segments before the window counted as slots
  if (avail.startSegmentIndex < first.mediaSequence) seconds += (first.mediaSequence - avail.startSegmentIndex) * slot;
  return seconds;
}

/**
 * Milliseconds from the viewer's live edge to a break's start (negative: the break started behind it), by program
 * date-time where both the edge and this playlist have it, else by the wall clock (this playlist read at `readAtMs`
 * ended at the live edge then).
 */
export function startAfterEdgeMs(avail: Avail, pl: MediaPlaylist, readAtMs: number, edge: LiveEdge): number {
  const last = pl.segments[pl.segments.length - 1];
  const behindMs = secondsBeforeWindowEnd(avail, pl) * 1000;
  if (edge.pdtMs !== undefined && last?.pdtMs !== undefined) {
    const startPdtMs = avail.startPdtMs ?? last.pdtMs + last.duration * 1000 - behindMs;
    return startPdtMs - edge.pdtMs;
  }
  return readAtMs - behindMs - edge.wallMs;
}

/**
 * Avail suppression of a live break starting `startAfterEdgeMs` after the viewer's live edge:
 * - OFF (or none): filled.
 * - BEHIND_LIVE_EDGE: a break starting on or behind (live edge − value) is not filled (value 0: no break the viewer
 *   joined in or that was already in their window); the fill policy does not apply (always whole breaks).
 * - AFTER_LIVE_EDGE: no break starting before (live edge + value) is filled, behind the edge included; one still
 *   running then is filled from that moment on under PARTIAL_AVAIL (a viewer joining mid-break gets its rest),
 *   not at all under FULL_AVAIL_ONLY.
 * `open`: the break's end is not known yet (no planned duration): it runs past any moment.
 */
export function suppressionOf(s: AvailSuppression | undefined, startAfterEdge: number, durationSeconds: number, open: boolean): SuppressionVerdict {
  if (!s || s.mode === 'OFF') return FILL_ALL;
  const valueMs = s.valueSeconds * 1000;
  if (s.mode === 'BEHIND_LIVE_EDGE') {
    return startAfterEdge <= -valueMs ? { fill: 'none', why: `starts ${fmt(-startAfterEdge)} s behind the viewer's live edge (value ${s.valueSeconds} s)` } : FILL_ALL;
  }
  if (startAfterEdge >= valueMs) return FILL_ALL;
  const endAfterEdge = open ? Infinity : startAfterEdge + durationSeconds * 1000;
  if (s.fillPolicy === 'PARTIAL_AVAIL' && endAfterEdge > valueMs) return { fill: 'rest', skipSeconds: (valueMs - startAfterEdge) / 1000 };
  return { fill: 'none', why: `starts ${fmt(startAfterEdge)} s after the viewer's live edge, within the value (${s.valueSeconds} s)` };
}

function fmt(ms: number): string {
  return String(Math.round(ms) / 1000);
}

/**
 * The rest of a break from `skipSeconds` after its start, as the break a decision fills (PARTIAL_AVAIL): its start on
 * the first segment boundary at or after that moment (the segment's own date where this playlist lists it), its
 * length what is left. Undefined when less than half a segment is left. The id stays the break's.
 */
export function restOfBreak(avail: Avail, skipSeconds: number, pl: MediaPlaylist, targetDuration: number): Avail | undefined {
  const slot = avail.slotDuration > 0 ? avail.slotDuration : targetDuration;
  const skip = Math.max(0, Math.ceil(skipSeconds / slot - EPSILON_S));
  if (skip === 0) return avail;
  const start = avail.startSegmentIndex + skip;
  if (avail.endSegmentIndex !== undefined && start >= avail.endSegmentIndex) return undefined;
  let skipped = skip * slot;
  let startPdtMs = avail.startPdtMs === undefined ? undefined : avail.startPdtMs + skipped * 1000;
  const listed = pl.segments.find((s) => s.mediaSequence === start);
  if (listed?.pdtMs !== undefined && avail.startPdtMs !== undefined) {
    startPdtMs = listed.pdtMs;
    skipped = (listed.pdtMs - avail.startPdtMs) / 1000;
  }
  const duration = Math.round((avail.duration - skipped) * 1000) / 1000;
  // (an open break without a planned duration is decided at the default length from its new start)
  if (duration < slot / 2 && (avail.durationFromCue || !avail.open)) return undefined;
  // (not startVisible: the segments before the rest were listed, so no playlist ends before it, see cutBefore)
  const rest: Avail = { ...avail, startSegmentIndex: start, duration: Math.max(0, duration), startVisible: false };
  if (startPdtMs !== undefined) rest.startPdtMs = startPdtMs;
  return rest;
}
