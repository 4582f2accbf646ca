// A live session's breaks long before its window, summed once per track (issue 28 point 2). The numbering of every
// later playlist counts each break the session ever had, so a reload placed them all, and a reload's cost (and its
// shared stitch's key) grew with the session's age: a break every 5 minutes is 12 an hour. Once retired and behind
// every later break, a break is summed into the track's BreaksBefore and never placed again.
import { addBreaksBefore, breaksBefore, type BreaksBefore, type StitchAvail, type StitchOptions } from '../stitch/manifest-rewriter.js';

/** One session track's summed breaks, valid for the target duration they were planned at. */
export type TrackPast = {
  readonly ids: ReadonlySet<string>;
  readonly before: BreaksBefore;
  /** the last slot's end of the breaks summed: every other break of the track starts after it */
  readonly lastEnd: number;
  readonly target: number;
  /** what the sum adds, for the key of a stitch shared by sessions */
  readonly key: string;
};

/** Where a session keeps its tracks' sums (a field of the cached session: no map entry per viewer). */
export interface PastHolder {
  pastBreaks?: Array<TrackPast | undefined>;
}

/** Track n's sum of the session's past breaks, when it was made at this target duration. */
export function pastOf(holder: PastHolder, n: number, target: number): TrackPast | undefined {
  const past = holder.pastBreaks?.[n];
  return past !== undefined && past.target === target ? past : undefined;
}

/** Forgets track n's sum: a break placed before its end (never expected live) makes the sum inexact. */
export function forgetPast(holder: PastHolder, n: number): void {
  if (holder.pastBreaks) holder.pastBreaks[n] = undefined;
}

/**
 * Sums `gone` (retired breaks wholly before this playlist's window, as placed on track n) into the track's past, those
 * of them that end before every other break placed (`others`) starts and start after the past's end: breaksBefore is
 * exact for those only. The playlist being stitched still lists them itself; the next reloads take the sum.
 */
export function sumPast(holder: PastHolder, n: number, target: number, gone: readonly StitchAvail[], others: readonly StitchAvail[],
  opts: Pick<StitchOptions, 'trackKind' | 'emptySubtitleUri'>): void {
  const past = pastOf(holder, n, target);
  let firstOther = Infinity;
  for (const a of others) firstOther = Math.min(firstOther, a.startSegmentIndex);
  // (taken from the earliest: one that cannot be summed keeps every later one out too, so the sum stays a prefix; the
  // breaks of one sum may touch, breaksBefore sees them together)
  const sorted = [...gone].sort((a, b) => a.startSegmentIndex - b.startSegmentIndex);
  const summed: StitchAvail[] = [];
  const pastEnd = past?.lastEnd ?? -Infinity;
  let lastEnd = pastEnd;
  for (const a of sorted) {
    const end = a.endSegmentIndex;
    if (end === undefined || a.insert || a.startSegmentIndex <= pastEnd || end >= firstOther) break;
    summed.push(a);
    lastEnd = Math.max(lastEnd, end);
  }
  // the rest of `gone` is among the other breaks for what is summed: none of it may start before a summed end
  for (let i = summed.length; i < sorted.length; i++) if (sorted[i]!.startSegmentIndex <= lastEnd) return;
  if (!summed.length) return;
  const added = breaksBefore(summed, opts, target);
  const before = past ? addBreaksBefore(past.before, added) : added;
  const ids = new Set(past?.ids);
  for (const a of summed) ids.add(a.id);
  (holder.pastBreaks ??= [])[n] = {
    ids, before, lastEnd, target,
    key: `${before.mediaSequence},${before.discontinuitySequence},${before.targetDuration},${before.mapped ? 1 : 0},${before.absorbed.join('.')}`,
  };
}
