// What a session keeps in the store (issue 5 "Ad decisions"): the session, its breaks' decisions, and the key scheme
// they are stored under, read by every rendition, reload and instance.
import type { TrackingEvents } from '../parse/linear-ad.js';
import type { VariantEntry } from '../stitch/manifest-rewriter.js';

/** A video rendition of the content as its multivariant playlist lists it (the encoder's ladder rungs are vod-encoder's Rung). */
export type ContentRung = { width: number; height: number; bandwidth: number; frameRate?: number; codecs?: string };

export interface SessionRecord {
  id: string;
  guid: string;
  /** absolute origin URL of the playlist the session started from */
  origin: string;
  variants: VariantEntry[];
  rungs: ContentRung[];
  playerParams: Record<string, string>;
  /** the User-Agent and the client's address of the request that made the session ([session.user_agent], [session.client_ip]) */
  userAgent?: string;
  clientIp?: string;
  /** 'guided': breaks reach the viewer as HLS Interstitials (issue 30); absent: stitched */
  mode?: 'guided';
  /** started with ads.debug=1 (issue 31): its fetches, ad requests and decisions go to its debug log */
  debug?: true;
  createdAt: number;
}

export type PlannedAdRecord = {
  adId: string; creativeId: string; duration: number; creativeKey: string; slate?: boolean;
  /** the configuration's bumper at the start or the end of the break (ssai/decide/bumpers.ts): no ad, no tracking */
  bumper?: 'start' | 'end';
  /** the VAST's UniversalAdId and AdSystem (linear-ad.ts), when it gave them: the same for every viewer of a creative */
  universalAdId?: string; adSystem?: string;
  /** while the decision is made, and in records stored before the record's packed `tracking` (read with trackingOf) */
  tracking?: TrackingEvents;
};
export interface AvailRecord {
  id: string;
  index: number;
  startSegmentIndex: number;
  endSegmentIndex: number;
  duration: number;
  slotDuration: number;
  startPdtMs?: number;
  ads: PlannedAdRecord[];
  skipped: Array<{ adId: string; reason: string }>;
  /** the ad server failure, when the decision failed */
  error?: string;
  /**
   * the break plays its content by an ad-operations policy (issue 31): its ads left more of it unfilled than the
   * personalization threshold, or avail suppression kept it from being decided
   */
  unpersonalised?: 'threshold' | 'suppression';
  /**
   * when it was decided (ms since the epoch): in records stored before; no longer written, as nothing read it and it
   * cost a 16-byte heap number per break per viewer (issue 19 point 4)
   */
  decidedAt?: number;
  /** VOD insertion (issue 19 point 2): the ads go before startSegmentIndex, no content is replaced (end = start) */
  insert?: true;
  /** VOD: seconds of content before the break */
  contentOffsetSeconds?: number;
  /**
   * the ads' ids, joined by NUL, when they are kept apart from `ads` (whose adId is then ''): read them with
   * adIdsOf(record) (ssai/packed-tracking.ts)
   */
  adIds?: string;
  /** the ads' tracking events, packed (ssai/packed-tracking.ts): read them with trackingOf(record, adIndex) */
  tracking?: string;
  /** live: the break left the window for good; only what the numbering of later playlists needs is kept (retired()) */
  retired?: true;
}

/**
 * A live break long out of the window, as it is kept for the rest of the session (issue 19 point 4, memory per
 * viewer): the numbering of every later playlist still counts its segments (its place, slots and creatives), but its
 * beacons, ad ids, skips and error are gone with the players' need of them (every player has fetched its segments).
 * What is left is mostly shared between viewers given the same creatives (the store keeps equal small values once).
 */
export function retired(record: AvailRecord): AvailRecord {
  const kept: AvailRecord = {
    id: record.id, index: record.index, startSegmentIndex: record.startSegmentIndex, endSegmentIndex: record.endSegmentIndex,
    duration: record.duration, slotDuration: record.slotDuration,
    ads: record.ads.map((a) => ({
      adId: '', creativeId: '', duration: a.duration, creativeKey: a.creativeKey, ...(a.slate ? { slate: true } : {}), ...(a.bumper ? { bumper: a.bumper } : {}),
    })),
    skipped: [], retired: true,
  };
  if (record.startPdtMs !== undefined) kept.startPdtMs = record.startPdtMs;
  return kept;
}

export const keys = {
  session: (sid: string) => `session:${sid}`,
  availList: (sid: string) => `avails:${sid}`,
  avail: (sid: string, availId: string) => `avail:${sid}:${availId}`,
  lock: (sid: string, availId: string) => `lock:${sid}:${availId}`,
  observed: (sid: string, n: number) => `obs:${sid}:${n}`,
  /** the origin discontinuities the session's breaks absorbed, as any of its tracks saw them (by break and start) */
  sessionObserved: (sid: string) => `obs:${sid}:session`,
  creative: (key: string) => `creative:${key}`,
  vmap: (sid: string) => `vmap:${sid}`,
  /** the viewer's live edge at the session's first live playlist (avail suppression, issue 31) */
  liveEdge: (sid: string) => `edge:${sid}`,
};
