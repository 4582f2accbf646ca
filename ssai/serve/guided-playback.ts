// Server-guided playback (issue 30): a guided session's media playlists (the origin's content and an HLS Interstitial
// per break, the same bytes for every viewer of a stream), the breaks of a VOD's VMAP, the background decision of
// breaks announced ahead, and the decision a break's asset list answers. The routes are server.ts's; the pure parts
// are ssai/stitch/interstitials.ts.
import type { Logger } from 'pino';
import type { AdinsertConfig } from '../../kernel/seams/adinserts.js';
import { isVodPlaylist, type MediaPlaylist } from '../../media/playlist-scanner.js';
import type { AdPlanner } from '../decide/ad-planner.js';
import type { AvailRecord, SessionRecord } from '../decide/avail-record.js';
import type { DecisionScheduler } from '../decide/decision-scheduler.js';
import { ssaiError, type SsaiError } from '../errors.js';
import type { SsaiMetrics } from '../metrics.js';
import type { Avail } from '../parse/cue-finder.js';
import { referenceVideo, type ContentShapes } from '../stitch/content-shape.js';
import { anchorAtLast, AnnouncedBreaks, firstSegmentMsFrom, guidedMediaPlaylist, hasOwnDates, interstitialBreaks, LiveDateAnchors, segmentDates, vmapInterstitials, VOD_DATE_BASE_MS, type DateAnchor, type InterstitialBreak } from '../stitch/interstitials.js';
import { stitchMediaPlaylist, type VariantEntry } from '../stitch/manifest-rewriter.js';
import type { PlaylistPolicy } from '../stitch/playlist-policy.js';
import type { SessionStore } from '../store/session-store.js';
import { relativeAssetListUri } from './asset-routes.js';
import { PREROLL_AVAIL_ID } from '../decide/live-preroll.js';
import { prerollInterstitial, prerollStartMs, withPrerollInterstitial } from '../stitch/preroll-interstitial.js';
import { breakPolicies, suppresses, type BreakGate } from './break-gate.js';
import { mergeRecords, type HotSession, type HotSessions } from './hot-sessions.js';
import { playlist, type Reply } from './http-reply.js';
import { derive, type OriginFetcher, type OriginOk } from './origin-fetcher.js';
import { parsedMedia } from './parsed-media.js';
import type { StoreFallbacks } from './store-outage.js';

export interface GuidedPlaybackDeps {
  origin: OriginFetcher;
  planner: Pick<AdPlanner, 'vmapAvails'>;
  store: SessionStore;
  metrics: SsaiMetrics;
  logger: Logger;
  now: () => number;
  decisionDeadlineMs?: number;
  sessions: HotSessions;
  fallbacks: StoreFallbacks;
  shapes: ContentShapes;
  decisions: DecisionScheduler;
  /** avail suppression before a decision (issue 31) */
  gate: BreakGate;
  /** the break plays its content, kept so: no store, no decision every proxy would agree on (issue 27) */
  degrade: (hot: HotSession, avail: Avail, target: number) => void;
  /** a decision joins the session's cached list */
  keepDecided: (hot: HotSession, decided: AvailRecord) => Promise<void>;
}

/** How long a stream's shared date anchor outlives its last refresh: an hour without viewers, then the clock again. */
const DATE_ANCHOR_TTL_MS = 3_600_000;
const dateAnchorKey = (stream: string): string => `dates:${stream}`;

/** Target durations a guided asset list may wait for its decision (see decision). */
const GUIDED_DEADLINE_TARGETS = 2;

export class GuidedPlayback {
  /** dates of guided live streams whose origin writes none */
  private readonly liveDates = new LiveDateAnchors();
  /** the start dates of the guided breaks announced, by stream */
  private readonly announced = new AnnouncedBreaks();

  constructor(private readonly deps: GuidedPlaybackDeps) {}

  /**
   * A guided media playlist (issue 30): the origin's content as it is, an interstitial per break pointing at the
   * viewer's asset list (a relative URL: the text names no viewer). Rendered once per origin fetch and track kind,
   * whatever the audience; a CDN may hold a live one for half a target duration.
   */
  playlist(fetched: OriginOk, parsed: { playlist: MediaPlaylist; avails: Avail[] }, entry: VariantEntry, session: SessionRecord, vod: boolean, policy: PlaylistPolicy, preroll = false): Reply {
    const pl = parsed.playlist;
    const target = pl.targetDuration || 6;
    const text = derive(fetched, `guided ${entry.kind} ${policy.key}${preroll ? ' preroll' : ''}`, () => {
      const passThrough = this.passThrough(fetched, pl, entry, session, policy);
      // the interstitials ride on the video playlists, whose dates players schedule them by
      if (entry.kind !== 'video') return passThrough;
      const { firstSegmentMs, breaks } = this.breaks(fetched, parsed.playlist, parsed.avails, session, vod);
      const text = guidedMediaPlaylist(passThrough, pl, breaks, { assetListUri: relativeAssetListUri, ...(firstSegmentMs !== undefined ? { firstSegmentMs } : {}) });
      // a live pre-roll (issue 31): one interstitial every viewer's player plays at its start, from its own asset list
      const first = segmentDates(pl, firstSegmentMs)[0];
      return preroll && first !== undefined
        ? withPrerollInterstitial(text, prerollInterstitial(PREROLL_AVAIL_ID, prerollStartMs(first), relativeAssetListUri(PREROLL_AVAIL_ID))) : text;
    });
    const reply = playlist(text, !vod);
    if (!vod) reply.headers = { 'cache-control': `public, max-age=${Math.max(1, Math.floor(target / 2))}` };
    return reply;
  }

  /**
   * A guided live stream whose origin writes no dates is dated from one anchor every proxy process shares through the
   * session store (the first to see the stream sets it from its clock), so a viewer whose reloads land on different
   * processes sees the same dates and interstitial ids. Once per origin fetch, before the playlist and the asset list
   * are rendered; the anchor is written back as the window moves. The store away: this process's own anchor.
   */
  async shareDates(fetched: OriginOk, pl: MediaPlaylist, session: SessionRecord, vod: boolean): Promise<void> {
    if (vod || !pl.segments.length || hasOwnDates(pl) || this.deps.store.available === false) return;
    await derive(fetched, 'guided shared dates', async () => {
      const key = dateAnchorKey(session.origin);
      try {
        const stored = await this.deps.store.get<DateAnchor>(key)
          ?? (await this.deps.store.setIfAbsent(key, this.liveDates.anchor(session.origin) ?? LiveDateAnchors.fresh(pl, this.deps.now()), DATE_ANCHOR_TTL_MS)).value;
        this.liveDates.adopt(session.origin, stored);
        const moved = anchorAtLast(pl, firstSegmentMsFrom(stored, pl));
        if (moved.sequence !== stored.sequence) await this.deps.store.set(key, moved, DATE_ANCHOR_TTL_MS);
      } catch (e) {
        this.deps.logger.warn({ err: e, stream: session.origin }, 'guided dates: the shared anchor is unreadable; this process dates the stream alone');
      }
    });
  }

  /**
   * The origin's playlist as the proxy passes content on (absolute URIs, every tag kept), once per origin fetch; its
   * rendition reports name the other renditions by their number, relative like the asset lists. Once per
   * configuration policy too (cues kept or removed, CDN prefixes).
   */
  private passThrough(fetched: OriginOk, pl: MediaPlaylist, entry: VariantEntry, session: SessionRecord, policy: PlaylistPolicy): string {
    return derive(fetched, `guided pass-through ${entry.kind} ${policy.key}`, () => stitchMediaPlaylist(pl, {
      originUrl: entry.uri, avails: [], trackKind: entry.kind, policy,
      renditionReportUri: (abs) => { const other = session.variants.find((v) => v.uri === abs); return other ? `${other.n}.m3u8` : undefined; },
    }).text);
  }

  /** A guided VOD without cues: the content and an interstitial per break of the session's VMAP (none: the content). */
  async vmapPlaylist(fetched: OriginOk, pl: MediaPlaylist, entry: VariantEntry, session: SessionRecord, adServer: string, policy: PlaylistPolicy): Promise<Reply> {
    const breaks = await this.vmapBreaks(pl, session, adServer);
    const firstSegmentMs = hasOwnDates(pl) ? undefined : VOD_DATE_BASE_MS;
    const text = guidedMediaPlaylist(this.passThrough(fetched, pl, entry, session, policy), pl, breaks, { assetListUri: relativeAssetListUri, ...(firstSegmentMs !== undefined ? { firstSegmentMs } : {}) });
    return playlist(text, false);
  }

  /** The VMAP breaks of a guided VOD session as interstitials (the store away: none, the content plays). */
  private async vmapBreaks(pl: MediaPlaylist, session: SessionRecord, adServer: string): Promise<InterstitialBreak[]> {
    const avails = await this.deps.fallbacks.or(this.deps.planner.vmapAvails(session, adServer, pl), [], 'read');
    return vmapInterstitials(pl, avails, segmentDates(pl, hasOwnDates(pl) ? undefined : VOD_DATE_BASE_MS));
  }

  /** A guided playlist's dates (where the origin has none), breaks and the date its window ends: once per origin fetch. */
  private breaks(fetched: OriginOk, pl: MediaPlaylist, avails: Avail[], session: SessionRecord, vod: boolean):
    { firstSegmentMs?: number; breaks: InterstitialBreak[]; windowEndMs?: number } {
    return derive(fetched, 'guided breaks', () => {
      const firstSegmentMs = hasOwnDates(pl) ? undefined : vod ? VOD_DATE_BASE_MS : this.liveDates.firstSegmentMs(session.origin, pl, this.deps.now());
      const dates = segmentDates(pl, firstSegmentMs);
      const breaks = interstitialBreaks(pl, avails, dates, vod ? undefined : (ms, slotMs) => this.announced.near(session.origin, ms, slotMs));
      if (!vod) this.announced.remember(session.origin, breaks);
      const last = pl.segments[pl.segments.length - 1];
      const lastDate = dates[dates.length - 1];
      return { ...(firstSegmentMs !== undefined ? { firstSegmentMs } : {}), breaks,
        ...(last && lastDate !== undefined ? { windowEndMs: lastDate + last.duration * 1000 } : {}) };
    });
  }

  /**
   * Breaks announced ahead of a guided viewer's window are decided in the background within their lead (issue 30
   * point 3, as the stitched mode does): the asset list then answers at once, and the ad server sees the decisions
   * spread over the lead (and under the configuration's cap). Named by their interstitial id, as the asset list asks.
   */
  prefetch(fetched: OriginOk, parsed: { playlist: MediaPlaylist; avails: Avail[] }, hot: HotSession, config: AdinsertConfig): void {
    if (this.deps.store.available === false) return;
    const pl = parsed.playlist;
    const last = pl.segments[pl.segments.length - 1];
    if (!last) return;
    const { breaks, windowEndMs } = this.breaks(fetched, pl, parsed.avails, hot.session, false);
    const sid = hot.session.id;
    const ahead = breaks.filter((b) => b.avail.startSegmentIndex > last.mediaSequence
      && !hot.records.some((r) => r.id === b.id) && !this.deps.decisions.isPending(sid, b.id));
    if (!ahead.length) return;
    const target = pl.targetDuration || 6;
    void (async () => {
      const shape = await this.deps.shapes.shapeOf(hot.session.variants, pl);
      const policies = breakPolicies(config);
      for (const b of ahead) {
        const leadMs = windowEndMs === undefined ? (b.avail.startSegmentIndex - last.mediaSequence - 1) * target * 1000 : b.startMs - windowEndMs;
        const gate = await this.deps.gate.admit(config, hot, { ...b.avail, id: b.id }, pl, target);
        if ('record' in gate) { await this.deps.keepDecided(hot, gate.record); continue; }
        this.deps.decisions.ahead({ session: hot.session, adServer: config.adServer, avail: gate.avail, targetDuration: target, shape, ...(policies ? { policies } : {}) }, leadMs);
      }
    })().catch((e: unknown) => this.deps.logger.warn({ err: e, session: sid }, 'a guided break could not be prefetched'));
  }

  /**
   * A guided break's decision for this viewer: the one made (on any rendition, reload or instance), else made now from
   * the break as the stream's video playlist lists it, within the deadline a playlist has (then the late record).
   */
  async decision(config: AdinsertConfig, hot: HotSession, breakId: string): Promise<AvailRecord | SsaiError> {
    const session = hot.session;
    const known = hot.records.find((r) => r.id === breakId);
    if (known) return known;
    mergeRecords(hot, await this.deps.fallbacks.or(this.deps.sessions.records(session.id), [], 'read'));
    const stored = hot.records.find((r) => r.id === breakId);
    if (stored) return stored;
    const ref = referenceVideo(session.variants) ?? session.variants[0];
    const fetched = ref ? await this.deps.origin.fetch(ref.uri) : undefined;
    if (fetched && !fetched.ok) return fetched.error;
    const parsed = fetched ? parsedMedia(fetched, this.deps.metrics) : undefined;
    if (!fetched || !parsed?.playlist) return ssaiError('BREAK_NOT_FOUND');
    // the break as the interstitial named it (by its start), decided under that name; a VOD without cues: its VMAP's
    const vod = isVodPlaylist(parsed.playlist);
    await this.shareDates(fetched, parsed.playlist, session, vod);
    const found = vod && !parsed.avails.length ? (await this.vmapBreaks(parsed.playlist, session, config.adServer)).find((b) => b.id === breakId)
      : this.breaks(fetched, parsed.playlist, parsed.avails, session, vod).breaks.find((b) => b.id === breakId);
    if (!found) return ssaiError('BREAK_NOT_FOUND');
    const avail: Avail = { ...found.avail, id: breakId };
    const target = parsed.playlist.targetDuration || 6;
    // No store, no decision every proxy would agree on (issue 27): the break plays its content.
    if (this.deps.store.available === false) { this.deps.degrade(hot, avail, target); return hot.records.find((r) => r.id === breakId) ?? ssaiError('BREAK_NOT_FOUND'); }
    // Avail suppression (issue 31): a suppressed break's asset list is empty, no ad-server request; a joined one may
    // be decided for its rest.
    let admitted = avail;
    if (!vod && suppresses(config)) {
      const gate = await this.deps.gate.admit(config, hot, avail, parsed.playlist, target);
      if ('record' in gate) { await this.deps.keepDecided(hot, gate.record); return hot.records.find((r) => r.id === breakId) ?? gate.record; }
      admitted = gate.avail;
    }
    const shape = await this.deps.shapes.shapeOf(session.variants, parsed.playlist);
    // A player asks for an asset list ahead of the break (hls.js: once the interstitial is listed, playing about three
    // target durations behind the edge) and plays the content meanwhile: the decision may take two target durations,
    // not the deadline of a playlist the player waits for.
    const deadlineMs = Math.max(this.deps.decisionDeadlineMs ?? 0, GUIDED_DEADLINE_TARGETS * target * 1000);
    const policies = breakPolicies(config);
    const decided = await this.deps.decisions.inWindow({ session, adServer: config.adServer, avail: admitted, targetDuration: target, shape, ...(policies ? { policies } : {}) }, deadlineMs);
    await this.deps.keepDecided(hot, decided);
    return hot.records.find((r) => r.id === breakId) ?? decided;
  }
}
