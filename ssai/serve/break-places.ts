// Where a session's breaks sit in a playlist, as the proxy's hot path needs it (issue 26, issue 28): whether two cues
// name one break, one record per break, when a live break is long gone, and where a playlist may end before a break
// still being decided. Pure: no I/O, no clock.
import type { MediaPlaylist } from '../../media/playlist-scanner.js';
import type { AvailRecord } from '../decide/avail-record.js';
import type { Avail } from '../parse/cue-finder.js';
import type { StitchAvail } from '../stitch/manifest-rewriter.js';

/**
 * Segments a live break stays whole after it left the window: a player that read the playlist just before still
 * fetches its last ad segments (and fires their beacons) after the window moved on.
 */
const RETIRE_AFTER_SEGMENTS = 3;

/** Whether a live break ended RETIRE_AFTER_SEGMENTS or more before this playlist's window (on this track). */
export function longGone(record: AvailRecord, placed: StitchAvail | undefined, first: MediaPlaylist['segments'][number], target: number): boolean {
  if (placed?.endSegmentIndex !== undefined) return placed.endSegmentIndex + RETIRE_AFTER_SEGMENTS <= first.mediaSequence;
  // a break without ads (a failed decision) stitches nothing: by its time where it has one, else its origin place
  if (record.startPdtMs !== undefined && first.pdtMs !== undefined) {
    return record.startPdtMs + (record.duration + RETIRE_AFTER_SEGMENTS * (record.slotDuration || target)) * 1000 <= first.pdtMs;
  }
  return record.endSegmentIndex + RETIRE_AFTER_SEGMENTS <= first.mediaSequence;
}

/**
 * Content segments a live playlist lists at least before a break still being decided, to end there (issue 28 point
 * 2): players start three target durations behind the end of a live playlist (hls.js, AVPlayer), so they have that
 * much to play while the decision runs, and its ads are listed on their next reload. Nothing listed is renamed later:
 * the break's segments were never listed as content (its cue came with its first segment).
 */
export const MIN_SEGMENTS_BEFORE_CUT = 3;

/**
 * Target durations of media a playlist ended before a break may hold back from the end of the origin's window: a
 * player takes the end of a live playlist for the live edge and starts, or stays, three target durations behind it.
 * When the break's ads are listed the end moves on by what was held back (and the time the decision took); a leap of
 * a few target durations is what a late reload gives too, while one of minutes (a playlist ended at the first of
 * several breaks of a joining viewer's window) is a player far behind live: hls.js seeks to live over what it had
 * buffered (liveMaxLatencyDuration), or plays minutes late.
 */
const MAX_TARGETS_HELD_BACK = 3;

/**
 * How long a playlist may still end before `a` (ms, 0: not at all): until the break is too close to the window's
 * start (MIN_SEGMENTS_BEFORE_CUT), and until what is listed from its start on (held back from the player) exceeds
 * MAX_TARGETS_HELD_BACK target durations, counted in seconds (a window's segments need not be of one length).
 */
export function cutRoomMs(pl: MediaPlaylist, a: Avail, target: number): number {
  const first = pl.segments[0];
  if (!first) return 0;
  const beforeStart = (a.startSegmentIndex - first.mediaSequence - MIN_SEGMENTS_BEFORE_CUT + 1) * target;
  let heldBack = 0;
  for (const s of pl.segments) if (s.mediaSequence >= a.startSegmentIndex) heldBack += s.duration;
  // (EXTINF values a little over the target duration, 4.011 for 4, still count as one each)
  const untilHeldBack = (MAX_TARGETS_HELD_BACK + 1) * target - Math.round(heldBack / target) * target;
  return Math.max(0, Math.min(beforeStart, untilHeldBack)) * 1000;
}

/**
 * Where a playlist ends before the breaks of `running` (the first segment of the earliest one in this playlist's
 * numbering: by date when it came from another track's playlist), or undefined when one starts too early to end the
 * playlist there (then the decisions are waited for).
 */
export function cutBefore(pl: MediaPlaylist, running: Avail[], target: number): number | undefined {
  const first = pl.segments[0];
  if (!first) return undefined;
  let cut: number | undefined;
  for (const a of running) {
    let at = a.startSegmentIndex;
    if (a.startPdtMs !== undefined && first.pdtMs !== undefined) {
      const half = (a.slotDuration || target) * 500;
      const hit = pl.segments.find((x) => x.pdtMs !== undefined && x.pdtMs + half > a.startPdtMs!);
      if (!hit) continue; // it starts after this window: nothing of it is listed here
      at = hit.mediaSequence;
    }
    if (at < first.mediaSequence + MIN_SEGMENTS_BEFORE_CUT) return undefined;
    cut = cut === undefined ? at : Math.min(cut, at);
  }
  return cut;
}

type BreakPlace = Pick<AvailRecord, 'id' | 'startPdtMs' | 'startSegmentIndex' | 'slotDuration'>;

/** Whether two cues or records name the same break: the same id, else the same start (by date where both have one). */
export function sameBreak(a: BreakPlace, b: BreakPlace, target: number): boolean {
  if (a.id === b.id) return true;
  const slotMs = (b.slotDuration || a.slotDuration || target) * 1000;
  return a.startPdtMs !== undefined && b.startPdtMs !== undefined
    ? Math.abs(a.startPdtMs - b.startPdtMs) < slotMs / 2 : a.startSegmentIndex === b.startSegmentIndex;
}

export function isKnown(records: readonly AvailRecord[], avail: Avail, target: number): boolean {
  return records.some((r) => sameBreak(r, avail, target));
}

/** Whether every avail found is a break the session has decided (a reload then has nothing to decide). */
export function allKnown(records: readonly AvailRecord[], avails: readonly Avail[], target: number): boolean {
  for (const avail of avails) if (!isKnown(records, avail, target)) return false;
  return true;
}

/**
 * The records a playlist places: one per break. Two decisions of one break (made by two instances at once, each
 * seeing the break under another id) would both count in the numbering while one is listed; the first decided
 * (lowest index in the session's list, the same on every instance) stands for the break.
 */
export function oneRecordPerBreak(records: readonly AvailRecord[], target: number): readonly AvailRecord[] {
  if (records.length < 2) return records;
  // Compared pairwise once per list, not per playlist: a session's list is replaced whenever a decision joins it
  // (mergeRecords), and a long session holds hundreds of retired breaks. What is kept is the positions dropped: a
  // record replaced in place (retired, degraded) keeps its position and its break.
  const before = onePerBreak.get(records);
  const known = (typeof before === 'number' ? before : before?.target) === target ? before! : placesDropped(records, target);
  if (known !== before) onePerBreak.set(records, known);
  if (typeof known === 'number') return records;
  const { dropped } = known;
  return records.filter((_, i) => !dropped.has(i));
}

function placesDropped(records: readonly AvailRecord[], target: number): number | { target: number; dropped: ReadonlySet<number> } {
  const dropped: number[] = [];
  records.forEach((r, i) => {
    if (records.some((o) => o !== r && sameBreak(o, r, target) && (o.index < r.index || (o.index === r.index && o.id < r.id)))) dropped.push(i);
  });
  return dropped.length ? { target, dropped: new Set(dropped) } : target;
}
/**
 * By list: the target duration it was compared at when nothing is dropped (the common case: a number, so a viewer's
 * list costs no object and no Set, ~360 B per viewer at 10,000 in a heap snapshot), else that and the positions dropped.
 */
const onePerBreak = new WeakMap<readonly AvailRecord[], number | { target: number; dropped: ReadonlySet<number> }>();
