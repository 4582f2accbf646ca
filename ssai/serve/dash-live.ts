// Live DASH breaks (issue 33, live): the SCTE-35 cues of a dynamic MPD's window as breaks on the origin Period's
// timeline, and where a decided break sits. A live break is placed by its decision record, stored once per viewer and
// break (contentOffsetSeconds: its start; duration: the content it replaces), never by the window of the moment: a
// Period once published keeps its id, start and length on every reload, even after its cue left the origin's MPD.
import type { AvailRecord } from '../decide/avail-record.js';
import { isPreroll, PREROLL_AVAIL_ID } from '../decide/live-preroll.js';
import type { Avail } from '../parse/cue-finder.js';
import type { MpdCue } from '../parse/mpd-cues.js';
import { parseIsoDuration, readMpd, type MpdRead, type MpdReadResult } from '../parse/mpd-reader.js';
import type { DashBreak } from '../stitch/mpd-stitcher.js';
import type { OriginOk } from './origin-fetcher.js';

const ms = (sec: number): number => Math.round(sec * 1000) / 1000;

/**
 * The breaks the window's cues announce and that are not over at its start. A live cue is taken at its own
 * presentation time and length, the splice points the origin conditioned its segments at (SCTE 214-1): the window
 * may not hold the break's boundaries yet, and a break placed by the window would move as it slides. A cue without a
 * length is no live break (the live timeline cannot make room for inserted ads).
 */
export function liveCueAvails(cues: readonly MpdCue[], windowStartSec: number, slotDuration: number): Avail[] {
  const seen = new Set<string>();
  const avails: Avail[] = [];
  for (const c of cues) {
    if (c.dir !== 'out' || !c.durationSec || c.atSec + c.durationSec <= windowStartSec || seen.has(c.id)) continue;
    seen.add(c.id);
    avails.push({
      // no segment numbers: a live DASH break is placed in seconds (contentOffsetSeconds), its end left to its length
      id: c.id, startSegmentIndex: 0, startVisible: c.atSec >= windowStartSec, duration: ms(c.durationSec), durationFromCue: true,
      open: false, kind: 'daterange', slotDuration, contentOffsetSeconds: ms(c.atSec), ...(c.scte35 ? { scte35: c.scte35 } : {}),
    });
  }
  return avails;
}

/**
 * A live break's place: its start and where the content resumes (seconds of the origin's Period). A pre-roll replaces
 * only as much content as its ads last (its length is a maximum, as on HLS: straight back to the content after them).
 */
export function livePlace(record: AvailRecord): { at: number; resume: number } | undefined {
  const length = isPreroll(record.id) ? record.ads.reduce((t, a) => t + a.duration, 0) : record.duration;
  if (record.contentOffsetSeconds === undefined || record.insert || !(length > 0)) return undefined;
  return { at: record.contentOffsetSeconds, resume: ms(record.contentOffsetSeconds + length) };
}

/**
 * How far behind the live edge a DASH player starts: the MPD's suggestedPresentationDelay (dash.js and Shaka honour
 * it), else three segments, which the stitched MPD then announces as its suggestedPresentationDelay so that players
 * start where the pre-roll was placed.
 */
export function presentationDelayOf(read: Pick<MpdRead, 'mpd'>, slot: number): { seconds: number; announce: boolean } {
  const given = parseIsoDuration(read.mpd.getAttribute('suggestedPresentationDelay'));
  return given !== undefined && given > 0 ? { seconds: given, announce: false } : { seconds: 3 * slot, announce: true };
}

/**
 * A live DASH viewer's pre-roll (issue 31 item 4 on DASH): a break at the first segment that starts at or after
 * where the player starts (the edge less the presentation delay: the player plays at most one segment of content
 * before it, and the ads from their first segment, whose request fires the impression), as long as the maximum, less
 * where a break of the window starts after it. A viewer joining inside a break gets none (the break is there to play).
 */
export function livePrerollAvail(starts: ReadonlyArray<{ start: number; duration: number }>, edgeSec: number, delaySec: number, breaks: readonly Avail[], maxSeconds: number, slot: number): { avail: Avail } | { skip: string } | undefined {
  if (!starts.length) return undefined;
  const from = edgeSec - delaySec;
  const at = (starts.find((s) => s.start >= from - 1e-3) ?? starts[starts.length - 1]!).start;
  const placed = breaks.filter((b) => b.contentOffsetSeconds !== undefined);
  if (placed.some((b) => b.contentOffsetSeconds! <= at + 1e-3 && b.contentOffsetSeconds! + b.duration > at + 1e-3)) return { skip: 'the viewer joined during a break' };
  const next = Math.min(...placed.map((b) => b.contentOffsetSeconds!).filter((t) => t > at + 1e-3));
  const seconds = ms(Math.min(maxSeconds, next - at));
  if (seconds < slot / 2) return { skip: 'a break starts where the viewer joined' };
  return {
    avail: {
      id: PREROLL_AVAIL_ID, startSegmentIndex: 0, startVisible: true, duration: seconds, durationFromCue: true, open: false,
      kind: 'daterange', slotDuration: slot, contentOffsetSeconds: ms(at),
    },
  };
}

/** Cue breaks less those beginning under the viewer's pre-roll (only breaks announced after the viewer joined can). */
export function outsideLivePreroll(avails: Avail[], preroll: AvailRecord | undefined): Avail[] {
  const place = preroll ? livePlace(preroll) : undefined;
  if (!place) return avails;
  return avails.filter((a) => a.contentOffsetSeconds === undefined || a.contentOffsetSeconds < place.at - 1e-3 || a.contentOffsetSeconds >= place.resume - 1e-3);
}

/**
 * A break wholly before the window, as the stitcher needs it: where it is and how long its ads last (the content Period
 * after it is named by it), no creative. Undefined when it had no ads (the content played through it).
 */
export function pastBreak(record: AvailRecord, place: { at: number; resume: number }): DashBreak | undefined {
  if (!record.ads.length) return undefined;
  return {
    id: record.id, atSeconds: place.at, resumeSeconds: place.resume,
    ads: record.ads.map((a, k) => ({ periodId: `${record.id}-${k}`, duration: a.duration, rendition: () => undefined })),
  };
}

/**
 * The origin MPD's read, once per fetched text (shared by every viewer, as derive): a live MPD addressed by the clock
 * (SegmentTemplate@duration, r="-1") is read again once its next segment is out, its text unchanged though it is (the
 * fetcher keeps an unchanged text's memo): what was derived from the previous window is dropped with it.
 */
export function readFetchedMpd(fetched: OriginOk, nowMs: number): MpdReadResult {
  const hit = fetched.memo.get('mpd') as MpdReadResult | undefined;
  if (hit && !(hit.ok && hit.value.clockUntilMs !== undefined && nowMs >= hit.value.clockUntilMs)) return hit;
  const read = readMpd(fetched.text, { nowMs });
  if (hit) fetched.memo.clear();
  fetched.memo.set('mpd', read);
  return read;
}
