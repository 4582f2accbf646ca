// Live pre-roll (issue 31 item 4) in the proxy: a viewer joining a live stream gets the ads of the configuration's
// live_preroll_ad_server before the live content, decided once per session and stored like a break's decision, so
// every rendition, reload and instance shows the same. Stitched: a break at the segment the player starts at, in the
// session's first live playlist. Guided: a CUE="PRE" interstitial whose asset list is this decision. The pure rules
// are ssai/decide/live-preroll.ts.
import type { AdinsertConfig } from '../../kernel/seams/adinserts.js';
import { isVodPlaylist, type MediaPlaylist } from '../../media/playlist-scanner.js';
import { keys, type AvailRecord } from '../decide/avail-record.js';
import type { DecisionScheduler } from '../decide/decision-scheduler.js';
import { livePrerollOf, noPrerollRecord, outsidePreroll, PREROLL_AVAIL_ID, PREROLL_JOIN_WINDOW_MS, prerollPlace } from '../decide/live-preroll.js';
import type { SsaiError } from '../errors.js';
import type { SsaiMetrics } from '../metrics.js';
import type { Avail } from '../parse/cue-finder.js';
import { referenceVideo, type ContentShapes } from '../stitch/content-shape.js';
import type { VariantEntry } from '../stitch/manifest-rewriter.js';
import { isSessionStoreUnavailable, type SessionStore } from '../store/session-store.js';
import type { HotSession } from './hot-sessions.js';
import type { OriginFetcher } from './origin-fetcher.js';
import { parsedMedia } from './parsed-media.js';

export interface LivePrerollsDeps {
  store: SessionStore;
  origin: OriginFetcher;
  metrics: SsaiMetrics;
  decisions: Pick<DecisionScheduler, 'inWindow'>;
  shapes: Pick<ContentShapes, 'shapeOf'>;
  now: () => number;
  sessionTtlMs: number;
  /** how long a playlist waits for a decision (default: unbounded) */
  decisionDeadlineMs?: number;
  /** a decision joins the session's cached list */
  keepDecided: (hot: HotSession, decided: AvailRecord) => Promise<void>;
}

/** Target durations a guided pre-roll's asset list may wait for its decision (the player waits at its start). */
const GUIDED_DEADLINE_TARGETS = 2;

export class LivePrerolls {
  /** sessions of this process whose first live playlist went out without a pre-roll (the store was away) */
  private readonly passed = new WeakSet<HotSession>();

  constructor(private readonly deps: LivePrerollsDeps) {}

  /**
   * The cue breaks a stitched live playlist goes on to decide: at the session's first live playlist its pre-roll is
   * decided first (the playlist waits for it, as for a break in the window); later, breaks beginning during the
   * pre-roll are left to their content.
   */
  async stitched(config: AdinsertConfig, hot: HotSession, entry: VariantEntry, pl: MediaPlaylist, found: Avail[], target: number): Promise<Avail[]> {
    const preroll = livePrerollOf(config);
    if (!preroll || isVodPlaylist(pl)) return found;
    if (!hot.records.some((r) => r.id === PREROLL_AVAIL_ID) && this.due(hot)) {
      // placed by the video's window and cues (an audio or subtitle playlist asked first has no cues of its own)
      const reference = referenceVideo(hot.session.variants);
      const video = entry.kind === 'video' ? { playlist: pl, avails: found } : await this.videoPlaylist(hot);
      if (video) await this.decide(hot, video.playlist, video.avails, target, preroll, reference === entry ? pl : undefined);
    }
    return this.outside(hot, found);
  }

  /** The session's reference video playlist and its cue breaks, as the origin gives them now (undefined: unreadable). */
  private async videoPlaylist(hot: HotSession): Promise<{ playlist: MediaPlaylist; avails: Avail[] } | undefined> {
    const ref = referenceVideo(hot.session.variants) ?? hot.session.variants.find((v) => v.kind === 'video');
    const fetched = ref ? await this.deps.origin.fetch(ref.uri) : undefined;
    const parsed = fetched?.ok ? parsedMedia(fetched, this.deps.metrics) : undefined;
    return parsed?.playlist ? { playlist: parsed.playlist, avails: parsed.avails } : undefined;
  }

  /** Cue breaks less those beginning during the session's pre-roll (only breaks announced after the viewer joined can). */
  outside(hot: HotSession, found: Avail[]): Avail[] {
    const record = found.length ? hot.records.find((r) => r.id === PREROLL_AVAIL_ID) : undefined;
    return record?.ads.length ? outsidePreroll(found, record) : found;
  }

  /** Whether a session's pre-roll is to be decided now: at its first live playlist, never later. */
  private due(hot: HotSession): boolean {
    return !this.passed.has(hot) && this.deps.now() - hot.session.createdAt <= PREROLL_JOIN_WINDOW_MS;
  }

  private async decide(hot: HotSession, pl: MediaPlaylist, found: Avail[], target: number, preroll: { adServer: string; maxSeconds: number },
    videoPl: MediaPlaylist | undefined): Promise<AvailRecord | undefined> {
    if (this.deps.store.available === false) { this.passed.add(hot); return undefined; }
    const sid = hot.session.id;
    try {
      // another rendition or instance may have decided it: its place stands, not this window's
      const stored = await this.deps.store.get<AvailRecord>(keys.avail(sid, PREROLL_AVAIL_ID));
      if (stored) { await this.deps.keepDecided(hot, stored); return stored; }
      const place = prerollPlace(pl, found, preroll.maxSeconds);
      if (!place) return undefined;
      if ('skip' in place) return await this.keep(hot, noPrerollRecord(place.skip, target));
      // the creatives take the content's shape, read as a break's decision reads it
      const s = await this.deps.shapes.shapeOf(hot.session.variants, videoPl);
      const decided = await this.deps.decisions.inWindow({ session: hot.session, adServer: preroll.adServer, avail: place.avail, targetDuration: target, ...(s ? { shape: s } : {}) });
      await this.deps.keepDecided(hot, decided);
      return decided;
    } catch (e) {
      if (!isSessionStoreUnavailable(e)) throw e;
      this.passed.add(hot);
      return undefined;
    }
  }

  /**
   * The pre-roll of a guided session, as its asset list answers it: decided on the player's first asking (at its
   * start: hls.js plays a CUE="PRE" interstitial before the content), within two target durations; none for a VOD or
   * a configuration without one (`{"ASSETS":[]}`, not stored).
   */
  async guided(config: AdinsertConfig, hot: HotSession): Promise<AvailRecord | SsaiError> {
    const known = hot.records.find((r) => r.id === PREROLL_AVAIL_ID);
    if (known) return known;
    // read from the stream's video playlist, live or not
    const ref = referenceVideo(hot.session.variants) ?? hot.session.variants[0];
    const fetched = ref ? await this.deps.origin.fetch(ref.uri) : undefined;
    if (fetched && !fetched.ok) return fetched.error;
    const pl = fetched ? parsedMedia(fetched, this.deps.metrics).playlist : undefined;
    const preroll = livePrerollOf(config);
    const target = pl?.targetDuration || 6;
    const last = pl?.segments[pl.segments.length - 1];
    if (!preroll || !pl || !last || isVodPlaylist(pl) || this.deps.store.available === false) return noPrerollRecord('no live pre-roll', target);
    // (its place in the content does not matter: the player plays it before the content, then joins live)
    const avail: Avail = {
      id: PREROLL_AVAIL_ID, startSegmentIndex: last.mediaSequence + 1, startVisible: true, duration: preroll.maxSeconds,
      durationFromCue: true, open: false, kind: 'cue-out', slotDuration: target,
    };
    const decided = await this.deps.decisions.inWindow({ session: hot.session, adServer: preroll.adServer, avail, targetDuration: target },
      Math.max(this.deps.decisionDeadlineMs ?? 0, GUIDED_DEADLINE_TARGETS * target * 1000));
    await this.deps.keepDecided(hot, decided);
    return hot.records.find((r) => r.id === PREROLL_AVAIL_ID) ?? decided;
  }

  /** Stores a pre-roll the viewer does not get, so no later playlist decides one (the first stored wins). */
  private async keep(hot: HotSession, record: AvailRecord): Promise<AvailRecord> {
    const { value } = await this.deps.store.setIfAbsent(keys.avail(hot.session.id, PREROLL_AVAIL_ID), record, this.deps.sessionTtlMs);
    await this.deps.keepDecided(hot, value);
    return value;
  }
}
