// The SSAI proxy's hot path (issue 5 "Playback"): plain node:http, no framework. Moves manifests only: content
// segments stay on the origin, ad segments on the media store behind a beacon-firing redirect. Here: the routes, the
// stitched media playlist and the decisions of breaks in its window; a session's start is session-start.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { AdinsertCache, AdinsertConfig } from '../../kernel/seams/adinserts.js';
import { keys, type AvailRecord, type SessionRecord } from '../decide/avail-record.js';
import type { AdPlanner } from '../decide/ad-planner.js';
import { anchorKey, placeAvail, placeAvailNow, PLAN_NOT_HERE } from './avail-placement.js';
import type { CreativePlan } from '../stitch/creative-plan.js';
import type { BeaconSender } from './beacons.js';
import { ContentShapes, referenceVideo, type ContentShape } from '../stitch/content-shape.js';
import type { Avail } from '../parse/cue-finder.js';
import { DecisionScheduler, type DecisionTask } from '../decide/decision-scheduler.js';
import { ssaiError, type SsaiError } from '../errors.js';
import { HotSessions, mergeRecords, type HotSession } from './hot-sessions.js';
import { clientFrom, clientOf, fail, fastReply, json, playlist, writeReply, type Client, type Reply } from './http-reply.js';
import type { FastGet } from '../../kernel/http/fast-get.js';
import type { SsaiMetrics, PlaylistKind } from '../metrics.js';
import { adIdAttributes, stitchMediaPlaylist, unionOfSorted, type PlannedAd, type StitchAvail, type StitchTail, type VariantEntry } from '../stitch/manifest-rewriter.js';
import { playlistPolicy, type PlaylistPolicy } from '../stitch/playlist-policy.js';
import type { OriginFetcher } from './origin-fetcher.js';
import { isVodPlaylist, type MediaPlaylist } from '../../media/playlist-scanner.js';
import { SegmentRoutes, type SegmentPath } from './segment-route.js';
import { AssetRoutes } from './asset-routes.js';
import { GuidedPlayback } from './guided-playback.js';
import { parsedMedia } from './parsed-media.js';
import { isSessionStoreUnavailable, type SessionStore } from '../store/session-store.js';
import { StoreFallbacks } from './store-outage.js';
import { NO_MARKS } from './track-marks.js';
import { SessionMarks, takenKey } from './session-marks.js';
import { isDatabaseUnavailable } from '../../kernel/store/outage.js';
import { forgetPast, pastOf, sumPast } from './past-breaks.js';
import { longGone, cutRoomMs, cutBefore, sameBreak, isKnown, allKnown, oneRecordPerBreak } from './break-places.js';
import { deliveryDirectives, playbackPathIsClean, segmentExtension } from './playback-path.js';
import type { DebugLog } from '../store/debug-log.js';
import { debugLogReply, originEntry, type Authenticate } from './debug-route.js';
import { BreakGate, breakPolicies, suppresses } from './break-gate.js';
import { InbandCues } from './dash-inband.js';
import { DashPlayback, isMpdPath } from './dash-playback.js';
import { LivePrerolls } from './live-prerolls.js';
import { SessionStart } from './session-start.js';
import { livePrerollOf, PREROLL_AVAIL_ID } from '../decide/live-preroll.js';

export interface SsaiServerDeps {
  /** configurations by guid, any organization (ctx.services.adinserts) */
  lookup: Pick<AdinsertCache, 'get' | 'getNow'>;
  origin: OriginFetcher;
  store: SessionStore;
  planner: AdPlanner;
  beacons: BeaconSender;
  metrics: SsaiMetrics;
  logger: Logger;
  now: () => number;
  sessionTtlMs: number;
  /** how long a playlist waits for the ad decision of a break in its window before it plays slate (default: unbounded) */
  decisionDeadlineMs?: number;
  /** a plain live reload ends before a break still being decided instead of waiting for it (see cutBefore) */
  cutBeforeUndecidedBreaks?: boolean;
  /** the engine's public URL: guided asset URIs are absolute (hls.js resolves an asset's URI against nothing) */
  publicUrl?: () => string;
  /** debug sessions' logs (issue 31 item 8), and the control API's check of credentials that reads them */
  debugLog?: DebugLog;
  authenticate?: Authenticate;
}

const EMPTY_VTT = 'WEBVTT\n\n';
const EMPTY_VTT_PATH = '/v1/static/empty.vtt';

/** The answer to a failure of our own: logged with its cause, never shown to the player. */
const INTERNAL_ERROR: Reply = json(500, { status: false, code: 'INTERNAL', description: 'Internal error' });

/** Stands for the session id in a playlist stitched for every session with the same ads (never in HLS text). */
const MARK = '\u0000\u0001';
const SID_PLACEHOLDER = `${MARK}sid${MARK}`;
/**
 * Stands for the ad attributes of the k-th ad of the stitched breaks (the DATERANGE's X-AD-ID, X-CREATIVE-ID, …),
 * personal to each viewer.
 */
const adPlaceholder = (k: number): string => AD_PLACEHOLDERS[k] ?? `${MARK}${k}${MARK}`;
/** (the first ones made once: every reload names one per ad of its breaks) */
const AD_PLACEHOLDERS = Array.from({ length: 64 }, (_, k) => `${MARK}${k}${MARK}`);

/**
 * A stitched playlist shared by every session with the same breaks and creatives (issue 19 point 4: no re-render per
 * viewer): its text split at the placeholders, odd parts naming what goes there ('sid' or the index of an ad's
 * attributes, made safe as quoted strings by adIdAttributes).
 */
function render(parts: string[], sid: string, ads: readonly PlannedAd[]): string {
  let out = parts[0] ?? '';
  for (let i = 1; i < parts.length; i += 2) {
    const token = parts[i]!;
    // An ad's attributes are made where the text names them: only breaks in the window are written, and a session
    // places every break it had on every reload.
    const ad = token === 'sid' ? undefined : ads[Number(token)];
    out += (token === 'sid' ? sid : ad ? adIdAttributes(ad) : '') + (parts[i + 1] ?? '');
  }
  return out;
}
const MAX_SHARED_STITCHES = 512;

/** A rendition report names the session's own route of that rendition: hls.js matches reports to its levels by URL. */
function renditionReportUriOf(session: SessionRecord, guid: string): (abs: string) => string | undefined {
  const bare = (u: string): string => u.split('?', 1)[0] ?? u;
  return (abs) => {
    const other = session.variants.find((v) => v.uri === abs) ?? session.variants.find((v) => bare(v.uri) === bare(abs));
    return other ? `/v1/manifest/${guid}/${SID_PLACEHOLDER}/${other.n}.m3u8` : undefined;
  };
}
type SharedStitch = { parts: string[]; observed: Array<{ availId: string; absorbedDiscontinuities: number[] }>; tail: StitchTail };

export class SsaiServer {
  private readonly sessions: HotSessions;
  private readonly ads: SegmentRoutes;
  private readonly assetRoutes: AssetRoutes;
  /** guided sessions' playlists and asset lists (issue 30) */
  private readonly guided: GuidedPlayback;
  /** DASH sessions and their MPDs (issue 33) */
  private readonly dash: DashPlayback;
  /** sessions' start: the master playlist and the session POST */
  private readonly start: SessionStart;
  private readonly shapes: ContentShapes;
  private readonly decisions: DecisionScheduler;
  /** avail suppression before a decision (issue 31) */
  private readonly gate: BreakGate;
  /** live pre-rolls (issue 31) */
  private readonly prerolls: LivePrerolls;
  private readonly metricChildren = new Map<string, { observe(seconds: number): void }>();
  /** each configuration's playlist policy, by the configuration object the cache holds (a new read: a new policy) */
  private readonly policies = new WeakMap<AdinsertConfig, PlaylistPolicy>();
  /** what the proxy does without its store (issue 27) */
  private readonly fallbacks: StoreFallbacks;
  /** creative plans for placing breaks: a plan the store cannot give now places no break (content) rather than fail */
  private readonly plans: Pick<AdPlanner, 'plan'>;
  /** the plans this process holds, without a wait (placeAvailNow) */
  private readonly planNow: (key: string) => CreativePlan | undefined;
  private lastFlush = 0;
  /**
   * In-window decisions under way, by session: a break's id can change while it is decided (its CUE-OUT alone at the
   * live edge names it by date; a reload a segment later sees the CONT's SCTE-35 event id), so a second reload joins
   * the decision of the same break by place rather than deciding it again under its new id.
   */
  private readonly inWindow = new Map<string, Array<Running & { task: DecisionTask }>>();

  constructor(private readonly deps: SsaiServerDeps) {
    this.fallbacks = new StoreFallbacks(deps.store, deps.metrics, deps.sessionTtlMs);
    this.plans = { plan: (key) => this.fallbacks.or(deps.planner.plan(key), undefined, 'read') };
    this.planNow = (key) => deps.planner.planNow(key);
    this.sessions = new HotSessions(deps.store, deps.sessionTtlMs);
    this.ads = new SegmentRoutes(this.sessions, deps.store, deps.planner, deps.beacons);
    this.assetRoutes = new AssetRoutes(this.sessions, deps.store, this.plans);
    this.gate = new BreakGate({ store: deps.store, planner: deps.planner, now: deps.now, sessionTtlMs: deps.sessionTtlMs });
    this.decisions = new DecisionScheduler({
      planner: deps.planner, metrics: deps.metrics, now: deps.now,
      ...(deps.decisionDeadlineMs !== undefined ? { deadlineMs: deps.decisionDeadlineMs } : {}),
      adServerMaxRps: async (guid) => (await deps.lookup.get(guid))?.adServerMaxRps,
      // An early decision joins its session's cached list (the stored copy: the planner's may hold slices of the VAST).
      onEarly: (task, decided) => {
        const sid = task.session.id;
        void Promise.all([this.sessions.get(sid), this.deps.store.get<AvailRecord>(keys.avail(sid, decided.id))])
          .then(([hot, stored]) => { if (hot) mergeRecords(hot, [stored ?? decided]); }, () => undefined);
      },
    });
    this.shapes = new ContentShapes({
      playlist: async (uri) => {
        const got = await deps.origin.fetch(uri);
        return got.ok ? parsedMedia(got, deps.metrics).playlist : undefined;
      },
    });
    this.prerolls = new LivePrerolls({
      store: deps.store, origin: deps.origin, metrics: deps.metrics, decisions: this.decisions, shapes: this.shapes, now: deps.now, sessionTtlMs: deps.sessionTtlMs,
      ...(deps.decisionDeadlineMs !== undefined ? { decisionDeadlineMs: deps.decisionDeadlineMs } : {}), keepDecided: (hot, decided) => this.keepDecided(hot, decided),
    });
    this.guided = new GuidedPlayback({
      origin: deps.origin, planner: deps.planner, store: deps.store, metrics: deps.metrics, logger: deps.logger, now: deps.now,
      ...(deps.decisionDeadlineMs !== undefined ? { decisionDeadlineMs: deps.decisionDeadlineMs } : {}),
      sessions: this.sessions, fallbacks: this.fallbacks, shapes: this.shapes, decisions: this.decisions, gate: this.gate,
      degrade: (hot, avail, target) => this.degrade(hot, avail, target), keepDecided: (hot, decided) => this.keepDecided(hot, decided),
    });
    this.dash = new DashPlayback({
      origin: deps.origin, planner: deps.planner, decisions: this.decisions, sessions: this.sessions, store: deps.store, fallbacks: this.fallbacks,
      logger: deps.logger, metrics: deps.metrics, now: deps.now, sessionTtlMs: deps.sessionTtlMs, config: (g) => this.config(g), policyOf: (c) => this.policyOf(c), emptyTextUri: EMPTY_VTT_PATH,
      ...(deps.debugLog ? { debugLog: deps.debugLog } : {}),
      inband: new InbandCues({ logger: deps.logger, segments: deps.metrics.inbandSegments, cueErrors: deps.metrics.cueErrors }),
    });
    this.start = new SessionStart({
      lookup: deps.lookup, origin: deps.origin, sessions: this.sessions, fallbacks: this.fallbacks, planner: deps.planner,
      metrics: deps.metrics, now: deps.now, dash: this.dash, ...(deps.debugLog ? { debugLog: deps.debugLog } : {}),
    });
  }

  /** The part's rawHandler: takes only /v1/ paths. */
  handler(): (req: IncomingMessage, res: ServerResponse) => boolean {
    return (req, res) => {
      const url = req.url ?? '/';
      if (!url.startsWith('/v1/')) return false;
      // serve answers every request itself; this catch only keeps a bug there from becoming an unhandled rejection.
      this.serve(req, res, url).catch((e: unknown) => {
        this.deps.logger.error({ err: e, url }, 'ssai request failed');
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
      return true;
    };
  }

  /**
   * The part's fastGet (kernel/http/fast-get.ts): a plain GET or HEAD of any playback route but the debug log (which
   * reads the request's credentials), answered as serve answers it without node:http's request and reply objects.
   */
  fastGet(): FastGet {
    return (target, head, client) => {
      if (!target.startsWith('/v1/') || target.startsWith('/v1/debug/')) return undefined;
      return this.answer(head ? 'HEAD' : 'GET', target, clientFrom(client.userAgent, client.remoteAddress), undefined).then(fastReply);
    };
  }

  private async serve(req: IncomingMessage, res: ServerResponse, url: string): Promise<void> {
    const reply = await this.answer(req.method ?? 'GET', url, clientOf(req), req);
    try {
      writeReply(req, res, reply);
    } catch (e) {
      // A header value node:http refuses (a control or non-Latin-1 character in a redirect URI): answer 500 instead.
      this.deps.logger.error({ err: e, url }, 'ssai reply could not be written');
      writeReply(req, res, INTERNAL_ERROR);
    }
  }

  /** The reply to a playback request, timed. `req`: node:http's request (a session's POST body, the debug log's credentials). */
  private async answer(method: string, url: string, client: Client, req: IncomingMessage | undefined): Promise<Reply> {
    const started = process.hrtime.bigint();
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q + 1);
    const segments = pathname.split('/'); // ['', 'v1', kind, guid, ...]
    const kind = segments[2] ?? '';
    let metricKind: PlaylistKind = 'master';
    let reply: Reply;
    try {
      if (method === 'OPTIONS') reply = { status: 204, body: '', type: 'text/plain' };
      else if (!playbackPathIsClean(segments)) reply = fail(ssaiError('BAD_PLAYBACK_PATH', 'a path segment is . or .., holds an encoded slash or a control character, or is not valid percent-encoding'));
      else if ((kind === 'dash' || (kind === 'master' && isMpdPath(segments.slice(4).join('/')))) && (method === 'GET' || method === 'HEAD')) {
        reply = await this.dash.mpd(segments[3] ?? '', segments.slice(4).join('/'), query, client);
      } else if (kind === 'master' && (method === 'GET' || method === 'HEAD')) {
        reply = await this.start.master(segments[3] ?? '', segments.slice(4).join('/'), query, client);
      } else if (kind === 'session' && method === 'POST' && req) {
        metricKind = 'session';
        reply = await this.start.session(req, segments[3] ?? '', segments.slice(4).join('/'), query);
      } else if (kind === 'manifest' && method !== 'POST' && segments[5] === 'assets') {
        metricKind = 'assets';
        reply = await this.assets(segments, segments[3] ?? '', segments[4] ?? '');
      } else if (kind === 'manifest' && method !== 'POST') {
        metricKind = 'media';
        const file = segments[5] ?? '';
        const n = /^(\d+)\.m3u8$/.exec(file);
        reply = n && segments.length === 6 ? await this.media(segments[3] ?? '', segments[4] ?? '', Number(n[1]), query) : fail(ssaiError('BAD_PLAYBACK_PATH'));
      } else if (kind === 'segment' && method !== 'POST') {
        metricKind = 'segment';
        reply = segments.length === 9 ? await this.ads.segment(segments as SegmentPath, method === 'HEAD') : fail(ssaiError('BAD_PLAYBACK_PATH'));
      } else if (kind === 'tracking' && method !== 'POST') {
        metricKind = 'tracking';
        reply = await this.ads.tracking(segments[3] ?? '', segments[4] ?? '');
      } else if (kind === 'debug' && (method === 'GET' || method === 'HEAD') && req) {
        metricKind = 'debug';
        reply = segments.length === 5 ? await debugLogReply({ config: (g) => this.config(g), log: this.deps.debugLog, authenticate: this.deps.authenticate }, req.headers, segments[3] ?? '', segments[4] ?? '')
          : fail(ssaiError('BAD_PLAYBACK_PATH', 'a debug log is at /v1/debug/{guid}/{session}'));
      } else if (pathname === EMPTY_VTT_PATH) {
        reply = { status: 200, body: EMPTY_VTT, type: 'text/vtt; charset=utf-8', headers: { 'cache-control': 'public, max-age=86400' } };
      } else reply = fail(ssaiError('BAD_PLAYBACK_PATH', `no playback route for ${method} ${pathname}`));
    } catch (e) {
      reply = this.failed(e, url);
    }
    this.metricsFor(metricKind, reply.status).observe(Number(process.hrtime.bigint() - started) / 1e9);
    return reply;
  }

  /** The answer to a request whose handling threw. */
  private failed(e: unknown, url: string): Reply {
    // A store away where no fallback applies (an ad segment of a session unknown here): 503, the player retries.
    if (isSessionStoreUnavailable(e)) {
      this.fallbacks.count('read');
      return fail(ssaiError('SESSION_STORE_UNAVAILABLE'));
    }
    if (isDatabaseUnavailable(e)) return fail(ssaiError('DATABASE_UNAVAILABLE'));
    this.deps.logger.error({ err: e, url }, 'ssai request failed');
    return INTERNAL_ERROR;
  }

  /** The served counter and latency histogram children of a kind and status: label sets hashed once, not per request. */
  private metricsFor(kind: PlaylistKind, status: number): { observe(seconds: number): void } {
    const key = `${kind} ${status}`;
    let m = this.metricChildren.get(key);
    if (!m) {
      const served = this.deps.metrics.served.labels({ kind, status: String(status) });
      const latency = this.deps.metrics.latency.labels({ kind });
      m = { observe: (seconds) => { served.inc(); latency.observe(seconds); } };
      this.metricChildren.set(key, m);
    }
    return m;
  }

  /** The configuration a route names (cached; see SessionStart.config). */
  private config(guid: string): Promise<AdinsertConfig | SsaiError> {
    return this.start.config(guid);
  }

  /**
   * GET /v1/manifest/{guid}/{session}/{n}.m3u8: the origin media playlist with this session's ads stitched in.
   * LL-HLS delivery directives (`_HLS_msn`, `_HLS_part`) go on to the origin, so a blocking reload stays blocking;
   * `_HLS_skip` does not (the proxy serves no delta updates: docs/ssai-ll-hls.md).
   */
  private async media(guid: string, sid: string, n: number, query: string): Promise<Reply> {
    const directive = deliveryDirectives(query);
    if (directive && 'kind' in directive) return fail(directive);
    // (what is cached here is taken without a wait: a reload otherwise made a promise for each of these)
    const config = this.start.configNow(guid) ?? await this.config(guid);
    if ('kind' in config) return fail(config);
    let hot: HotSession | SsaiError;
    try {
      hot = this.sessions.loadNow(guid, sid) ?? await this.sessions.load(guid, sid);
    } catch (e) {
      if (!isSessionStoreUnavailable(e)) throw e;
      return this.contentWithoutSession(config, n);
    }
    if ('kind' in hot) return fail(hot);
    if (this.sessions.hasUnsaved && this.deps.store.available !== false && this.deps.now() - this.lastFlush > 1000) {
      this.lastFlush = this.deps.now();
      void this.sessions.flushUnsaved().catch(() => undefined); // the store is back: breaks played as content are kept
    }
    const entry = hot.session.variants[n];
    if (!entry) return fail(ssaiError('VARIANT_NOT_FOUND'));
    if (!directive) return (await this.stitched(config, hot, entry, n, entry.uri)).reply;
    let msn = directive.msn;
    let part = directive.part;
    if (hot.records.some((r) => r.ads.length)) {
      // The player counts in this playlist's numbers, the origin in its own: they differ by the ad segments stitched
      // before the tail (one break of four ads in three slots adds one) and by the ads listed a segment ahead. Mapped
      // by the tail of the latest plain copy; a break that began or ended since answers at once and the next request
      // maps right. Inside a break the next entry is a whole ad: the origin is asked for a whole segment, not a part.
      const plain = await this.stitched(config, hot, entry, n, entry.uri);
      if (!plain.tail) return plain.reply;
      // Segment msn is whole in this copy already (an ad listed ahead, or a player behind): no need to wait.
      if (msn <= plain.tail.sequence) return plain.reply;
      msn = Math.max(0, msn - (plain.tail.sequence - plain.tail.originSequence));
      if (plain.tail.ad) part = undefined;
    }
    const sep = entry.uri.includes('?') ? '&' : '?';
    const blockingUri = `${entry.uri}${sep}_HLS_msn=${msn}${part !== undefined ? `&_HLS_part=${part}` : ''}`;
    return (await this.stitched(config, hot, entry, n, blockingUri)).reply;
  }

  /** One track's playlist for a session, from the origin text at originUri (entry.uri, or it with delivery directives). */
  private async stitched(config: AdinsertConfig, hot: HotSession, entry: VariantEntry, n: number, originUri: string):
    Promise<{ reply: Reply; tail?: StitchTail }> {
    const guid = config.guid;
    const session = hot.session;
    const sid = session.id;
    const asked = session.debug ? performance.now() : 0;
    const fetched = (originUri === entry.uri ? this.deps.origin.fetchNow(originUri) : undefined) ?? await this.deps.origin.fetch(originUri, { blocking: originUri !== entry.uri });
    if (session.debug) this.deps.debugLog?.write(session, originEntry(originUri, fetched, performance.now() - asked));
    if (!fetched.ok) return { reply: fail(fetched.error) };
    const parsed = parsedMedia(fetched, this.deps.metrics);
    if (!parsed.playlist) return { reply: fail(ssaiError('ORIGIN_NOT_HLS', parsed.error)) };
    let pl = parsed.playlist;
    // both configuration types serve live and VOD streams: the playlist says which it is
    const vod = isVodPlaylist(pl);
    const policy = this.policyOf(config);
    // The viewer's live edge is the end of the session's first live playlist (avail suppression, issue 31).
    if (!vod && suppresses(config)) await this.gate.liveEdge(hot, pl);
    if (session.mode === 'guided') {
      if (entry.kind === 'video') await this.guided.shareDates(fetched, pl, session, vod);
      if (!vod && entry.kind === 'video') this.guided.prefetch(fetched, parsed, hot, config);
      // a VOD without cues takes its breaks from the session's VMAP: its playlist is the session's own
      if (vod && entry.kind === 'video' && !parsed.avails.length) return { reply: await this.guided.vmapPlaylist(fetched, parsed.playlist, entry, session, config.adServer, policy) };
      return { reply: this.guided.playlist(fetched, parsed, entry, session, vod, policy, !vod && livePrerollOf(config) !== undefined) };
    }
    if (entry.kind === 'iframe') {
      const r = stitchMediaPlaylist(pl, { originUrl: entry.uri, avails: [], trackKind: 'iframe', renditionReportUri: renditionReportUriOf(session, guid), policy });
      return { reply: playlist(render(r.text.split(MARK), sid, []), !vod), tail: r.tail };
    }
    const target = pl.targetDuration || 6;
    // A VOD origin without cues takes its avails from the ad server's VMAP, asked once per session.
    // (the store away: the VOD's breaks already decided are stitched; new ones wait for it)
    let found = parsed.avails.length || !vod ? parsed.avails : await this.fallbacks.or(this.deps.planner.vmapAvails(session, config.adServer, pl), [], 'read');
    // A live pre-roll (issue 31) is decided at the session's first live playlist, before its breaks.
    if (!vod && config.livePrerollAdServer) found = await this.prerolls.stitched(config, hot, entry, pl, found, target);
    // A plain live reload need not wait for a break decided now (issue 28 point 2): see cutBefore.
    const mayCut = this.deps.cutBeforeUndecidedBreaks === true && !vod && originUri === entry.uri && !pl.header.some((t) => t.name === 'EXT-X-PART-INF');
    // (a reload whose breaks are all decided, the common case, skips the call and its promises)
    const running = allKnown(hot.records, found, target) ? [] : await this.decideNew(hot, config, found, target, pl, referenceVideo(session.variants) === entry ? pl : undefined, mayCut);
    if (entry.kind !== 'video') {
      // Packagers often cue only the video playlists: decide from a video playlist too, so an audio or subtitle
      // playlist fetched first never misses an avail that its video finds (players fetch them side by side).
      const ref = session.variants.find((v) => v.kind === 'video');
      const refFetched = ref ? await this.deps.origin.fetch(ref.uri) : undefined;
      const refParsed = refFetched?.ok ? parsedMedia(refFetched, this.deps.metrics) : undefined;
      if (refParsed?.playlist) running.push(...await this.decideNew(hot, config, this.prerolls.outside(hot, refParsed.avails), refParsed.playlist.targetDuration || target, refParsed.playlist, refParsed.playlist, mayCut));
    }
    let cutAt: number | undefined;
    if (running.length) {
      cutAt = cutBefore(pl, running.map((r) => r.avail), target);
      if (cutAt === undefined) await Promise.all(running.map((r) => r.done));
      else {
        pl = { ...pl, segments: pl.segments.filter((x) => x.mediaSequence < cutAt!), trailingTags: [], trailingLines: [] };
        this.deps.metrics.playlistsCut.inc();
      }
    }
    const records = oneRecordPerBreak(hot.records, target);
    const observedKey = keys.observed(sid, n);
    // Read only when a break is to be stitched: the absorbed discontinuities of this session's breaks on this track.
    const observed = !records.some((r) => r.ads.length) ? NO_MARKS : this.fallbacks.observedNow(observedKey) ?? await this.fallbacks.observed(observedKey);
    // What the session's other tracks saw its breaks absorb (session-marks.ts): made only where needed.
    let bySession: SessionMarks | undefined;
    const avails: StitchAvail[] = [];
    // The master's URL too where the playlist has rendition reports (they name this session's route of the rendition
    // its master numbered so); only there: a per-viewer query in master URLs would otherwise stitch once per viewer.
    const reportsRenditions = pl.trailingLines.some((t) => t.name === 'EXT-X-RENDITION-REPORT');
    // A live track's breaks long behind the window are summed once (past-breaks.ts): not placed, one key.
    const past = vod ? undefined : pastOf(hot, n, target);
    let signature = `${guid}|${reportsRenditions ? session.origin : ''}|${n}|${entry.kind}|${entry.bandwidth ?? ''}|${entry.resolution ?? ''}|${target}|${cutAt ?? ''}|${policy.key}|${past?.key ?? ''}`;
    const placedAds: PlannedAd[] = [];
    const windowStart = pl.segments[0];
    const windowEnd = pl.segments[pl.segments.length - 1]?.mediaSequence ?? -1;
    let anchors: Map<string, readonly number[]> | undefined;
    let gone: StitchAvail[] | undefined;
    for (const record of records) {
      if (past?.ids.has(record.id)) continue;
      const anchor = observed.get(anchorKey(record.id))?.[0];
      const placedNow = placeAvailNow(this.planNow, record, pl, entry, observed.get(record.id), anchor);
      const placed = placedNow === PLAN_NOT_HERE ? await placeAvail(this.plans, record, pl, entry, observed.get(record.id), anchor) : placedNow;
      // A break's start seen in this track's window is kept: once it slides out, the break stays where it was listed.
      if (placed && anchor === undefined && record.startPdtMs !== undefined && !vod && windowStart
        && placed.startSegmentIndex >= windowStart.mediaSequence && placed.startSegmentIndex <= windowEnd) (anchors ??= new Map()).set(anchorKey(record.id), [placed.startSegmentIndex]);
      if (!vod && windowStart && !record.retired && longGone(record, placed, windowStart, target)) {
        void this.sessions.retire(hot, record).then(async (done) => {
          if (!done) return;
          this.deps.metrics.breaksRetired.inc();
          await this.ads.forgetMarks(sid, record);
        }).catch((e: unknown) => {
          // the store away: retired on a later reload, once it is back
          if (isSessionStoreUnavailable(e)) this.fallbacks.count('write');
          else this.deps.logger.warn({ err: e, session: sid, avail: record.id }, 'a past break could not be retired');
        });
      }
      if (!placed) continue;
      // (a track that listed the break's start, anchored, saw every discontinuity it absorbed: it never takes others',
      // which would renumber what it listed; one that took them once has them in its own marks)
      if (!vod && anchor === undefined && windowStart && placed.startSegmentIndex < windowStart.mediaSequence && !observed.has(takenKey(record.id))) {
        bySession ??= new SessionMarks(this.fallbacks, keys.sessionObserved(sid));
        const taken = await bySession.absorbed(record.id, placed.startSegmentIndex);
        if (taken.length) {
          placed.absorbedDiscontinuities = unionOfSorted(placed.absorbedDiscontinuities ?? [], taken);
          (anchors ??= new Map()).set(takenKey(record.id), [placed.startSegmentIndex]);
        }
      }
      if (past && placed.startSegmentIndex <= past.lastEnd) {
        // a break placed among the summed ones (never expected live): the sum no longer numbers exactly
        forgetPast(hot, n);
        return this.stitched(config, hot, entry, n, originUri);
      }
      if (!vod && record.retired && windowStart && longGone(record, placed, windowStart, target)) (gone ??= []).push(placed);
      avails.push(placed);
      signature += `|${placed.id},${placed.insert ? 'i' : ''}${placed.startSegmentIndex},${placed.endSegmentIndex},${placed.slotDuration},${placed.duration},${placed.startPdtMs},${placed.absorbedDiscontinuities?.join('.') ?? ''}`;
      // The ad ids are the viewer's own (the creative's ids may be too): placeholders in the shared text, so sessions with the same creatives share it.
      for (let i = 0; i < placed.ads.length; i++) {
        const ad = placed.ads[i]!;
        placedAds.push(ad);
        ad.idAttributes = adPlaceholder(placedAds.length - 1);
        const r = record.ads[i];
        if (r) signature += `,${r.creativeKey}/${r.duration}/${r.slate ? 1 : r.bumper ?? 0}`;
      }
    }
    // Sessions given the same creatives get the same playlist but for their session id and ad ids: stitched once per
    // origin refresh with placeholders, then rendered per session by joining the parts (bounded: distinct plans beyond
    // the bound stitch on their own).
    if (gone) sumPast(hot, n, target, gone, avails.filter((a) => !gone!.includes(a)), { trackKind: entry.kind, emptySubtitleUri: EMPTY_VTT_PATH });
    const memoKey = `stitched ${signature}`;
    let own = fetched.memo.get(memoKey) as SharedStitch | undefined;
    if (!own) {
      // (made here, not before the lookup: a closure made per reload cost its allocation and, under tsx, a __name call)
      const r = stitchMediaPlaylist(pl, {
        originUrl: entry.uri, avails, trackKind: entry.kind, emptySubtitleUri: EMPTY_VTT_PATH, targetDurationFloor: target, renditionReportUri: renditionReportUriOf(session, guid), policy,
        ...(past ? { before: past.before } : {}),
        // Each empty subtitle span gets its own URI: players and checkers tell segments apart by URI.
        makeAdSegmentUri: (c) => entry.kind === 'subtitles' ? `${c.uri}?avail=${encodeURIComponent(c.avail.id)}&ad=${c.adIndex}&s=${c.segmentIndex}`
          : `/v1/segment/${guid}/${SID_PLACEHOLDER}/${encodeURIComponent(c.avail.id)}/${c.adIndex}/${n}/${c.segmentIndex}${segmentExtension(c.uri)}`,
      });
      own = { parts: r.text.split(MARK), observed: r.observed, tail: r.tail };
      if (fetched.memo.size < MAX_SHARED_STITCHES) fetched.memo.set(memoKey, own);
    }
    const result = { text: render(own.parts, sid, placedAds), observed: own.observed };
    let next: Map<string, readonly number[]> | undefined = anchors ? new Map([...observed, ...anchors]) : undefined;
    // (what this track saw first is offered to its siblings: only then can the session's marks lack it)
    for (const o of result.observed) {
      const before = observed.get(o.availId) ?? [];
      const union = unionOfSorted(before, o.absorbedDiscontinuities);
      if (union === before) continue;
      next ??= new Map(observed);
      next.set(o.availId, union);
      const start = vod ? undefined : avails.find((a) => a.id === o.availId)?.startSegmentIndex;
      if (start === undefined) continue;
      bySession ??= new SessionMarks(this.fallbacks, keys.sessionObserved(sid));
      await bySession.offer(o.availId, start, o.absorbedDiscontinuities);
    }
    if (next) await this.fallbacks.keepObserved(observedKey, next);
    if (bySession) await bySession.keep();
    return { reply: playlist(result.text, !vod), tail: own.tail };
  }

  /**
   * A playlist of a session this process cannot read while the store is away (issue 27): its configuration's content
   * when every session of it seen here had one layout (variant n is then known), with no break stitched; else 503.
   */
  private async contentWithoutSession(config: AdinsertConfig, n: number): Promise<Reply> {
    this.fallbacks.count('session');
    const entry = this.sessions.layoutOf(config.guid)?.variants[n];
    if (!entry) return fail(ssaiError('SESSION_STORE_UNAVAILABLE'));
    const fetched = await this.deps.origin.fetch(entry.uri);
    if (!fetched.ok) return fail(fetched.error);
    const parsed = parsedMedia(fetched, this.deps.metrics);
    if (!parsed.playlist) return fail(ssaiError('ORIGIN_NOT_HLS', parsed.error));
    const policy = this.policyOf(config);
    return playlist(stitchMediaPlaylist(parsed.playlist, { originUrl: entry.uri, avails: [], trackKind: entry.kind, emptySubtitleUri: EMPTY_VTT_PATH, policy }).text, !isVodPlaylist(parsed.playlist));
  }

  /**
   * The configuration's cue passthrough and CDN prefixes (issue 31 item 5), ad URIs under the engine's public URL: made
   * once per configuration object the cache hands out (every playlist request asks), not per request.
   */
  private policyOf(config: AdinsertConfig): PlaylistPolicy {
    let policy = this.policies.get(config);
    if (!policy) this.policies.set(config, policy = playlistPolicy(config, this.deps.publicUrl?.() ?? ''));
    return policy;
  }

  /**
   * Decides the avails of a playlist not yet known to the session, and waits for those of breaks in the window. The cue
   * finder keeps a break's id stable across reloads; a break whose id still differs (one seen only by PDT on one
   * reload, by sequence on another) is the same break when it starts at the same place: matched by start.
   * Known avails cost no store read; an unknown one first re-reads the session's decisions from the store (another
   * instance may have made it).
   * A break is never listed before its record is stored (issue 26): one in the window (or any break of a VOD, whose
   * player reads the playlist once) is decided before the answer, within the deadline, else it gets the late record,
   * for good; the decisions of one answer run side by side, so a VMAP's breaks share one deadline. With `mayCut`, a
   * decision of a break that starts far enough into the window is not waited for: it is returned (running), and the
   * playlist ends before its break (cutBefore).
   */
  private async decideNew(hot: HotSession, config: AdinsertConfig, found: Avail[], target: number, pl: MediaPlaylist, videoPl?: MediaPlaylist, mayCut = false): Promise<Running[]> {
    let refreshed = false;
    let shape: ContentShape | undefined;
    const sid = hot.session.id;
    const last = pl.segments[pl.segments.length - 1];
    const deciding: Array<Promise<void>> = [];
    const running: Running[] = [];
    // A break can end the playlist only when its cue came with its first segment (nothing of it was listed before),
    // enough content precedes it for a player's start (three target durations behind the end), and it starts at the
    // live edge: a player takes the end of the playlist for the live edge, and one that ended far before the origin's
    // (a viewer joining with several breaks of the window undecided) leaps on the next reload (cutRoomMs).
    const cuttable = (a: Avail): boolean => mayCut && a.startVisible && cutRoomMs(pl, a, target) > 0;
    // LL-HLS: the segment in progress is listed (its parts or preload hint) and is decided now, so that no part of it
    // is announced as content before its ads replace it (hls.js: "media sequence mismatch").
    const edge = last ? last.mediaSequence + (pl.trailingLines.some((t) => t.name === 'EXT-X-PART' || t.name === 'EXT-X-PRELOAD-HINT') ? 1 : 0) : 0;
    // A VOD never has a break ahead: its post-roll sits after the last segment and is decided before the first answer.
    const live = !isVodPlaylist(pl);
    for (const avail of found) {
      const ahead = live && last !== undefined && avail.startSegmentIndex > edge;
      // (a break in the window whose early decision is still pending waits for it: inWindow takes it over)
      if (isKnown(hot.records, avail, target) || (ahead && this.decisions.isPending(sid, avail.id))) continue;
      const joining = this.inWindow.get(sid)?.find((d) => sameBreak(d.avail, avail, target));
      if (joining) {
        if (ahead) continue;
        if (cuttable(avail)) running.push({ avail, done: joining.done });
        // this playlist cannot end before the break: it waits as long as a playlist may (the late record after that)
        else deciding.push(this.decisions.inWindow(joining.task).then((decided) => this.keepDecided(hot, decided), (e: unknown) => this.degradeIfStoreAway(e, hot, avail, target)));
        continue;
      }
      if (!refreshed) {
        refreshed = true;
        mergeRecords(hot, await this.fallbacks.or(this.sessions.records(sid), [], 'read'));
        if (isKnown(hot.records, avail, target)) continue;
      }
      // The creatives take the content's shape (container, audio layout, codec): read once per origin, on the first decision.
      shape ??= await this.shapes.shapeOf(hot.session.variants, videoPl);
      // Avail suppression (issue 31): a suppressed break is stored as content, no ad-server request; a joined one may
      // be decided for its rest.
      let admitted = avail;
      if (live && suppresses(config)) {
        try {
          const gate = await this.gate.admit(config, hot, avail, pl, target);
          if ('record' in gate) { await this.keepDecided(hot, gate.record); continue; }
          admitted = gate.avail;
        } catch (e) {
          this.degradeIfStoreAway(e, hot, avail, target);
          continue;
        }
      }
      const policies = breakPolicies(config);
      const task: DecisionTask = { session: hot.session, adServer: config.adServer, avail: admitted, targetDuration: target, shape, ...(policies ? { policies } : {}) };
      if (ahead) {
        // Announced ahead: decided in the background within its lead time (issue 19 point 4); this playlist goes out now.
        const windowEnd = last.pdtMs === undefined ? undefined : last.pdtMs + last.duration * 1000;
        const leadMs = avail.startPdtMs !== undefined && windowEnd !== undefined ? avail.startPdtMs - windowEnd
          : (avail.startSegmentIndex - last.mediaSequence - 1) * (avail.slotDuration || target) * 1000;
        // (the store away: decided on a later reload once it is back, or as content when the break arrives before)
        if (this.deps.store.available !== false) this.decisions.ahead(task, leadMs);
        continue;
      }
      // No store, no decision every proxy would agree on (issue 27): the break plays its content, kept so.
      if (this.deps.store.available === false) { this.degrade(hot, avail, target); continue; }
      // In the window: an early decision still on its way joins this one (the planner runs one per avail). One this
      // playlist does not wait for has until the break is too close to end a playlist before it (cutRoomMs) before it
      // falls back; the configured deadline is what a playlist waits.
      const cut = cuttable(admitted);
      const roomMs = cut ? cutRoomMs(pl, admitted, target) : 0;
      // (one not waited for is sent as the event loop allows, within the first half of the room: the ad server's time after)
      const done = this.decisions.inWindow(task, cut ? Math.max(roomMs, this.deps.decisionDeadlineMs ?? 0) : undefined, cut ? roomMs / 2 : 0)
        .then((decided) => this.keepDecided(hot, decided), (e: unknown) => this.degradeIfStoreAway(e, hot, avail, target));
      const under = { avail, done, task };
      let ofSession = this.inWindow.get(sid);
      if (!ofSession) this.inWindow.set(sid, ofSession = []);
      ofSession.push(under);
      const settled = (): void => {
        const left = (this.inWindow.get(sid) ?? []).filter((d) => d !== under);
        if (left.length) this.inWindow.set(sid, left); else this.inWindow.delete(sid);
      };
      done.then(settled, (e: unknown) => {
        settled();
        this.deps.logger.warn({ err: e, session: sid, avail: avail.id }, 'an ad decision failed');
      });
      if (cut) running.push(under);
      else deciding.push(done);
    }
    await Promise.all(deciding);
    return running;
  }

  /** GET /v1/manifest/{guid}/{sid}/assets/{breakId}.json, and the playlists of its assets (asset-routes.ts). */
  private async assets(segments: string[], guid: string, sid: string): Promise<Reply> {
    if (segments.length === 9) {
      const config = await this.config(guid);
      if ('kind' in config) return fail(config);
      return this.assetRoutes.assetPlaylist(guid, sid, segments[6] ?? '', segments[7] ?? '', segments[8] ?? '', this.policyOf(config));
    }
    const file = segments[6] ?? '';
    if (segments.length !== 7 || !file.endsWith('.json')) return fail(ssaiError('BAD_PLAYBACK_PATH'));
    let breakId: string;
    try {
      breakId = decodeURIComponent(file.slice(0, -'.json'.length));
    } catch {
      return fail(ssaiError('BAD_PLAYBACK_PATH', 'the break id is not valid percent-encoding'));
    }
    const config = await this.config(guid);
    if ('kind' in config) return fail(config);
    const hot = await this.sessions.load(guid, sid);
    if ('kind' in hot) return fail(hot);
    const record = breakId === PREROLL_AVAIL_ID ? await this.prerolls.guided(config, hot) : await this.guided.decision(config, hot, breakId);
    return 'kind' in record ? fail(record) : AssetRoutes.assetList(`${this.deps.publicUrl?.() ?? ''}/v1/manifest/${guid}/${sid}`, record);
  }

  /** No store, no decision every proxy would agree on (issue 27): the break plays its content, kept so. */
  private degrade(hot: HotSession, avail: Avail, target: number): void {
    this.fallbacks.count('decision');
    this.sessions.degrade(hot, avail, target);
  }

  /** A decision that failed because the store went away degrades its break; any other failure stays a failure. */
  private degradeIfStoreAway(e: unknown, hot: HotSession, avail: Avail, target: number): void {
    if (!isSessionStoreUnavailable(e)) throw e;
    this.degrade(hot, avail, target);
  }

  /** A decision joins the session's cached list: the stored copy, not the planner's object (that one may hold strings
   * sliced from the whole VAST response). */
  private async keepDecided(hot: HotSession, decided: AvailRecord): Promise<void> {
    const stored = await this.fallbacks.or(this.deps.store.get<AvailRecord>(keys.avail(hot.session.id, decided.id)), undefined);
    mergeRecords(hot, [stored ?? decided]);
  }
}

/** A decision of a break in the window under way. */
type Running = { avail: Avail; done: Promise<void> };
