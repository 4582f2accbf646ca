// A viewer's session starts here (issue 5 "Playback"): GET /v1/master/{guid}/{path} (a new or given session and the
// multivariant playlist pointing at the session's media routes) and POST /v1/session/{guid}/{path} (the same, answered
// with the session's URLs). The configuration is read here too, for every route of the proxy.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AdinsertCache, AdinsertConfig, InsertionMode } from '../../kernel/seams/adinserts.js';
import { isDatabaseUnavailable } from '../../kernel/store/outage.js';
import { scanMultivariantPlaylist, type MultivariantPlaylist } from '../../media/playlist-scanner.js';
import type { AdPlanner } from '../decide/ad-planner.js';
import type { ContentRung, SessionRecord } from '../decide/avail-record.js';
import { ssaiError, type SsaiError } from '../errors.js';
import type { SsaiMetrics } from '../metrics.js';
import { rewriteMultivariant, type VariantEntry } from '../stitch/manifest-rewriter.js';
import type { DebugLog } from '../store/debug-log.js';
import { isSessionStoreUnavailable, SessionStoreUnavailableError } from '../store/session-store.js';
import type { DashPlayback } from './dash-playback.js';
import { isMpdPath } from './dash-playback.js';
import { debugFlag, originEntry } from './debug-route.js';
import type { HotSessions, Layout } from './hot-sessions.js';
import { clientOf, fail, json, playlist, readBody, type Client, type Reply } from './http-reply.js';
import { derive, type OriginFetcher } from './origin-fetcher.js';
import { parsedMedia } from './parsed-media.js';
import { originUrlOf, splitQuery } from './playback-path.js';
import { originMultivariant, type StoreFallbacks } from './store-outage.js';

const SESSION_BODY_LIMIT = 64 * 1024;

export interface SessionStartDeps {
  lookup: Pick<AdinsertCache, 'get' | 'getNow'>;
  origin: OriginFetcher;
  sessions: HotSessions;
  fallbacks: StoreFallbacks;
  planner: Pick<AdPlanner, 'expectDecisions'>;
  metrics: SsaiMetrics;
  now: () => number;
  dash: Pick<DashPlayback, 'start'>;
  debugLog?: DebugLog;
}

export class SessionStart {
  constructor(private readonly deps: SessionStartDeps) {}

  /** The configuration when the lookup holds it fresh, without a promise; else undefined (ask config). */
  configNow(guid: string): AdinsertConfig | undefined {
    return guid ? this.deps.lookup.getNow?.(guid) : undefined;
  }

  async config(guid: string): Promise<AdinsertConfig | SsaiError> {
    if (!guid) return ssaiError('BAD_PLAYBACK_PATH');
    let config: AdinsertConfig | undefined;
    try {
      config = await this.deps.lookup.get(guid);
    } catch (e) {
      // PostgreSQL away and this configuration never read here (a known one is served from the cache, issue 27)
      if (isDatabaseUnavailable(e)) return ssaiError('DATABASE_UNAVAILABLE');
      throw e;
    }
    return config ?? ssaiError('ADINSERT_NOT_FOUND', `No ad-insertion configuration ${guid}`);
  }

  /** GET /v1/master/{guid}/{path}: a (new or given) session and the multivariant playlist pointing at our media routes. */
  async master(guid: string, rest: string, query: string, client: Client): Promise<Reply> {
    const made = await this.startSession(guid, rest, query, client);
    if ('kind' in made) return fail(made);
    return made.reply;
  }

  private async startSession(guid: string, rest: string, query: string, client: Client, forced?: { id: string; playerParams: Record<string, string>; mode?: string }):
    Promise<SsaiError | { reply: Reply; session: SessionRecord }> {
    const config = await this.config(guid);
    if ('kind' in config) return config;
    if (!rest) return ssaiError('BAD_PLAYBACK_PATH', 'the playback path names no playlist after the configuration guid');
    const split = splitQuery(query);
    const origin = originUrlOf(config.sourceUrl, rest, split.rest);
    const debug = debugFlag((forced?.playerParams ?? split.playerParams).debug);
    if (typeof debug !== 'boolean') return debug;
    const asked = debug ? performance.now() : 0;
    const fetched = await this.deps.origin.fetch(origin);
    if (!fetched.ok) return fetched.error;
    const sid = forced?.id ?? split.sessionId ?? randomUUID();
    let existing: SessionRecord | undefined;
    let storeAway = false;
    try {
      existing = split.sessionId && !forced ? (await this.deps.sessions.get(sid))?.session : undefined;
    } catch (e) {
      if (!isSessionStoreUnavailable(e)) throw e;
      storeAway = true;
    }
    const { mode: askedMode, debug: _debug, ...askedParams } = forced?.playerParams ?? split.playerParams;
    const mode = insertionModeOf(config, forced?.mode ?? askedMode);
    if (typeof mode !== 'string') return mode;
    const playerParams = existing?.playerParams ?? askedParams;
    const base = `/v1/manifest/${guid}/${sid}`;
    const multivariant = derive(fetched, 'multivariant', scanMultivariantPlaylist);
    let text: string;
    let variants: VariantEntry[];
    if (multivariant.playlist && multivariant.playlist.variants.length) {
      const rewritten = rewriteMultivariant(fetched.text, { originUrl: origin, makeVariantUri: (n) => `${base}/${n}.m3u8` });
      if (rewritten.error) return ssaiError('ORIGIN_NOT_HLS', rewritten.error.message);
      text = rewritten.text;
      variants = rewritten.entries;
    } else {
      // A media playlist given as the entry point: the session has that one track.
      const media = parsedMedia(fetched, this.deps.metrics);
      if (!media.playlist) return ssaiError('ORIGIN_NOT_HLS', media.error);
      variants = [{ n: 0, kind: 'video', uri: origin }];
      text = `#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000000\n${base}/0.m3u8\n`;
    }
    if (existing) return { reply: playlist(text, true), session: existing };
    const layout: Layout = { variants, rungs: derive(fetched, 'rungs', () => rungsOf(multivariant.playlist)) };
    const session: SessionRecord = { id: sid, guid, origin, variants, rungs: layout.rungs, playerParams, ...(mode === 'guided' ? { mode } : {}), ...(debug && this.deps.debugLog ? { debug: true as const } : {}), ...client, createdAt: this.deps.now() };
    try {
      if (storeAway) throw new SessionStoreUnavailableError('the session could not be read');
      await this.deps.sessions.save(session, layout);
    } catch (e) {
      if (!isSessionStoreUnavailable(e)) throw e;
      // No store, no session another proxy could read (issue 27): this viewer plays the origin itself, its content
      // and numbering, until it asks for a master playlist again.
      this.deps.fallbacks.count('session');
      const direct = originMultivariant(fetched.text, origin, multivariant.playlist?.variants.length ? undefined : parsedMedia(fetched).playlist);
      if (direct === undefined) return ssaiError('ORIGIN_NOT_HLS');
      return { reply: playlist(direct, true), session };
    }
    this.deps.planner.expectDecisions();
    if (session.debug) {
      this.deps.debugLog?.write(session, { kind: 'session', mode: mode === 'guided' ? 'guided' : 'stitched', origin, playerParams });
      this.deps.debugLog?.write(session, originEntry(origin, fetched, performance.now() - asked));
    }
    return { reply: playlist(text, true), session };
  }

  /** POST /v1/session/{guid}/{path} → {manifestUrl, trackingUrl}. */
  async session(req: IncomingMessage, guid: string, rest: string, query: string): Promise<Reply> {
    const body = await readBody(req, SESSION_BODY_LIMIT);
    if (body === undefined) return fail(ssaiError('SESSION_BODY_TOO_LARGE'));
    const split = splitQuery(query);
    let params: Record<string, string> = split.playerParams;
    let bodyMode: string | undefined;
    if (body.trim()) {
      try {
        const parsed = JSON.parse(body) as { adsParams?: Record<string, unknown>; playerParams?: Record<string, unknown>; insertionMode?: unknown; debug?: unknown };
        if (parsed.insertionMode !== undefined) bodyMode = String(parsed.insertionMode);
        params = { ...params };
        for (const [k, v] of Object.entries(parsed.adsParams ?? parsed.playerParams ?? {})) params[k] = String(v);
        // the body's debug (issue 31) is read as ads.debug is
        if (parsed.debug !== undefined) params.debug = typeof parsed.debug === 'object' ? JSON.stringify(parsed.debug) : String(parsed.debug);
      } catch {
        return fail(ssaiError('BAD_PLAYBACK_PATH', 'The session body is not valid JSON'));
      }
    }
    const id = randomUUID();
    const restQuery = split.rest;
    if (isMpdPath(rest)) {
      const config = await this.config(guid);
      if ('kind' in config) return fail(config);
      const started = await this.deps.dash.start(config, rest, restQuery, clientOf(req), { id, playerParams: params });
      if ('kind' in started) return fail(started);
      return json(200, { manifestUrl: `/v1/dash/${guid}/${rest}?${restQuery ? `${restQuery}&` : ''}sessionId=${id}`, trackingUrl: `/v1/tracking/${guid}/${id}` });
    }
    const made = await this.startSession(guid, rest, restQuery, clientOf(req), { id, playerParams: params, ...(bodyMode !== undefined ? { mode: bodyMode } : {}) });
    if ('kind' in made) return fail(made);
    return json(200, {
      manifestUrl: `/v1/master/${guid}/${rest}?${restQuery ? `${restQuery}&` : ''}sessionId=${id}`,
      trackingUrl: `/v1/tracking/${guid}/${id}`,
    });
  }
}

/** A session's insertion mode: the one it asks for (`ads.mode`, the session body's insertionMode) where allowed. */
function insertionModeOf(config: AdinsertConfig, asked: string | undefined): InsertionMode | SsaiError {
  if (asked === undefined || asked === '') return config.insertionMode;
  if (asked !== 'stitched' && asked !== 'guided') return ssaiError('BAD_INSERTION_MODE', `ads.mode (or insertionMode) must be stitched or guided, not ${JSON.stringify(asked.slice(0, 40))}`);
  if (asked !== config.insertionMode && !config.insertionModeOverride) return ssaiError('INSERTION_MODE_FORBIDDEN');
  return asked;
}

function rungsOf(scanned: MultivariantPlaylist | undefined): ContentRung[] {
  if (!scanned) return [];
  return scanned.variants.map((v) => {
    const [w, h] = (v.resolution ?? '').split('x').map((x) => Number.parseInt(x, 10));
    const fr = Number.parseFloat(v.attrs['FRAME-RATE'] ?? '');
    return { width: w || 0, height: h || 0, bandwidth: v.bandwidth, ...(Number.isFinite(fr) ? { frameRate: fr } : {}),
      ...(v.attrs.CODECS ? { codecs: v.attrs.CODECS } : {}) };
  });
}
