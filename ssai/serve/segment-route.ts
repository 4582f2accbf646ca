// The ad routes a player reaches once a break is stitched (issue 5 "Playback"): /v1/segment redirects to the ad
// media and fires the VAST beacons aside; /v1/tracking lists the breaks for client-side reporting.
import { keys, type AvailRecord } from '../decide/avail-record.js';
import type { AdPlanner } from '../decide/ad-planner.js';
import type { CreativeTrack } from '../stitch/creative-plan.js';
import { trackFor } from './avail-placement.js';
import { markKeysOf, type BeaconSender } from './beacons.js';
import type { BeaconItem } from './beacon-delivery.js';
import { ssaiError } from '../errors.js';
import { mergeRecords, type HotSessions } from './hot-sessions.js';
import { fail, json, type Reply } from './http-reply.js';
import { adIdsOf, trackingOf } from '../decide/packed-tracking.js';
import { isSessionStoreUnavailable, type SessionStore } from '../store/session-store.js';

/** The path of a /v1/segment request split on '/': ['', 'v1', 'segment', guid, session, availId, adIndex, n, segment]. */
export type SegmentPath = [string, string, string, string, string, string, string, string, string];

const QUARTILES: Array<[FiredEvent, number]> = [['firstQuartile', 0.25], ['midpoint', 0.5], ['thirdQuartile', 0.75]];
/** The events fired server-side, each once per session, break and ad. */
const FIRED_EVENTS = ['impression', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete'] as const;
type FiredEvent = (typeof FIRED_EVENTS)[number];
/** A break's fired events are one mark set per viewer (beacons.ts markBit): event e of ad i is its bit i × 6 + e. */
const breakMarks = (sid: string, availId: string): string => `${sid}:${availId}`;
/** The session's record of a break, by id (a loop: find() made a closure per redirect). */
function recordOf(records: readonly AvailRecord[], availId: string): AvailRecord | undefined {
  for (const r of records) if (r.id === availId) return r;
  return undefined;
}
const eventBit = (adIndex: number, event: FiredEvent): number => adIndex * FIRED_EVENTS.length + FIRED_EVENTS.indexOf(event);

export class SegmentRoutes {
  constructor(
    private readonly sessions: HotSessions,
    private readonly store: SessionStore,
    private readonly planner: AdPlanner,
    private readonly beacons: BeaconSender,
  ) {}

  /**
   * GET /v1/segment/{guid}/{session}/{availId}/{adIndex}/{n}/{segment}: 302 to the ad media, beacons fired aside. A HEAD
   * (`engine check-playlist` checking availability) gets the same redirect and fires none: no player plays a HEAD.
   */
  async segment(parts: SegmentPath, head = false): Promise<Reply> {
    const [, , , guid, sid, availRaw, adIndexRaw, nRaw, segRaw] = parts;
    // (what is cached here is taken without a wait: a promise each was much of what a redirect allocated)
    const hot = this.sessions.loadNow(guid, sid) ?? await this.sessions.load(guid, sid);
    if ('kind' in hot) return fail(hot);
    const availId = availRaw.includes('%') ? decodeURIComponent(availRaw) : availRaw;
    const record = recordOf(hot.records, availId) ?? await this.store.get<AvailRecord>(keys.avail(sid, availId));
    const ad = record?.ads[Number(adIndexRaw)];
    const entry = hot.session.variants[Number(nRaw)];
    const plan = ad ? this.planner.planNow(ad.creativeKey) ?? await this.planner.plan(ad.creativeKey) : undefined;
    const track = plan && entry ? trackFor(plan, entry) : undefined;
    // The index carries the media's extension (`3.m4s`): ffmpeg-based players refuse segment URIs without one.
    const segIndex = /^\d+/.test(segRaw) ? Number.parseInt(segRaw, 10) : Number.NaN;
    const seg = track?.segments[segIndex];
    if (!record || !ad || !seg || !track) return fail(ssaiError('SEGMENT_NOT_FOUND'));
    // (a bumper is no ad: it has no beacons to fire)
    if (entry?.kind === 'video' && !ad.bumper && !head) this.fireBeacons(sid, record, Number(adIndexRaw), track, segIndex);
    return { status: 302, body: '', type: 'text/plain', headers: { location: seg.uri, 'cache-control': 'no-store' } };
  }

  /** A break was retired (its beacons are gone with its tracking): its fired-event marks are forgotten. */
  forgetMarks(sid: string, record: AvailRecord): Promise<void> {
    return this.beacons.forget(markKeysOf(breakMarks(sid, record.id), record.ads.length * FIRED_EVENTS.length));
  }

  private fireBeacons(sid: string, record: AvailRecord, adIndex: number, track: CreativeTrack, segIndex: number): void {
    const marks = breakMarks(sid, record.id);
    let offset = 0;
    let duration = 0;
    for (let i = 0; i < track.segments.length; i++) {
      const d = track.segments[i]!.duration;
      if (i < segIndex) offset += d;
      duration += d;
    }
    const segEnd = offset + (track.segments[segIndex]?.duration ?? 0);
    if (segIndex === 0) {
      this.fireEvent(marks, record, adIndex, 'impression');
      this.fireEvent(marks, record, adIndex, 'start');
    }
    for (const [event, q] of QUARTILES) {
      const at = q * duration;
      if (at >= offset && at < segEnd) this.fireEvent(marks, record, adIndex, event);
    }
    if (segIndex === track.segments.length - 1) this.fireEvent(marks, record, adIndex, 'complete');
  }

  private fireEvent(marks: string, record: AvailRecord, adIndex: number, event: FiredEvent): void {
    // A packed record's URLs are unpacked where the beacons are sent (the beacon thread), not on this one; a record
    // stored before packing has them at hand.
    const packed = record.tracking !== undefined && !record.ads[adIndex]?.tracking ? record.tracking : undefined;
    const urls: readonly BeaconItem[] = packed !== undefined ? [{ packed, adIndex, event }] : trackingOf(record, adIndex)[event];
    this.beacons.fire(marks, eventBit(adIndex, event), urls);
  }

  /** GET /v1/tracking/{guid}/{session}: avails, ads and their tracking events for client-side reporting. */
  async tracking(guid: string, sid: string): Promise<Reply> {
    const hot = await this.sessions.load(guid, sid);
    if ('kind' in hot) return fail(hot);
    // the store away (issue 27): the breaks this process knows
    const stored = await this.sessions.records(sid).catch((e: unknown) => {
      if (isSessionStoreUnavailable(e)) return undefined;
      throw e;
    });
    if (stored) mergeRecords(hot, stored);
    const records = stored ?? hot.records;
    // VOD insertions move everything after them: a break's place on the stitched timeline counts the ads inserted
    // before it (issue 19 point 2).
    const insertedBefore = (r: AvailRecord): number => records.reduce((t, x) => (x.insert && x !== r
      && (x.startSegmentIndex < r.startSegmentIndex || (x.startSegmentIndex === r.startSegmentIndex && x.index < r.index))
      ? t + x.ads.reduce((d, a) => d + a.duration, 0) : t), 0);
    return json(200, {
      sessionId: sid,
      // as the managed services do, the breaks of the live window and after: a retired one has no beacons left
      avails: records.filter((r) => !r.retired).map((r) => {
        let offset = 0;
        const shift = insertedBefore(r);
        const ids = adIdsOf(r);
        const startMs = r.startPdtMs === undefined ? undefined : r.startPdtMs + shift * 1000;
        return {
          availId: r.id, index: r.index, duration: r.duration,
          ...(startMs !== undefined ? { startTime: new Date(startMs).toISOString() } : {}),
          ...(r.contentOffsetSeconds !== undefined ? { timelineOffsetSeconds: Math.round((r.contentOffsetSeconds + shift) * 1000) / 1000 } : {}),
          ...(r.insert ? { insert: true } : {}),
          startSegmentIndex: r.startSegmentIndex, endSegmentIndex: r.endSegmentIndex,
          ...(r.error ? { error: r.error } : {}), skipped: r.skipped,
          ads: r.ads.map((a, adIndex) => {
            const start = offset;
            offset += a.duration;
            // a bumper (issue 31 item 3) is listed for the timeline's sake: no ad, no beacons
            if (a.bumper) return { adId: ids[adIndex] ?? '', bumper: a.bumper, startOffsetSeconds: start, duration: a.duration, ...(startMs !== undefined ? { startTime: new Date(startMs + start * 1000).toISOString() } : {}), trackingEvents: [] };
            const tracking = trackingOf(r, adIndex);
            const events = (['impression', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete'] as const).map((event) => ({
              event, offsetSeconds: start + a.duration * ({ impression: 0, start: 0, firstQuartile: 0.25, midpoint: 0.5, thirdQuartile: 0.75, complete: 1 }[event]),
              beaconUrls: tracking[event],
            }));
            return { adId: ids[adIndex] ?? '', creativeId: a.creativeId, ...(a.universalAdId ? { universalAdId: a.universalAdId } : {}), ...(a.adSystem ? { adSystem: a.adSystem } : {}), startOffsetSeconds: start, duration: a.duration, ...(startMs !== undefined ? { startTime: new Date(startMs + start * 1000).toISOString() } : {}), trackingEvents: events };
          }),
        };
      }),
    });
  }
}
