// Placing a decided avail on one track of a session (issue 5 "Playback"): its segment span and the ad media of the
// track's kind, ready for the manifest rewriter.
import { closestTrack, type CreativePlan, type CreativeTrack } from '../stitch/creative-plan.js';
import type { AdPlanner } from '../decide/ad-planner.js';
import type { AvailRecord } from '../decide/avail-record.js';
import type { PlannedAd, StitchAvail, VariantEntry } from '../stitch/manifest-rewriter.js';
import { isVodPlaylist, type MediaPlaylist } from '../../media/playlist-scanner.js';
import { adIdsOf } from '../decide/packed-tracking.js';

/** Key of a break's start on one track in the session's observed marks (avail ids never start with '@'). */
export const anchorKey = (availId: string): string => `@${availId}`;

/**
 * An avail decided on one track placed on another: by program date time when both carry it (tracks may number
 * their segments differently), else by media sequence. By PDT, the start is the segment that starts the break when it
 * is in the window (exact), else the start seen before on this track (`anchor`), else an estimate from the window's
 * first segment (segments vary in length: never good enough to list by, see issue 26), clamped so that a break that
 * ended before the window never takes its first segments.
 */
export async function placeAvail(planner: Pick<AdPlanner, 'plan'>, record: AvailRecord, pl: MediaPlaylist, entry: VariantEntry, absorbed: readonly number[] | undefined, anchor?: number): Promise<StitchAvail | undefined> {
  if (!record.ads.length) return undefined;
  const plans = new Map<string, CreativePlan | undefined>();
  for (const ad of record.ads) if (!plans.has(ad.creativeKey)) plans.set(ad.creativeKey, await planner.plan(ad.creativeKey));
  const placed = placeAvailNow((key) => plans.get(key), record, pl, entry, absorbed, anchor);
  // (every plan was asked above: one missing has expired, and the break plays its content)
  return placed === PLAN_NOT_HERE ? undefined : placed;
}

/** placeAvailNow's answer when a creative's plan is not held in this process: ask placeAvail (which reads the store). */
export const PLAN_NOT_HERE = Symbol('plan not here');

/**
 * placeAvail without a wait, for the plans this process holds (`planNow`): the playlist's hot path places every break
 * of the session on every reload, and a promise per break and per ad was most of what it allocated.
 */
export function placeAvailNow(planNow: (key: string) => CreativePlan | undefined, record: AvailRecord, pl: MediaPlaylist, entry: VariantEntry, absorbed: readonly number[] | undefined, anchor?: number): StitchAvail | undefined | typeof PLAN_NOT_HERE {
  if (!record.ads.length) return undefined;
  let start = record.startSegmentIndex;
  let end = record.endSegmentIndex;
  let slot = record.slotDuration;
  const first = pl.segments[0];
  if (record.startPdtMs !== undefined && first?.pdtMs !== undefined) {
    const own = pl.segments.length > 1 ? nominal(pl) : slot;
    // The same cut (within 10 %): the record's slots, not this window's median, which moves as the window slides.
    if (Math.abs(own - slot) > slot / 10) slot = own;
    const span = record.insert ? 0 : Math.round(((record.endSegmentIndex - record.startSegmentIndex) * record.slotDuration) / slot);
    const at = startOf(pl, record.startPdtMs, slot);
    if (at !== undefined) start = at;
    else if (anchor !== undefined) start = anchor;
    else {
      // Not in the window: an estimate, kept outside it (a break ahead never takes a listed segment, one that ended
      // before the window never reaches into it).
      const last = pl.segments[pl.segments.length - 1]!;
      const lastEndMs = last.pdtMs === undefined ? undefined : last.pdtMs + last.duration * 1000;
      if (lastEndMs !== undefined && record.startPdtMs >= lastEndMs - slot * 500) {
        start = last.mediaSequence + 1 + Math.max(0, Math.round((record.startPdtMs - lastEndMs) / 1000 / slot));
      } else {
        start = first.mediaSequence + Math.round((record.startPdtMs - first.pdtMs) / 1000 / slot);
        const endMs = record.startPdtMs + record.duration * 1000;
        if (!record.insert && endMs <= first.pdtMs + slot * 500 && start + span > first.mediaSequence) start = first.mediaSequence - span;
      }
    }
    end = start + span;
  }
  const ads: PlannedAd[] = [];
  const contentMapped = pl.segments.some((s) => s.map !== undefined);
  // split once per record, not once per ad (the playlist's hot path)
  const adIds = adIdsOf(record);
  for (let adIndex = 0; adIndex < record.ads.length; adIndex++) {
    const ad = record.ads[adIndex]!;
    const plan = planNow(ad.creativeKey);
    if (!plan) return PLAN_NOT_HERE;
    const track = trackFor(plan, entry);
    // An ad in another container than the content (fMP4 under TS content, or the reverse) would break the stream
    // (HLS cannot unset an EXT-X-MAP): play the content instead (issue 19 point 1).
    if (entry.kind !== 'subtitles' && track && (track.mapUri !== undefined) !== contentMapped) return undefined;
    const planned: PlannedAd = { id: adIds[adIndex] ?? '', duration: ad.duration, segments: entry.kind === 'subtitles' ? [] : (track?.segments ?? []) };
    if (ad.creativeId) planned.creativeId = ad.creativeId;
    if (ad.universalAdId) planned.universalAdId = ad.universalAdId;
    if (ad.adSystem) planned.adSystem = ad.adSystem;
    if (track?.mapUri && entry.kind !== 'subtitles') planned.mapUri = track.mapUri;
    if (ad.slate) planned.slate = true;
    if (ad.bumper) planned.bumper = ad.bumper;
    ads.push(planned);
  }
  const avail: StitchAvail = { id: record.id, startSegmentIndex: start, endSegmentIndex: end, duration: record.duration, slotDuration: slot, ads };
  if (record.startPdtMs !== undefined) avail.startPdtMs = record.startPdtMs;
  if (record.insert) avail.insert = true;
  if (absorbed?.length) avail.absorbedDiscontinuities = absorbed;
  return avail;
}

/** The media sequence of the segment starting at `pdtMs` (within half a slot), when the window holds it. */
function startOf(pl: MediaPlaylist, pdtMs: number, slot: number): number | undefined {
  const last = pl.segments[pl.segments.length - 1];
  // a VOD's post-roll starts where the last segment ends
  if (isVodPlaylist(pl) && last?.pdtMs !== undefined && Math.abs(last.pdtMs + last.duration * 1000 - pdtMs) < slot * 500) return last.mediaSequence + 1;
  let bestSeq: number | undefined;
  let bestOff = slot * 500;
  for (const s of pl.segments) {
    if (s.pdtMs === undefined) continue;
    const off = Math.abs(s.pdtMs - pdtMs);
    if (off < bestOff) { bestSeq = s.mediaSequence; bestOff = off; }
  }
  return bestSeq;
}

/** The median segment duration: once per scanned playlist (shared by every session of an origin refresh). */
const nominals = new WeakMap<MediaPlaylist, number>();
function nominal(pl: MediaPlaylist): number {
  let n = nominals.get(pl);
  if (n === undefined) {
    const ds = pl.segments.map((s) => s.duration).sort((a, b) => a - b);
    n = Math.round((ds[Math.floor(ds.length / 2)] ?? pl.targetDuration) * 1000) / 1000 || pl.targetDuration || 6;
    nominals.set(pl, n);
  }
  return n;
}

/** The creative's track matching a session track: its audio for audio, else the closest video rendition. */
export function trackFor(plan: CreativePlan, entry: VariantEntry): CreativeTrack | undefined {
  if (entry.kind === 'audio') return plan.audio;
  return closestTrack(plan, entry);
}
