// Ad decisions once per session and avail (issue 5 "Ad decisions"): asks the ad server, keeps the ads whose creatives
// are prepared and fit, and stores the plan so every rendition, reload and instance stitches the same ads.
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { creativeKey, type PreparedCreative, type TargetLadder } from '../vod-encoder/prepare-creative.js';
import type { VodResult } from '../vod-encoder/errors.js';
import type { Avail } from './cue-finder.js';
import type { SsaiMetrics } from './metrics.js';
import type { SessionStore } from './session-store.js';
import { pickAdsForAvail, type AdDecisionClient, type LinearAd, type MediaFileInfo, type TrackingEvents } from './vast-decision.js';
import { h264Of, type ContentShape } from './content-shape.js';
import type { VariantEntry } from './manifest-rewriter.js';
import { isVodPlaylist, type MediaPlaylist } from '../media/playlist-scanner.js';
import { availsFromVmap, fetchVmapBreaks, VMAP_AVAIL_PREFIX } from './vmap-avails.js';
import { packRecord } from './packed-tracking.js';
import type { AdDecisionRequest, AdDecisionResult, VmapBreak } from './vast-decision.js';

export type Rung = { width: number; height: number; bandwidth: number; frameRate?: number; codecs?: string };

export interface SessionRecord {
  id: string;
  guid: string;
  /** absolute origin URL of the playlist the session started from */
  origin: string;
  variants: VariantEntry[];
  rungs: Rung[];
  playerParams: Record<string, string>;
  createdAt: number;
}

export type CreativeTrack = { segments: Array<{ uri: string; duration: number }>; mapUri?: string; bandwidth: number; width?: number; height?: number };
/** A prepared creative as URLs: shared by every session (stored once per creative key). */
export type CreativePlan = { key: string; duration: number; video: CreativeTrack[]; audio?: CreativeTrack };

export type PlannedAdRecord = {
  adId: string; creativeId: string; duration: number; creativeKey: string; slate?: boolean;
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
    ads: record.ads.map((a) => (a.slate ? { adId: '', creativeId: '', duration: a.duration, creativeKey: a.creativeKey, slate: true } : { adId: '', creativeId: '', duration: a.duration, creativeKey: a.creativeKey })),
    skipped: [], retired: true,
  };
  if (record.startPdtMs !== undefined) kept.startPdtMs = record.startPdtMs;
  return kept;
}

export type PrepareFn = (mediaFileUrl: string, ladder: TargetLadder, creativeId: string) => Promise<VodResult<PreparedCreative>>;
/** The encoder's prepareSlate: a still image held for `durationSec` with silence, as renditions of the ladder. */
export type PrepareSlateFn = (imageUrl: string, ladder: TargetLadder, durationSec: number) => Promise<VodResult<PreparedCreative>>;

/** The ad id and creative id a slate filler is recorded under (tracking JSON, segment routes). */
export const SLATE_AD_ID = 'slate';

export interface AdPlannerDeps {
  decision: AdDecisionClient;
  store: SessionStore;
  /** the encoder's prepareCreative; absent when no worker is reachable (ads are then skipped) */
  prepare: () => PrepareFn | undefined;
  /** public URL of a file of a prepared creative, undefined when the creative is not in the served media store */
  creativeUrl: (dir: string, relPath: string) => string | undefined;
  metrics: SsaiMetrics;
  logger: Logger;
  now: () => number;
  /** how long a playlist request waits for a creative being prepared before skipping it this time */
  creativeWaitMs: number;
  sessionTtlMs: number;
  /** avail length assumed while a break without a planned duration is still open */
  defaultAvailSeconds?: number;
  /** the configuration's slate_ad image for a configuration guid; absent or undefined: no slate (content resumes) */
  slateImage?: (guid: string) => Promise<string | undefined>;
  /** the encoder's prepareSlate (queue or local, see ssai/slate.ts); absent when none is reachable */
  prepareSlate?: () => PrepareSlateFn | undefined;
}

type CreativeState = { state: 'ready'; plan: CreativePlan } | { state: 'pending'; promise: Promise<CreativePlan | undefined> } | { state: 'failed'; reason: string; at: number };

const FAILED_RETRY_MS = 60_000;
/** The longest VOD insertion (VMAP break, CUE-OUT:0): its ads are asked for and picked up to this length. */
export const MAX_INSERT_SECONDS = 120;

export const keys = {
  session: (sid: string) => `session:${sid}`,
  availList: (sid: string) => `avails:${sid}`,
  avail: (sid: string, availId: string) => `avail:${sid}:${availId}`,
  lock: (sid: string, availId: string) => `lock:${sid}:${availId}`,
  observed: (sid: string, n: number) => `obs:${sid}:${n}`,
  creative: (key: string) => `creative:${key}`,
  vmap: (sid: string) => `vmap:${sid}`,
};

/** Ladder and shape of the content, for creatives prepared to match it (issue 19 point 1). */
export function ladderOf(rungs: Rung[], segmentDurationSec: number, shape?: ContentShape): TargetLadder {
  const byHeight = new Map<number, Rung>();
  for (const r of rungs) if (r.width > 0 && r.height > 0 && !byHeight.has(r.height)) byHeight.set(r.height, r);
  const list = [...byHeight.values()].sort((a, b) => b.height - a.height);
  if (!list.length) list.push({ width: 1280, height: 720, bandwidth: 3_128_000 });
  const fps = rungs.find((r) => r.frameRate)?.frameRate ?? 30;
  return {
    rungs: list.map((r) => {
      const video = Math.max(200_000, Math.round((r.bandwidth - 128_000) / 1000) * 1000);
      return { width: r.width, height: r.height, videoBitrate: video, maxrate: Math.round(video * 1.07), bufsize: video * 2, ...h264Of(r.codecs) };
    }),
    audioBitrate: 128_000, audioSampleRate: shape?.audioSampleRate ?? 48_000, audioChannels: shape?.audioChannels ?? 2,
    frameRate: Math.min(60, Math.round(fps * 1000) / 1000),
    segmentDurationSec: Math.max(1, Math.round(segmentDurationSec)),
    ...(shape ? { container: shape.container, muxedAudio: shape.muxedAudio } : {}),
  };
}

/** The rendition of a creative closest in bandwidth and resolution to a content variant. */
export function closestTrack(plan: CreativePlan, entry: VariantEntry): CreativeTrack | undefined {
  const h = Number((entry.resolution ?? '').split('x')[1] ?? 0);
  const bw = entry.bandwidth ?? 0;
  let best: CreativeTrack | undefined;
  let bestScore = Infinity;
  for (const t of plan.video) {
    const score = Math.abs(Math.log((t.bandwidth || 1) / (bw || 1))) + (h && t.height ? Math.abs(Math.log(t.height / h)) : 0);
    if (score < bestScore) { best = t; bestScore = score; }
  }
  return best;
}

function pickMediaFile(files: MediaFileInfo[]): MediaFileInfo | undefined {
  const video = files.filter((f) => /mp4|quicktime|webm|mpeg|octet/i.test(f.type) || f.type === '');
  const list = video.length ? video : files;
  return [...list].sort((a, b) => (b.height - a.height) || (b.bitrate - a.bitrate))[0];
}

export class AdPlanner {
  /** by creative key: bounded, a creative dropped here is read again from the store (or prepared again: cached on disk) */
  private readonly creatives = new LRUCache<string, CreativeState>({ max: 10_000 });
  private readonly deciding = new Map<string, Promise<AvailRecord>>();
  private readonly vmapFetches = new Map<string, Promise<VmapBreak[]>>();
  private readonly ladders = new WeakMap<Rung[], Map<string, TargetLadder>>();
  private readonly creativeKeys = new WeakMap<TargetLadder, Map<string, string>>();

  constructor(private readonly deps: AdPlannerDeps) {}

  /** A session was made: its decisions will follow (the decision client may take a moment to get ready). */
  expectDecisions(): void {
    this.deps.decision.prepare?.();
  }

  /** The session's decision for an avail, made on first sight and stored for every later request. */
  async recordFor(session: SessionRecord, adServerUrl: string, avail: Avail, targetDuration: number, shape?: ContentShape): Promise<AvailRecord> {
    const key = keys.avail(session.id, avail.id);
    const known = await this.deps.store.get<AvailRecord>(key);
    if (known) return known;
    let pending = this.deciding.get(key);
    if (!pending) {
      pending = this.decideOnce(session, adServerUrl, avail, targetDuration, shape).finally(() => this.deciding.delete(key));
      this.deciding.set(key, pending);
    }
    return pending;
  }

  private async decideOnce(session: SessionRecord, adServerUrl: string, avail: Avail, targetDuration: number, shape?: ContentShape): Promise<AvailRecord> {
    const { store } = this.deps;
    const key = keys.avail(session.id, avail.id);
    // Another instance may be deciding this avail: the lock winner decides, the others wait for its record.
    const lock = await store.setIfAbsent(keys.lock(session.id, avail.id), 1, 5000);
    if (!lock.created) {
      for (let waited = 0; waited < 4500; waited += 50) {
        await new Promise((r) => setTimeout(r, 50));
        const rec = await store.get<AvailRecord>(key);
        if (rec) return rec;
      }
    }
    await store.push(keys.availList(session.id), avail.id, this.deps.sessionTtlMs);
    const ids = [...new Set(await store.list(keys.availList(session.id)))];
    const index = Math.max(0, ids.indexOf(avail.id));
    // Stored with its beacon URLs packed: the store and the hot path keep them as one string (memory per viewer).
    const record = packRecord(await this.decide(session, adServerUrl, avail, index, targetDuration, shape));
    const stored = await store.setIfAbsent(key, record, this.deps.sessionTtlMs);
    // Counted once the record is the session's: a decision that lost to a late record (slate) fills nothing.
    if (stored.created) this.countFill(record);
    return stored.value;
  }

  private countFill(record: AvailRecord): void {
    this.deps.metrics.availSeconds.inc(Math.max(0, record.duration));
    this.deps.metrics.filledSeconds.inc(record.ads.reduce((t, a) => t + (a.slate ? 0 : a.duration), 0));
  }

  /**
   * The record of an avail whose decision missed its deadline (issue 19 point 4): the configuration's slate when it
   * is already prepared, else the content; stored unless the decision landed meanwhile (then that one is returned).
   * The decision still in flight finds this record stored and keeps it: a session never changes its mind.
   */
  async lateRecord(session: SessionRecord, avail: Avail, targetDuration: number, shape?: ContentShape): Promise<AvailRecord> {
    const { store } = this.deps;
    const key = keys.avail(session.id, avail.id);
    const known = await store.get<AvailRecord>(key);
    if (known) return known;
    await store.push(keys.availList(session.id), avail.id, this.deps.sessionTtlMs);
    const ids = [...new Set(await store.list(keys.availList(session.id)))];
    const duration = avail.insert ? 0 : avail.durationFromCue || !avail.open ? avail.duration : Math.max(avail.duration, this.deps.defaultAvailSeconds ?? 30);
    const record: AvailRecord = {
      id: avail.id, index: Math.max(0, ids.indexOf(avail.id)), startSegmentIndex: avail.startSegmentIndex, endSegmentIndex: avail.startSegmentIndex,
      duration, slotDuration: avail.slotDuration > 0 ? avail.slotDuration : targetDuration, ads: [], skipped: [],
      error: 'late: the ad decision missed its deadline',
    };
    if (avail.startPdtMs !== undefined) record.startPdtMs = avail.startPdtMs;
    if (avail.insert) record.insert = true;
    if (avail.contentOffsetSeconds !== undefined) record.contentOffsetSeconds = avail.contentOffsetSeconds;
    await this.fillWithSlate(session, record, avail, targetDuration, 0, shape, 0);
    const stored = await store.setIfAbsent(key, record, this.deps.sessionTtlMs);
    if (stored.created) this.countFill(record);
    return stored.value;
  }

  private async decide(session: SessionRecord, adServerUrl: string, avail: Avail, index: number, targetDuration: number, shape?: ContentShape): Promise<AvailRecord> {
    const { metrics } = this.deps;
    const vmap = avail.id.startsWith(VMAP_AVAIL_PREFIX);
    const insert = avail.insert === true;
    // An insertion lasts as long as its ads: they are asked for and picked up to MAX_INSERT_SECONDS.
    const duration = insert ? MAX_INSERT_SECONDS
      : vmap || avail.durationFromCue || !avail.open ? avail.duration : Math.max(avail.duration, this.deps.defaultAvailSeconds ?? 30);
    const slot = avail.slotDuration > 0 ? avail.slotDuration : targetDuration;
    const record: AvailRecord = {
      id: avail.id, index, startSegmentIndex: avail.startSegmentIndex, endSegmentIndex: avail.startSegmentIndex,
      duration: insert ? 0 : duration, slotDuration: slot, ads: [], skipped: [],
    };
    if (avail.startPdtMs !== undefined) record.startPdtMs = avail.startPdtMs;
    if (insert) record.insert = true;
    if (avail.contentOffsetSeconds !== undefined) record.contentOffsetSeconds = avail.contentOffsetSeconds;
    const result = await this.decision(session, {
      adServerUrl, sessionId: session.id, availIndex: index, availDuration: duration,
      ...(avail.scte35 ? { scte35: avail.scte35 } : {}), playerParams: session.playerParams,
    }, avail);
    if (!result.ok) {
      metrics.adServerErrors.inc({ reason: result.error.reason });
      record.error = `${result.error.reason}: ${result.error.message}`;
      this.deps.logger.info({ session: session.id, avail: avail.id, reason: result.error.reason }, 'ad decision failed; the avail plays slate or content');
      await this.fillWithSlate(session, record, avail, targetDuration, 0, shape);
      return record;
    }
    const ladder = this.ladderFor(session.rungs, targetDuration, shape);
    const ready: Array<{ ad: LinearAd; plan: CreativePlan }> = [];
    await Promise.all(result.ads.map(async (ad) => {
      const file = pickMediaFile(ad.mediaFiles);
      if (!file) { record.skipped.push({ adId: ad.adId, reason: 'no usable media file' }); return; }
      const got = await this.creative(file.url, ladder, ad.creativeId || ad.adId);
      if (typeof got === 'string') { record.skipped.push({ adId: ad.adId, reason: got }); metrics.creativesSkipped.inc({ reason: got.split(':')[0] ?? got }); return; }
      ready.push({ ad, plan: got });
    }));
    // keep the ad server's order
    ready.sort((a, b) => result.ads.indexOf(a.ad) - result.ads.indexOf(b.ad));
    const picked = pickAdsForAvail(ready.map((r) => ({ ...r, duration: r.plan.duration })), duration);
    for (const r of ready) if (!picked.ads.some((p) => p.ad === r.ad)) record.skipped.push({ adId: r.ad.adId, reason: 'does not fit the avail' });
    let total = 0;
    for (const p of picked.ads) {
      record.ads.push({ adId: p.ad.adId, creativeId: p.ad.creativeId, duration: p.plan.duration, creativeKey: p.plan.key, tracking: p.ad.trackingEvents });
      total += p.plan.duration;
    }
    // Every ad taken, in the ad server's order: the decision thread's pack is the record's (slate, after them, has none).
    if (result.packedTracking !== undefined && picked.ads.length === result.ads.length) record.tracking = result.packedTracking;
    if (insert) record.duration = Math.round(total * 1000) / 1000;
    await this.fillWithSlate(session, record, avail, targetDuration, total, shape);
    return record;
  }

  /**
   * Fills the part of the avail the ads leave (all of it when the decision failed) with the configuration's slate,
   * when the break's length is known and the slate is prepared in time; otherwise the break ends when the ads end
   * and the content resumes at the next slot (today's behaviour). Sets the record's endSegmentIndex either way.
   */
  private async fillWithSlate(session: SessionRecord, record: AvailRecord, avail: Avail, targetDuration: number, adSeconds: number, shape?: ContentShape, waitMs = this.deps.creativeWaitMs): Promise<void> {
    if (record.insert) { record.endSegmentIndex = record.startSegmentIndex; return; } // nothing replaced: nothing to fill
    const slot = record.slotDuration;
    let total = adSeconds;
    // Only a break of known length is filled: an open break without a planned duration may end at any time.
    const gap = Math.round((record.duration - adSeconds) * 1000) / 1000;
    // (A VMAP avail's duration is only the room up to the next break: no slate either.)
    const known = !avail.id.startsWith(VMAP_AVAIL_PREFIX) && (avail.durationFromCue || !avail.open);
    if (known && gap >= Math.min(1, slot / 2)) {
      const got = await this.slate(session, targetDuration, gap, shape, waitMs);
      if (typeof got === 'string') {
        if (got !== 'no slate') record.skipped.push({ adId: SLATE_AD_ID, reason: got });
      } else {
        record.ads.push({ adId: SLATE_AD_ID, creativeId: SLATE_AD_ID, duration: got.duration, creativeKey: got.key, slate: true });
        total += got.duration;
      }
    }
    record.endSegmentIndex = avail.startSegmentIndex + Math.ceil(total / slot - 1e-3);
    if (avail.endSegmentIndex !== undefined) record.endSegmentIndex = Math.min(record.endSegmentIndex, avail.endSegmentIndex);
    if (record.endSegmentIndex <= record.startSegmentIndex) record.ads = [];
  }

  /** The configuration's slate for `seconds`, or why there is none this time ('no slate' when none is configured). */
  private async slate(session: SessionRecord, targetDuration: number, seconds: number, shape: ContentShape | undefined, waitMs: number): Promise<CreativePlan | string> {
    const image = await this.deps.slateImage?.(session.guid).catch(() => undefined);
    if (!image) return 'no slate';
    const ladder = ladderOf(session.rungs, targetDuration, shape);
    // Whole milliseconds: one prepared slate per gap length (prepareSlate caches by length, image and ladder).
    const durationSec = Math.round(seconds * 1000) / 1000;
    const key = creativeKey(`slate-${durationSec}`, image, ladder);
    const got = await this.prepared(key, () => {
      const prepare = this.deps.prepareSlate?.();
      return prepare && (() => prepare(image, ladder, durationSec));
    }, waitMs);
    if (typeof got === 'string') this.deps.metrics.creativesSkipped.inc({ reason: `slate ${got.split(':')[0] ?? got}` });
    return typeof got === 'string' ? `slate ${got}` : got;
  }

  /** The ad decision of an avail: a VMAP avail takes its own break's VAST (inline or ad tag), the others ask the ad server. */
  private async decision(session: SessionRecord, req: AdDecisionRequest, avail: Avail): Promise<AdDecisionResult> {
    const { decision } = this.deps;
    if (avail.id.startsWith(VMAP_AVAIL_PREFIX)) {
      const breaks = (await this.deps.store.get<{ breaks: VmapBreak[] }>(keys.vmap(session.id)))?.breaks ?? [];
      const id = avail.id.slice(VMAP_AVAIL_PREFIX.length);
      const b = breaks.find((x, i) => (x.breakId || String(i)) === id);
      if (b?.vastXml && decision.fromText) return decision.fromText(b.vastXml, req.adServerUrl);
      if (b?.adTagUri) return decision.decide({ ...req, adServerUrl: b.adTagUri });
    }
    return decision.decide(req);
  }

  /**
   * Avails of a VOD (ENDLIST) playlist from the ad server's VMAP, asked once per session (the breaks are kept with
   * the session, so every rendition, reload and instance places the same breaks). Empty when the ad server answers
   * anything but VMAP or fails: cues still apply. The server calls this for ENDLIST playlists without cue avails.
   */
  async vmapAvails(session: SessionRecord, adServerUrl: string, pl: MediaPlaylist): Promise<Avail[]> {
    if (!isVodPlaylist(pl)) return [];
    const key = keys.vmap(session.id);
    let breaks = (await this.deps.store.get<{ breaks: VmapBreak[] }>(key))?.breaks;
    if (!breaks) {
      let pending = this.vmapFetches.get(key);
      if (!pending) {
        pending = (async () => {
          const got = await fetchVmapBreaks(adServerUrl, { sessionId: session.id, availIndex: 0, availDuration: 0, playerParams: session.playerParams });
          if (!got.ok && got.reason === 'error') {
            this.deps.metrics.adServerErrors.inc({ reason: 'http' });
            this.deps.logger.info({ session: session.id, reason: got.message }, 'VMAP request failed; the VOD plays its cues only');
          }
          const list = got.ok ? got.breaks : [];
          return (await this.deps.store.setIfAbsent(key, { breaks: list }, this.deps.sessionTtlMs)).value.breaks;
        })().finally(() => this.vmapFetches.delete(key));
        this.vmapFetches.set(key, pending);
      }
      breaks = await pending;
    }
    const placed = availsFromVmap(pl, breaks);
    for (const w of placed.warnings) this.deps.logger.debug({ session: session.id, ...w }, 'VMAP break not placed');
    return placed.avails;
  }

  /** The creative as URLs, or the reason it is skipped this time (it is queued for preparation). */
  /**
   * The ladder of a layout (rungs shared by its sessions) and shape, one object per combination: with it, a creative's
   * key is hashed once per ladder, not per decision (two SHA-1s of the ladder's JSON each: issue 19 point 4).
   */
  private ladderFor(rungs: Rung[], targetDuration: number, shape?: ContentShape): TargetLadder {
    let byShape = this.ladders.get(rungs);
    if (!byShape) { byShape = new Map(); this.ladders.set(rungs, byShape); }
    const k = `${targetDuration} ${shape ? JSON.stringify(shape) : ''}`;
    let ladder = byShape.get(k);
    if (!ladder) {
      if (byShape.size >= 64) byShape.clear();
      ladder = ladderOf(rungs, targetDuration, shape);
      byShape.set(k, ladder);
    }
    return ladder;
  }

  private keyOf(creativeId: string, mediaFileUrl: string, ladder: TargetLadder): string {
    let keys = this.creativeKeys.get(ladder);
    if (!keys) { keys = new Map(); this.creativeKeys.set(ladder, keys); }
    const k = `${creativeId}\n${mediaFileUrl}`;
    let key = keys.get(k);
    if (key === undefined) {
      if (keys.size >= 1000) keys.clear(); // personalised creative ids would grow it without end
      key = creativeKey(creativeId, mediaFileUrl, ladder);
      keys.set(k, key);
    }
    return key;
  }

  private async creative(mediaFileUrl: string, ladder: TargetLadder, creativeId: string): Promise<CreativePlan | string> {
    return this.prepared(this.keyOf(creativeId, mediaFileUrl, ladder), () => {
      const prepare = this.deps.prepare();
      return prepare && (() => prepare(mediaFileUrl, ladder, creativeId));
    });
  }

  /**
   * A creative (or slate) as URLs by key: from this process, the shared store, or prepared now by `starter`'s job
   * (waiting creativeWaitMs at most; a later request picks up the result). `starter` gives undefined without an encoder.
   */
  private async prepared(key: string, starter: () => (() => Promise<VodResult<PreparedCreative>>) | undefined, waitMs = this.deps.creativeWaitMs): Promise<CreativePlan | string> {
    const local = this.creatives.get(key);
    if (local?.state === 'ready') return local.plan;
    if (local?.state === 'failed' && this.deps.now() - local.at < FAILED_RETRY_MS) return `failed: ${local.reason}`;
    const shared = await this.deps.store.get<CreativePlan>(keys.creative(key));
    if (shared) { this.creatives.set(key, { state: 'ready', plan: shared }); return shared; }
    let promise: Promise<CreativePlan | undefined>;
    if (local?.state === 'pending') promise = local.promise;
    else {
      const start = starter();
      if (!start) return 'not prepared: no encoder available';
      // Never rejects: a rejection would stay in 'pending' and fail every later request for this creative.
      promise = start().then(async (r) => {
        if (!r.ok) { this.creatives.set(key, { state: 'failed', reason: r.error.reason || r.error.message, at: this.deps.now() }); return undefined; }
        const plan = this.toPlan(key, r.value);
        if (!plan) { this.creatives.set(key, { state: 'failed', reason: 'prepared outside the served media store', at: this.deps.now() }); return undefined; }
        await this.deps.store.set(keys.creative(key), plan, 7 * 24 * 3_600_000);
        this.creatives.set(key, { state: 'ready', plan });
        return plan;
      }).catch((e: unknown) => {
        this.creatives.set(key, { state: 'failed', reason: e instanceof Error ? e.message : String(e), at: this.deps.now() });
        return undefined;
      });
      this.creatives.set(key, { state: 'pending', promise });
    }
    const plan = await Promise.race([promise, new Promise<'wait'>((r) => setTimeout(() => r('wait'), waitMs).unref())]);
    if (plan === 'wait') return 'not prepared: queued for preparation';
    if (!plan) {
      const s = this.creatives.get(key);
      return `failed: ${s?.state === 'failed' ? s.reason : 'unknown'}`;
    }
    return plan;
  }

  private toPlan(key: string, p: PreparedCreative): CreativePlan | undefined {
    const url = (rel: string) => this.deps.creativeUrl(p.dir, rel);
    const track = (segments: PreparedCreative['renditions'][number]['segments'], init: string | undefined, bandwidth: number, size?: { width: number; height: number }): CreativeTrack | undefined => {
      const segs = segments.map((s) => ({ uri: url(s.path), duration: s.duration }));
      if (segs.some((s) => s.uri === undefined)) return undefined;
      const t: CreativeTrack = { segments: segs as Array<{ uri: string; duration: number }>, bandwidth, ...(size ?? {}) };
      if (init) { const m = url(init); if (!m) return undefined; t.mapUri = m; }
      return t;
    };
    const video: CreativeTrack[] = [];
    for (const r of p.renditions) {
      const t = track(r.segments, r.initSegment, r.bandwidth, { width: r.width, height: r.height });
      if (!t) return undefined;
      video.push(t);
    }
    const audio = p.audioOnly && track(p.audioOnly.segments, p.audioOnly.initSegment, p.audioOnly.bandwidth);
    return { key, duration: p.durationSec, video, ...(audio ? { audio } : {}) };
  }

  /** Reads the plan of a creative for segment redirects (immutable: cached in this process). */
  async plan(key: string): Promise<CreativePlan | undefined> {
    const local = this.creatives.get(key);
    if (local?.state === 'ready') return local.plan;
    const shared = await this.deps.store.get<CreativePlan>(keys.creative(key));
    if (shared) this.creatives.set(key, { state: 'ready', plan: shared });
    return shared;
  }
}

/** Maps a creative directory inside the media store to its public URL. */
export function mediaStoreUrl(mediaDir: string, mediaBaseUrl: () => string): (dir: string, rel: string) => string | undefined {
  return (dir, rel) => {
    const relDir = path.relative(mediaDir, dir);
    if (relDir.startsWith('..') || path.isAbsolute(relDir)) return undefined;
    const parts = [...relDir.split(path.sep), ...rel.split('/')].filter(Boolean).map(encodeURIComponent);
    return `${mediaBaseUrl()}/${parts.join('/')}`;
  };
}
