// Ad decisions once per session and avail (issue 5 "Ad decisions"): asks the ad server, keeps the ads whose creatives
// are prepared and fit, and stores the plan so every rendition, reload and instance stitches the same ads.
import type { Logger } from 'pino';
import { keys, type AvailRecord, type PlannedAdRecord, type SessionRecord } from './avail-record.js';
import { personalised, type BreakPolicies } from './break-policy.js';
import type { ContentShape } from '../stitch/content-shape.js';
import { CREATIVE_QUEUED, CreativeCache, type CreativeCacheDeps } from './creative-cache.js';
import type { CreativePlan } from '../stitch/creative-plan.js';
import type { Avail } from '../parse/cue-finder.js';
import type { LinearAd, MediaFileInfo } from '../parse/linear-ad.js';
import type { SsaiMetrics } from '../metrics.js';
import { packRecord } from './packed-tracking.js';
import type { MediaPlaylist } from '../../media/playlist-scanner.js';
import { SlateFill, type SlateFillDeps } from './slate-fill.js';
import { availRandom, pickAdsForAvail, unknownVariables, VAST_ERROR, withErrorCode, type AdDecisionClient, type AdDecisionRequest, type AdDecisionResult, type VastErrorReport } from './vast-decision.js';
import { VMAP_AVAIL_PREFIX } from './vmap-avails.js';
import { VmapBreaks, type VmapBreaksDeps } from './vmap-breaks.js';
import type { DebugDecisions } from './debug-decisions.js';
import { bracketed, bumperRoom, Bumpers, bumperSeconds } from './bumpers.js';
import { isPreroll, PREROLL_TOLERANCE_SECONDS } from './live-preroll.js';

export interface AdPlannerDeps extends CreativeCacheDeps, SlateFillDeps, VmapBreaksDeps {
  decision: AdDecisionClient;
  metrics: SsaiMetrics;
  logger: Logger;
  sessionTtlMs: number;
  /** avail length assumed while a break without a planned duration is still open */
  defaultAvailSeconds?: number;
  /** the log of debug sessions (issue 31 item 8) */
  debug?: DebugDecisions;
  /**
   * sends a decision's VAST error URLs (their [ERRORCODE] filled), fire and forget: the server's beacon queue. Called
   * once per decision, as a decision is made once per session and break.
   */
  sendErrorBeacons?: (urls: string[]) => void;
}

/** The longest VOD insertion (VMAP break, CUE-OUT:0): its ads are asked for and picked up to this length. */
export const MAX_INSERT_SECONDS = 120;

function pickMediaFile(files: MediaFileInfo[]): MediaFileInfo | undefined {
  const video = files.filter((f) => /mp4|quicktime|webm|mpeg|octet/i.test(f.type) || f.type === '');
  const list = video.length ? video : files;
  return [...list].sort((a, b) => (b.height - a.height) || (b.bitrate - a.bitrate))[0];
}

/** Ad server URLs read for unknown variables, and the unknown names logged (once per process; bounded). */
const loggedTemplates = new Set<string>();
const loggedVariables = new Set<string>();

/** A decision's lock in the store: renewed every third of this while its holder decides. */
const DECISION_LOCK_TTL_MS = 5_000;
/** How long another instance waits for the lock holder's record at most (the playlists have their own deadline). */
const MAX_DECISION_LOCK_WAIT_MS = 60_000;

export class AdPlanner {
  private readonly deciding = new Map<string, Promise<AvailRecord>>();
  private readonly creatives: CreativeCache;
  private readonly slate: SlateFill;
  private readonly vmap: VmapBreaks;
  private readonly bumpers: Bumpers;

  constructor(private readonly deps: AdPlannerDeps) {
    this.creatives = new CreativeCache(deps);
    this.bumpers = new Bumpers(deps, this.creatives);
    this.slate = new SlateFill(deps, this.creatives);
    this.vmap = new VmapBreaks(deps);
  }

  /** A session was made: its decisions will follow (the decision client may take a moment to get ready). */
  expectDecisions(): void {
    this.deps.decision.prepare?.();
  }

  /** The session's decision for an avail, made on first sight and stored for every later request. */
  async recordFor(session: SessionRecord, adServerUrl: string, avail: Avail, targetDuration: number, shape?: ContentShape, policies?: BreakPolicies): Promise<AvailRecord> {
    const key = keys.avail(session.id, avail.id);
    const known = await this.deps.store.get<AvailRecord>(key);
    if (known) return known;
    let pending = this.deciding.get(key);
    if (!pending) {
      pending = this.decideOnce(session, adServerUrl, avail, targetDuration, shape, policies).finally(() => this.deciding.delete(key));
      this.deciding.set(key, pending);
    }
    return pending;
  }

  private async decideOnce(session: SessionRecord, adServerUrl: string, avail: Avail, targetDuration: number, shape?: ContentShape, policies?: BreakPolicies): Promise<AvailRecord> {
    const { store } = this.deps;
    const key = keys.avail(session.id, avail.id);
    // Another instance may be deciding this avail: the lock winner decides, the others wait for its record as long as
    // the winner holds the lock (renewed while it decides: a creative's first preparation outlasts a fixed wait on a
    // busy machine, and a second decision would ask the ad server twice). A lock gone without a record (the winner
    // died) leaves the decision to this instance. A store of this process only has no other instance, and this one
    // decides an avail once through `deciding`: no lock, no renewal timer (10,000 of them at a no-notice break).
    let renew: NodeJS.Timeout | undefined;
    if (!store.local) {
      const lockKey = keys.lock(session.id, avail.id);
      const landed = await this.lockOrWait(key, lockKey);
      if (landed) return landed;
      renew = setInterval(() => { store.set(lockKey, 1, DECISION_LOCK_TTL_MS).catch(() => undefined); }, DECISION_LOCK_TTL_MS / 3);
      renew.unref();
    }
    try {
      await store.push(keys.availList(session.id), avail.id, this.deps.sessionTtlMs);
      const ids = [...new Set(await store.list(keys.availList(session.id)))];
      const index = Math.max(0, ids.indexOf(avail.id));
      // Stored with its beacon URLs packed: the store and the hot path keep them as one string (memory per viewer).
      const record = packRecord(await this.decide(session, adServerUrl, avail, index, targetDuration, shape, policies));
      const stored = await store.setIfAbsent(key, record, this.deps.sessionTtlMs);
      // Counted once the record is the session's: a decision that lost to a late record (slate) fills nothing.
      if (stored.created) this.countFill(record);
      if (session.debug) this.deps.debug?.decided(session, stored.value, stored.created ? undefined : record);
      return stored.value;
    } finally {
      clearInterval(renew);
    }
  }

  /**
   * Takes the decision lock of a shared store; when another instance holds it, waits for that one's record (returned)
   * as long as the lock lasts, at most MAX_DECISION_LOCK_WAIT_MS. Undefined: this instance decides.
   */
  private async lockOrWait(key: string, lockKey: string): Promise<AvailRecord | undefined> {
    const { store } = this.deps;
    const lock = await store.setIfAbsent(lockKey, 1, DECISION_LOCK_TTL_MS);
    if (lock.created) return undefined;
    for (const until = Date.now() + MAX_DECISION_LOCK_WAIT_MS; Date.now() < until;) {
      await new Promise((r) => setTimeout(r, 50));
      const rec = await store.get<AvailRecord>(key);
      if (rec) return rec;
      if ((await store.get(lockKey)) === undefined) return store.get<AvailRecord>(key);
    }
    return undefined;
  }

  private countFill(record: AvailRecord): void {
    if (record.unpersonalised) this.deps.metrics.breaksUnpersonalised.inc({ reason: record.unpersonalised });
    // (a suppressed break was never an opportunity for this viewer: it counts in neither the avail nor the fill)
    if (record.unpersonalised === 'suppression') return;
    this.deps.metrics.availSeconds.inc(Math.max(0, record.duration));
    // (ads only: the slate and the bumpers are no ads)
    this.deps.metrics.filledSeconds.inc(record.ads.reduce((t, a) => t + (a.slate || a.bumper ? 0 : a.duration), 0));
  }

  /**
   * The record of an avail whose decision missed its deadline (issue 19 point 4): the configuration's slate when it
   * is already prepared, else the content; stored unless the decision landed meanwhile (then that one is returned).
   * The decision still in flight finds this record stored and keeps it: a session never changes its mind.
   */
  async lateRecord(session: SessionRecord, avail: Avail, targetDuration: number, shape?: ContentShape): Promise<AvailRecord> {
    return this.recordWithoutDecision(session, avail, targetDuration, { error: 'late: the ad decision missed its deadline' },
      (record) => this.slate.fillWithSlate(session, record, avail, targetDuration, 0, shape, 0));
  }

  /**
   * The record of a live break avail suppression leaves unfilled (issue 31 point 2): its content, no ad-server request,
   * stored like any decision (unless one landed meanwhile: then that one is returned).
   */
  async suppressedRecord(session: SessionRecord, avail: Avail, targetDuration: number): Promise<AvailRecord> {
    return this.recordWithoutDecision(session, avail, targetDuration, { unpersonalised: 'suppression' }, async (record) => { record.endSegmentIndex = record.startSegmentIndex; });
  }

  private async recordWithoutDecision(session: SessionRecord, avail: Avail, targetDuration: number, why: Pick<AvailRecord, 'error' | 'unpersonalised'>,
    fill: (record: AvailRecord) => Promise<void>): Promise<AvailRecord> {
    const { store } = this.deps;
    const key = keys.avail(session.id, avail.id);
    const known = await store.get<AvailRecord>(key);
    if (known) return known;
    await store.push(keys.availList(session.id), avail.id, this.deps.sessionTtlMs);
    const ids = [...new Set(await store.list(keys.availList(session.id)))];
    const duration = avail.insert ? 0 : avail.durationFromCue || !avail.open ? avail.duration : Math.max(avail.duration, this.deps.defaultAvailSeconds ?? 30);
    const record: AvailRecord = {
      id: avail.id, index: Math.max(0, ids.indexOf(avail.id)), startSegmentIndex: avail.startSegmentIndex, endSegmentIndex: avail.startSegmentIndex,
      duration, slotDuration: avail.slotDuration > 0 ? avail.slotDuration : targetDuration, ads: [], skipped: [], ...why,
    };
    if (avail.startPdtMs !== undefined) record.startPdtMs = avail.startPdtMs;
    if (avail.insert) record.insert = true;
    if (avail.contentOffsetSeconds !== undefined) record.contentOffsetSeconds = avail.contentOffsetSeconds;
    await fill(record);
    const stored = await store.setIfAbsent(key, record, this.deps.sessionTtlMs);
    if (stored.created) this.countFill(record);
    if (session.debug && stored.created) this.deps.debug?.decided(session, record);
    return stored.value;
  }

  private async decide(session: SessionRecord, adServerUrl: string, avail: Avail, index: number, targetDuration: number, shape?: ContentShape, policies?: BreakPolicies): Promise<AvailRecord> {
    const { metrics } = this.deps;
    // a live pre-roll (issue 31) lasts as long as its ads, up to its maximum: judged as a VMAP break is (no threshold)
    const vmap = avail.id.startsWith(VMAP_AVAIL_PREFIX) || isPreroll(avail.id);
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
    this.logUnknownVariables(adServerUrl);
    const result = await this.decision(session, {
      adServerUrl, sessionId: session.id, availIndex: index, availDuration: duration, availRandom: availRandom(session.guid, avail),
      ...(avail.scte35 ? { scte35: avail.scte35 } : {}), playerParams: session.playerParams,
      ...(session.userAgent !== undefined ? { userAgent: session.userAgent } : {}), ...(session.clientIp !== undefined ? { clientIp: session.clientIp } : {}),
    }, avail);
    const errors: VastErrorReport[] = [...(result.vastErrors ?? [])];
    try {
      return await this.planAds(session, record, avail, result, errors, { duration, insert, vmap, targetDuration, ...(shape ? { shape } : {}), ...(policies ? { policies } : {}) });
    } finally {
      this.reportErrors(errors);
    }
  }

  /** Fires a decision's VAST errors, each URL once (a chain may name one at several levels). */
  private reportErrors(errors: VastErrorReport[]): void {
    if (!errors.length) return;
    const urls = new Set<string>();
    for (const e of errors) {
      this.deps.metrics.vastErrors.inc({ code: String(e.code) });
      for (const url of e.urls) urls.add(withErrorCode(url, e.code));
    }
    this.deps.sendErrorBeacons?.([...urls]);
  }

  private async planAds(session: SessionRecord, record: AvailRecord, avail: Avail, result: AdDecisionResult, errors: VastErrorReport[],
    how: { duration: number; insert: boolean; vmap: boolean; targetDuration: number; shape?: ContentShape; policies?: BreakPolicies }): Promise<AvailRecord> {
    const { duration, insert, vmap, targetDuration, shape, policies } = how;
    const { metrics } = this.deps;
    if (!result.ok) {
      metrics.adServerErrors.inc({ reason: result.error.reason });
      record.error = `${result.error.reason}: ${result.error.message}`;
      this.deps.logger.info({ session: session.id, avail: avail.id, reason: result.error.reason, error: result.error.message }, 'ad decision failed; the avail plays slate or content');
      await this.slate.fillWithSlate(session, record, avail, targetDuration, 0, shape);
      return record;
    }
    const ladder = this.creatives.ladderFor(session.rungs, targetDuration, shape);
    const ready: Array<{ ad: LinearAd; plan: CreativePlan }> = [];
    // The bumpers are prepared beside the ads (one not ready is left out of this break, as an ad is).
    const bumping = this.bumpers.prepared(policies, ladder, record.skipped);
    await Promise.all(result.ads.map(async (ad) => {
      const file = pickMediaFile(ad.mediaFiles);
      if (!file) {
        record.skipped.push({ adId: ad.adId, reason: 'no usable media file' });
        errors.push({ code: VAST_ERROR.noSupportedMediaFile, urls: ad.trackingEvents.error });
        return;
      }
      const got = await this.creatives.creative(file.url, ladder, ad.creativeId || ad.adId);
      if (typeof got === 'string') {
        record.skipped.push({ adId: ad.adId, reason: got });
        metrics.creativesSkipped.inc({ reason: got.split(':')[0] ?? got });
        // Not ready in time (still being prepared) is a media file timeout; a creative that cannot be prepared, or no
        // encoder to prepare it, leaves no media file the proxy can play.
        errors.push({ code: got === CREATIVE_QUEUED ? VAST_ERROR.mediaFileTimeout : VAST_ERROR.noSupportedMediaFile, urls: ad.trackingEvents.error });
        return;
      }
      ready.push({ ad, plan: got });
    }));
    // keep the ad server's order
    ready.sort((a, b) => result.ads.indexOf(a.ad) - result.ads.indexOf(b.ad));
    const bumpers = await bumping;
    // The ads fit the break less its bumpers; an insertion grows by them instead.
    const picked = pickAdsForAvail(ready.map((r) => ({ ...r, duration: r.plan.duration })), bumperRoom(duration, insert, bumpers), isPreroll(avail.id) ? PREROLL_TOLERANCE_SECONDS : undefined);
    for (const r of ready) if (!picked.ads.some((p) => p.ad === r.ad)) record.skipped.push({ adId: r.ad.adId, reason: 'does not fit the avail' });
    // (the bumpers play only around ads: a break without ads has none)
    const adSeconds = picked.ads.reduce((t, p) => t + p.plan.duration, 0) + (picked.ads.length ? bumperSeconds(bumpers) : 0);
    // A break of known length the ads leave too much of is not personalised (issue 31 point 1): its content plays,
    // neither ads nor slate. (An insertion lasts as long as its ads; a VMAP avail's length is only the room to the next.)
    if (!insert && !vmap && (avail.durationFromCue || !avail.open) && !personalised(duration, adSeconds, policies?.personalizationThresholdSeconds)) {
      for (const p of picked.ads) record.skipped.push({ adId: p.ad.adId, reason: 'the break is not personalised: its ads leave more unfilled than the personalization threshold' });
      record.unpersonalised = 'threshold';
      record.endSegmentIndex = record.startSegmentIndex;
      return record;
    }
    const ads: PlannedAdRecord[] = picked.ads.map((p) => {
      const planned: PlannedAdRecord = { adId: p.ad.adId, creativeId: p.ad.creativeId, duration: p.plan.duration, creativeKey: p.plan.key, tracking: p.ad.trackingEvents };
      if (p.ad.universalAdId) planned.universalAdId = p.ad.universalAdId;
      if (p.ad.adSystem) planned.adSystem = p.ad.adSystem;
      return planned;
    });
    record.ads = bracketed(ads, bumpers);
    const total = adSeconds;
    // Every ad taken, in the ad server's order, first in the record: the decision thread's pack is the record's (the
    // end bumper and the slate, after them, have none; a start bumper before them would shift it).
    if (result.packedTracking !== undefined && picked.ads.length === result.ads.length && record.ads[0] === ads[0]) record.tracking = result.packedTracking;
    if (insert) record.duration = Math.round(total * 1000) / 1000;
    await this.slate.fillWithSlate(session, record, avail, targetDuration, total, shape);
    return record;
  }

  /** An unknown variable of our namespaces in an ad server URL is left empty, and logged once per name per process. */
  private logUnknownVariables(template: string): void {
    if (loggedTemplates.has(template)) return;
    if (loggedTemplates.size < 1000) loggedTemplates.add(template);
    for (const name of unknownVariables(template)) {
      if (loggedVariables.has(name) || loggedVariables.size >= 1000) continue;
      loggedVariables.add(name);
      this.deps.logger.warn({ variable: name }, `the ad server URL names [${name}], which the proxy does not know: it is sent empty`);
    }
  }

  /** The ad decision of an avail: a VMAP avail takes its own break's VAST (inline or ad tag), the others ask the ad server. */
  private async decision(session: SessionRecord, req: AdDecisionRequest, avail: Avail): Promise<AdDecisionResult> {
    const decision = session.debug && this.deps.debug ? this.deps.debug.clientFor(session, avail.id, this.deps.decision) : this.deps.decision;
    const b = await this.vmap.breakOf(session, avail);
    if (b?.vastXml && decision.fromText) return decision.fromText(b.vastXml, req.adServerUrl);
    if (b?.adTagUri) return decision.decide({ ...req, adServerUrl: b.adTagUri });
    return decision.decide(req);
  }

  /**
   * Avails of a VOD (ENDLIST) playlist from the ad server's VMAP, asked once per session (ssai/vmap-breaks.ts). The
   * server calls this for ENDLIST playlists without cue avails.
   */
  vmapAvails(session: SessionRecord, adServerUrl: string, pl: MediaPlaylist): Promise<Avail[]> {
    return this.vmap.vmapAvails(session, adServerUrl, pl);
  }

  /** Reads the plan of a creative for segment redirects (immutable: cached in this process). */
  plan(key: string): Promise<CreativePlan | undefined> {
    return this.creatives.plan(key);
  }

  /** The plan when this process holds it ready (no store read), else undefined: then ask plan(). */
  planNow(key: string): CreativePlan | undefined {
    return this.creatives.planNow(key);
  }
}
