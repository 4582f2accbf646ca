// Live DASH breaks (issue 33, live): the SCTE-35 cues of a dynamic MPD's window as breaks on the origin Period's
// timeline, and where a decided break sits. A live break is placed by its decision record, stored once per viewer and
// break (contentOffsetSeconds: its start; duration: the content it replaces), never by the window of the moment: a
// Period once published keeps its id, start and length on every reload, even after its cue left the origin's MPD.
import type { AvailRecord } from '../decide/avail-record.js';
import type { Avail } from '../parse/cue-finder.js';
import type { MpdCue } from '../parse/mpd-cues.js';
import { readMpd, type MpdReadResult } from '../parse/mpd-reader.js';
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

/** A live break's place: its start and where the content resumes (seconds of the origin's Period). */
export function livePlace(record: AvailRecord): { at: number; resume: number } | undefined {
  if (record.contentOffsetSeconds === undefined || record.insert || !(record.duration > 0)) return undefined;
  return { at: record.contentOffsetSeconds, resume: ms(record.contentOffsetSeconds + record.duration) };
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
