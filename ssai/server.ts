// The SSAI proxy's hot path (issue 5 "Playback"): plain node:http, no framework. Moves manifests only: content
// segments stay on the origin, ad segments on the media store behind a beacon-firing redirect.
import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { AdinsertCache } from '../src/adinserts/adinsert-lookup.js';
import type { AdinsertConfig } from '../src/adinserts/adinsert.schema.js';
import { AdPlanner, closestTrack, keys, type AvailRecord, type CreativePlan, type CreativeTrack, type Rung, type SessionRecord } from './ad-planner.js';
import type { BeaconSender } from './beacons.js';
import { findAvails, type Avail } from './cue-finder.js';
import { ssaiError, toErrorBody, type SsaiError } from './errors.js';
import type { SsaiMetrics, PlaylistKind } from './metrics.js';
import { rewriteMultivariant, stitchMediaPlaylist, type PlannedAd, type StitchAvail, type VariantEntry } from './manifest-rewriter.js';
import { derive, type OriginFetcher, type OriginOk } from './origin-fetcher.js';
import { scanMediaPlaylist, scanMultivariantPlaylist, type MediaPlaylist, type MultivariantPlaylist } from './playlist-scanner.js';
import type { SessionStore } from './session-store.js';
import type { TrackingEvents } from './vast-decision.js';

export interface SsaiServerDeps {
  /** configurations by guid, any organization (ctx.services.adinserts) */
  lookup: Pick<AdinsertCache, 'get'>;
  origin: OriginFetcher;
  store: SessionStore;
  planner: AdPlanner;
  beacons: BeaconSender;
  metrics: SsaiMetrics;
  logger: Logger;
  now: () => number;
  sessionTtlMs: number;
}

const CORS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS, HEAD',
  'access-control-allow-headers': '*',
  'access-control-expose-headers': '*',
};
const CORS_FLAT = Object.entries(CORS).flat();
const M3U8 = 'application/vnd.apple.mpegurl';
const EMPTY_VTT = 'WEBVTT\n\n';
const EMPTY_VTT_PATH = '/v1/static/empty.vtt';
const QUARTILES: Array<[keyof TrackingEvents, number]> = [['firstQuartile', 0.25], ['midpoint', 0.5], ['thirdQuartile', 0.75]];

type Reply = { status: number; body: string; type: string; headers?: Record<string, string> };

function json(status: number, value: unknown): Reply {
  return { status, body: JSON.stringify(value), type: 'application/json; charset=utf-8' };
}
function fail(err: SsaiError): Reply {
  return json(err.status, toErrorBody(err));
}
function playlist(text: string, live: boolean): Reply {
  return { status: 200, body: text, type: M3U8, headers: { 'cache-control': live ? 'no-cache' : 'public, max-age=60' } };
}

/** `.m4s`, `.ts`, `.mp4` … of an ad segment URI, or '' when it has none. */
function segmentExtension(uri: string): string {
  const pathname = uri.split(/[?#]/, 1)[0] ?? '';
  const match = /\.[A-Za-z0-9]{1,5}$/.exec(pathname.slice(pathname.lastIndexOf('/') + 1));
  return match ? match[0] : '';
}

/** Joins the configuration's sourceUrl and the rest of the playback path (DESIGN.md "Ad playback"). */
export function originUrlOf(sourceUrl: string, rest: string, query: string): string {
  const base = sourceUrl.endsWith('/') ? sourceUrl : `${sourceUrl}/`;
  return base + rest.replace(/^\/+/, '') + (query ? (base.includes('?') ? '&' : '?') + query : '');
}

/** Splits the query: `ads.<name>` go to the ad server, sessionId is ours, the rest goes to the origin untouched. */
function splitQuery(raw: string): { playerParams: Record<string, string>; sessionId?: string; rest: string } {
  const playerParams: Record<string, string> = {};
  const rest: string[] = [];
  let sessionId: string | undefined;
  for (const part of raw.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const name = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1).replace(/\+/g, ' '));
    if (name.startsWith('ads.')) playerParams[name.slice(4)] = value;
    else if (name === 'sessionId') sessionId = value;
    else rest.push(part); // kept verbatim: signed origin tokens must not be re-encoded (STYLE.md rule 13)
  }
  return { playerParams, ...(sessionId ? { sessionId } : {}), rest: rest.join('&') };
}

/** Stands for the session id in a playlist stitched for every session with the same ads (never in HLS text). */
const SID_PLACEHOLDER = '\u0000sid\u0000';
const MAX_SHARED_STITCHES = 512;
type SharedStitch = { parts: string[]; observed: Array<{ availId: string; absorbedDiscontinuities: number[] }> };

/** A scanned origin media playlist and its avails: computed once per origin fetch, shared by every session. */
type ParsedMedia = { playlist: MediaPlaylist; avails: Avail[]; error?: undefined } | { playlist?: undefined; avails?: undefined; error: string };
function parsedMedia(result: OriginOk): ParsedMedia {
  return derive(result, 'media', (text): ParsedMedia => {
    const scanned = scanMediaPlaylist(text);
    if (!scanned.playlist) return { error: scanned.error.message };
    return { playlist: scanned.playlist, avails: findAvails(scanned.playlist).avails };
  });
}

/**
 * The session as stored: its variants and rungs (the same for every viewer of one origin playlist) are kept once
 * under a layout key shared by those sessions; the session holds the key.
 */
type StoredSession = Omit<SessionRecord, 'variants' | 'rungs'> & { layout: string } | SessionRecord;
type Layout = { variants: VariantEntry[]; rungs: Rung[] };
const layoutKey = (hash: string) => `layout:${hash}`;

/** What the hot path keeps of a session in this process: immutable once read (decisions never change). */
type HotSession = { session: SessionRecord; records: AvailRecord[] };

function rungsOf(scanned: MultivariantPlaylist | undefined): Rung[] {
  if (!scanned) return [];
  return scanned.variants.map((v) => {
    const [w, h] = (v.resolution ?? '').split('x').map((x) => Number.parseInt(x, 10));
    const fr = Number.parseFloat(v.attrs['FRAME-RATE'] ?? '');
    return { width: w || 0, height: h || 0, bandwidth: v.bandwidth, ...(Number.isFinite(fr) ? { frameRate: fr } : {}) };
  });
}

export class SsaiServer {
  /** sessions and their decided avails, read from the store once per process (the store stays the source of truth) */
  private readonly hot: LRUCache<string, HotSession>;
  private readonly layouts = new LRUCache<string, Layout>({ max: 1000 });
  private readonly metricChildren = new Map<string, { observe(seconds: number): void }>();

  constructor(private readonly deps: SsaiServerDeps) {
    this.hot = new LRUCache({ max: 100_000, ttl: deps.sessionTtlMs });
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

  private async serve(req: IncomingMessage, res: ServerResponse, url: string): Promise<void> {
    const started = process.hrtime.bigint();
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q + 1);
    const segments = pathname.split('/'); // ['', 'v1', kind, guid, ...]
    const kind = segments[2] ?? '';
    let metricKind: PlaylistKind = 'master';
    let reply: Reply;
    try {
      if (req.method === 'OPTIONS') reply = { status: 204, body: '', type: 'text/plain' };
      else if (kind === 'master' && (req.method === 'GET' || req.method === 'HEAD')) {
        reply = await this.master(segments[3] ?? '', segments.slice(4).join('/'), query, undefined);
      } else if (kind === 'session' && req.method === 'POST') {
        metricKind = 'session';
        reply = await this.session(req, segments[3] ?? '', segments.slice(4).join('/'), query);
      } else if (kind === 'manifest' && req.method !== 'POST') {
        metricKind = 'media';
        const file = segments[5] ?? '';
        const n = /^(\d+)\.m3u8$/.exec(file);
        reply = n && segments.length === 6 ? await this.media(segments[3] ?? '', segments[4] ?? '', Number(n[1])) : fail(ssaiError('BAD_PLAYBACK_PATH'));
      } else if (kind === 'segment' && req.method !== 'POST') {
        metricKind = 'segment';
        reply = segments.length === 9 ? await this.segment(segments as [string, string, string, string, string, string, string, string, string]) : fail(ssaiError('BAD_PLAYBACK_PATH'));
      } else if (kind === 'tracking' && req.method !== 'POST') {
        metricKind = 'tracking';
        reply = await this.tracking(segments[3] ?? '', segments[4] ?? '');
      } else if (pathname === EMPTY_VTT_PATH) {
        reply = { status: 200, body: EMPTY_VTT, type: 'text/vtt; charset=utf-8', headers: { 'cache-control': 'public, max-age=86400' } };
      } else reply = fail(ssaiError('BAD_PLAYBACK_PATH', `no playback route for ${req.method} ${pathname}`));
    } catch (e) {
      this.deps.logger.error({ err: e, url }, 'ssai request failed');
      reply = json(500, { status: false, code: 'INTERNAL', description: 'Internal error' });
    }
    try {
      this.write(req, res, reply);
    } catch (e) {
      // A header value node:http refuses (a control or non-Latin-1 character in a redirect URI): answer 500 instead.
      this.deps.logger.error({ err: e, url }, 'ssai reply could not be written');
      reply = json(500, { status: false, code: 'INTERNAL', description: 'Internal error' });
      this.write(req, res, reply);
    }
    this.metricsFor(metricKind, reply.status).observe(Number(process.hrtime.bigint() - started) / 1e9);
  }

  private write(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
    // A flat header list: no per-request header object to build and walk.
    const headers: string[] = [...CORS_FLAT, 'content-type', reply.type];
    if (reply.headers) for (const k in reply.headers) headers.push(k, reply.headers[k]!);
    if (reply.status !== 302) headers.push('content-length', String(Buffer.byteLength(reply.body)));
    res.writeHead(reply.status, headers);
    res.end(req.method === 'HEAD' ? undefined : reply.body);
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

  private async config(guid: string): Promise<AdinsertConfig | SsaiError> {
    if (!guid) return ssaiError('BAD_PLAYBACK_PATH');
    const config = await this.deps.lookup.get(guid);
    return config ?? ssaiError('ADINSERT_NOT_FOUND', `No ad-insertion configuration ${guid}`);
  }

  /** GET /v1/master/{guid}/{path}: a (new or given) session and the multivariant playlist pointing at our media routes. */
  private async master(guid: string, rest: string, query: string, forced: { id: string; playerParams: Record<string, string> } | undefined): Promise<Reply> {
    const made = await this.startSession(guid, rest, query, forced);
    if ('kind' in made) return fail(made);
    return made.reply;
  }

  private async startSession(guid: string, rest: string, query: string, forced?: { id: string; playerParams: Record<string, string> }):
    Promise<SsaiError | { reply: Reply; session: SessionRecord }> {
    const config = await this.config(guid);
    if ('kind' in config) return config;
    if (!rest) return ssaiError('BAD_PLAYBACK_PATH', 'the playback path names no playlist after the configuration guid');
    const split = splitQuery(query);
    const origin = originUrlOf(config.sourceUrl, rest, split.rest);
    const fetched = await this.deps.origin.fetch(origin);
    if (!fetched.ok) return fetched.error;
    const sid = forced?.id ?? split.sessionId ?? randomUUID();
    const existing = split.sessionId && !forced ? (await this.hotSession(sid))?.session : undefined;
    const playerParams = forced?.playerParams ?? existing?.playerParams ?? split.playerParams;
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
      const media = parsedMedia(fetched);
      if (!media.playlist) return ssaiError('ORIGIN_NOT_HLS', media.error);
      variants = [{ n: 0, kind: 'video', uri: origin }];
      text = `#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000000\n${base}/0.m3u8\n`;
    }
    if (existing) return { reply: playlist(text, true), session: existing };
    const layout: Layout = { variants, rungs: derive(fetched, 'rungs', () => rungsOf(multivariant.playlist)) };
    const hash = createHash('sha1').update(JSON.stringify(layout)).digest('base64url');
    const session: SessionRecord = { id: sid, guid, origin, variants, rungs: layout.rungs, playerParams, createdAt: this.deps.now() };
    const stored: StoredSession = { id: sid, guid, origin, layout: hash, playerParams, createdAt: session.createdAt };
    // The layout is written with every session (refreshing its TTL), so it outlives each session that names it.
    await this.deps.store.set(layoutKey(hash), layout, this.deps.sessionTtlMs);
    await this.deps.store.set(keys.session(sid), stored, this.deps.sessionTtlMs);
    this.hot.delete(sid);
    await this.hotSession(sid); // cached from the stored copies: compact, layout shared with the other sessions
    return { reply: playlist(text, true), session };
  }

  /** POST /v1/session/{guid}/{path} → {manifestUrl, trackingUrl}. */
  private async session(req: IncomingMessage, guid: string, rest: string, query: string): Promise<Reply> {
    const body = await readBody(req, SESSION_BODY_LIMIT);
    if (body === undefined) return fail(ssaiError('SESSION_BODY_TOO_LARGE'));
    const split = splitQuery(query);
    let params: Record<string, string> = split.playerParams;
    if (body.trim()) {
      try {
        const parsed = JSON.parse(body) as { adsParams?: Record<string, unknown>; playerParams?: Record<string, unknown> };
        params = { ...params };
        for (const [k, v] of Object.entries(parsed.adsParams ?? parsed.playerParams ?? {})) params[k] = String(v);
      } catch {
        return json(400, { status: false, code: 'BAD_PLAYBACK_PATH', description: 'The session body is not valid JSON' });
      }
    }
    const id = randomUUID();
    const restQuery = split.rest;
    const made = await this.startSession(guid, rest, restQuery, { id, playerParams: params });
    if ('kind' in made) return fail(made);
    return json(200, {
      manifestUrl: `/v1/master/${guid}/${rest}?${restQuery ? `${restQuery}&` : ''}sessionId=${id}`,
      trackingUrl: `/v1/tracking/${guid}/${id}`,
    });
  }

  /** The session from this process's cache, else from the store (then cached: a session never changes). */
  private async hotSession(sid: string): Promise<HotSession | undefined> {
    if (!sid) return undefined;
    const cached = this.hot.get(sid);
    if (cached) return cached;
    const stored = await this.deps.store.get<StoredSession>(keys.session(sid));
    if (!stored) return undefined;
    let session: SessionRecord;
    if ('layout' in stored) {
      let layout = this.layouts.get(stored.layout);
      if (!layout) {
        layout = await this.deps.store.get<Layout>(layoutKey(stored.layout));
        if (!layout) return undefined;
        this.layouts.set(stored.layout, layout);
      }
      const { layout: _key, ...rest } = stored;
      session = { ...rest, variants: layout.variants, rungs: layout.rungs };
    } else session = stored;
    const hot: HotSession = this.hot.get(sid) ?? { session, records: await this.records(sid) };
    this.hot.set(session.id, hot);
    return hot;
  }

  private async loadSession(guid: string, sid: string): Promise<HotSession | SsaiError> {
    const hot = await this.hotSession(sid);
    if (!hot || hot.session.guid !== guid) return ssaiError('SESSION_NOT_FOUND');
    return hot;
  }

  /** GET /v1/manifest/{guid}/{session}/{n}.m3u8: the origin media playlist with this session's ads stitched in. */
  private async media(guid: string, sid: string, n: number): Promise<Reply> {
    const config = await this.config(guid);
    if ('kind' in config) return fail(config);
    const hot = await this.loadSession(guid, sid);
    if ('kind' in hot) return fail(hot);
    const session = hot.session;
    const entry = session.variants[n];
    if (!entry) return fail(ssaiError('VARIANT_NOT_FOUND'));
    const fetched = await this.deps.origin.fetch(entry.uri);
    if (!fetched.ok) return fail(fetched.error);
    const parsed = parsedMedia(fetched);
    if (!parsed.playlist) return fail(ssaiError('ORIGIN_NOT_HLS', parsed.error));
    const pl = parsed.playlist;
    if (config.type === 'broker' && !pl.endList) {
      return fail(ssaiError('ADINSERT_NOT_LIVE', `Configuration ${guid} is of type broker: live playback needs a configuration of type live (spec 4.2)`));
    }
    if (entry.kind === 'iframe') {
      return playlist(stitchMediaPlaylist(pl, { originUrl: entry.uri, avails: [], trackKind: 'iframe' }).text, !pl.endList);
    }
    const target = pl.targetDuration || 6;
    // A VOD origin without cues takes its avails from the ad server's VMAP, asked once per session.
    const found = parsed.avails.length || !pl.endList ? parsed.avails : await this.deps.planner.vmapAvails(session, config.adServer, pl);
    await this.decideNew(hot, config.adServer, found, target);
    if (entry.kind !== 'video') {
      // Packagers often cue only the video playlists: decide from a video playlist too, so an audio or subtitle
      // playlist fetched first never misses an avail that its video finds (players fetch them side by side).
      const ref = session.variants.find((v) => v.kind === 'video');
      const refFetched = ref ? await this.deps.origin.fetch(ref.uri) : undefined;
      const refParsed = refFetched?.ok ? parsedMedia(refFetched) : undefined;
      if (refParsed?.playlist) await this.decideNew(hot, config.adServer, refParsed.avails, refParsed.playlist.targetDuration || target);
    }
    const records = hot.records;
    const observedKey = keys.observed(sid, n);
    // Read only when a break is to be stitched: the absorbed discontinuities of this session's breaks on this track.
    const observed = records.some((r) => r.ads.length) ? (await this.deps.store.get<Record<string, number[]>>(observedKey)) ?? {} : {};
    const avails: StitchAvail[] = [];
    let signature = `${guid}|${n}|${entry.kind}|${entry.bandwidth ?? ''}|${entry.resolution ?? ''}|${target}`;
    for (const record of records) {
      const placed = await this.placeAvail(record, pl, entry, observed[record.id]);
      if (!placed) continue;
      avails.push(placed);
      signature += `|${placed.id},${placed.startSegmentIndex},${placed.endSegmentIndex},${placed.slotDuration},${placed.duration},${placed.startPdtMs},${placed.absorbedDiscontinuities?.join('.') ?? ''}`;
      for (const ad of record.ads) signature += `,${ad.adId}/${ad.creativeKey}/${ad.duration}/${ad.slate ? 1 : 0}`;
    }
    // Sessions given the same ads get the same playlist but for their session id: stitched once per origin refresh
    // with a placeholder, then joined around each session's id (bounded: distinct decisions beyond the bound stitch
    // on their own).
    const stitch = (forSid: string) => stitchMediaPlaylist(pl, {
      originUrl: entry.uri, avails, trackKind: entry.kind, emptySubtitleUri: EMPTY_VTT_PATH, targetDurationFloor: target,
      // Each empty subtitle span gets its own URI: players and checkers tell segments apart by URI.
      makeAdSegmentUri: (c) => entry.kind === 'subtitles' ? `${c.uri}?avail=${encodeURIComponent(c.avail.id)}&ad=${c.adIndex}&s=${c.segmentIndex}`
        : `/v1/segment/${guid}/${forSid}/${encodeURIComponent(c.avail.id)}/${c.adIndex}/${n}/${c.segmentIndex}${segmentExtension(c.uri)}`,
    });
    const memoKey = `stitched ${signature}`;
    let shared = fetched.memo.get(memoKey) as SharedStitch | undefined;
    if (!shared && fetched.memo.size < MAX_SHARED_STITCHES) {
      const r = stitch(SID_PLACEHOLDER);
      shared = { parts: r.text.split(SID_PLACEHOLDER), observed: r.observed };
      fetched.memo.set(memoKey, shared);
    }
    const result = shared ? { text: shared.parts.join(sid), observed: shared.observed } : stitch(sid);
    let next: Record<string, number[]> | undefined;
    for (const o of result.observed) {
      const before = observed[o.availId] ?? [];
      if (o.absorbedDiscontinuities.every((d) => before.includes(d))) continue;
      next ??= { ...observed };
      next[o.availId] = [...new Set([...before, ...o.absorbedDiscontinuities])].sort((a, b) => a - b);
    }
    if (next) await this.deps.store.set(observedKey, next, this.deps.sessionTtlMs);
    return playlist(result.text, !pl.endList);
  }

  /**
   * Decides the avails of a playlist not yet known to the session. A break found again under another id (its
   * CUE-OUT slid out and a CUE-OUT-CONT names it by its SCTE-35 event id) is the same break: matched by start.
   * Known avails cost no store read; an unknown one first re-reads the session's decisions from the store (another
   * instance may have made it).
   */
  private async decideNew(hot: HotSession, adServer: string, found: Avail[], target: number): Promise<void> {
    let refreshed = false;
    for (const avail of found) {
      if (isKnown(hot.records, avail, target)) continue;
      if (!refreshed) {
        refreshed = true;
        mergeRecords(hot, await this.records(hot.session.id));
        if (isKnown(hot.records, avail, target)) continue;
      }
      const decided = await this.deps.planner.recordFor(hot.session, adServer, avail, target);
      // The stored copy, not the planner's object: that one may hold strings sliced from the whole VAST response.
      mergeRecords(hot, [(await this.deps.store.get<AvailRecord>(keys.avail(hot.session.id, decided.id))) ?? decided]);
    }
  }

  private async records(sid: string): Promise<AvailRecord[]> {
    const ids = [...new Set(await this.deps.store.list(keys.availList(sid)))];
    const out: AvailRecord[] = [];
    for (const id of ids) {
      const r = await this.deps.store.get<AvailRecord>(keys.avail(sid, id));
      if (r) out.push(r);
    }
    return out;
  }

  /**
   * An avail decided on one track placed on another: by program date time when both carry it (tracks may number
   * their segments differently), else by media sequence.
   */
  private async placeAvail(record: AvailRecord, pl: MediaPlaylist, entry: VariantEntry, absorbed: number[] | undefined): Promise<StitchAvail | undefined> {
    if (!record.ads.length) return undefined;
    let start = record.startSegmentIndex;
    let end = record.endSegmentIndex;
    let slot = record.slotDuration;
    const first = pl.segments[0];
    if (record.startPdtMs !== undefined && first?.pdtMs !== undefined) {
      const own = pl.segments.length > 1 ? nominal(pl) : slot;
      const offset = Math.round((record.startPdtMs - first.pdtMs) / 1000 / own);
      start = first.mediaSequence + offset;
      end = start + Math.round(((record.endSegmentIndex - record.startSegmentIndex) * record.slotDuration) / own);
      slot = own;
    }
    const ads: PlannedAd[] = [];
    for (const ad of record.ads) {
      const plan = await this.deps.planner.plan(ad.creativeKey);
      if (!plan) return undefined; // the shared creative record expired: play content rather than half a break
      const track = trackFor(plan, entry);
      const planned: PlannedAd = { id: ad.adId, duration: ad.duration, segments: entry.kind === 'subtitles' ? [] : (track?.segments ?? []) };
      if (track?.mapUri && entry.kind !== 'subtitles') planned.mapUri = track.mapUri;
      if (ad.slate) planned.slate = true;
      ads.push(planned);
    }
    const avail: StitchAvail = { id: record.id, startSegmentIndex: start, endSegmentIndex: end, duration: record.duration, slotDuration: slot, ads };
    if (record.startPdtMs !== undefined) avail.startPdtMs = record.startPdtMs;
    if (absorbed?.length) avail.absorbedDiscontinuities = absorbed;
    return avail;
  }

  /** GET /v1/segment/{guid}/{session}/{availId}/{adIndex}/{n}/{segment}: 302 to the ad media, beacons fired aside. */
  private async segment(parts: [string, string, string, string, string, string, string, string, string]): Promise<Reply> {
    const [, , , guid, sid, availRaw, adIndexRaw, nRaw, segRaw] = parts;
    const hot = await this.loadSession(guid, sid);
    if ('kind' in hot) return fail(hot);
    const availId = decodeURIComponent(availRaw);
    const record = hot.records.find((r) => r.id === availId) ?? await this.deps.store.get<AvailRecord>(keys.avail(sid, availId));
    const ad = record?.ads[Number(adIndexRaw)];
    const entry = hot.session.variants[Number(nRaw)];
    const plan = ad ? await this.deps.planner.plan(ad.creativeKey) : undefined;
    const track = plan && entry ? trackFor(plan, entry) : undefined;
    // The index carries the media's extension (`3.m4s`): ffmpeg-based players refuse segment URIs without one.
    const segIndex = /^\d+/.test(segRaw) ? Number.parseInt(segRaw, 10) : Number.NaN;
    const seg = track?.segments[segIndex];
    if (!record || !ad || !seg || !track) return fail(ssaiError('SEGMENT_NOT_FOUND'));
    if (entry?.kind === 'video') this.fireBeacons(sid, record, Number(adIndexRaw), ad.tracking, track, segIndex);
    return { status: 302, body: '', type: 'text/plain', headers: { location: seg.uri, 'cache-control': 'no-store' } };
  }

  private fireBeacons(sid: string, record: AvailRecord, adIndex: number, tracking: TrackingEvents, track: CreativeTrack, segIndex: number): void {
    const mark = `${sid}:${record.id}:${adIndex}`;
    let offset = 0;
    for (let i = 0; i < segIndex; i++) offset += track.segments[i]?.duration ?? 0;
    const duration = track.segments.reduce((s, x) => s + x.duration, 0);
    const segEnd = offset + (track.segments[segIndex]?.duration ?? 0);
    if (segIndex === 0) {
      this.deps.beacons.fire(`${mark}:impression`, tracking.impression);
      this.deps.beacons.fire(`${mark}:start`, tracking.start);
    }
    for (const [event, q] of QUARTILES) {
      const at = q * duration;
      if (at >= offset && at < segEnd) this.deps.beacons.fire(`${mark}:${event}`, tracking[event]);
    }
    if (segIndex === track.segments.length - 1) this.deps.beacons.fire(`${mark}:complete`, tracking.complete);
  }

  /** GET /v1/tracking/{guid}/{session}: avails, ads and their tracking events for client-side reporting. */
  private async tracking(guid: string, sid: string): Promise<Reply> {
    const hot = await this.loadSession(guid, sid);
    if ('kind' in hot) return fail(hot);
    const records = await this.records(sid);
    mergeRecords(hot, records);
    return json(200, {
      sessionId: sid,
      avails: records.map((r) => {
        let offset = 0;
        return {
          availId: r.id, index: r.index, duration: r.duration,
          ...(r.startPdtMs !== undefined ? { startTime: new Date(r.startPdtMs).toISOString() } : {}),
          startSegmentIndex: r.startSegmentIndex, endSegmentIndex: r.endSegmentIndex,
          ...(r.error ? { error: r.error } : {}), skipped: r.skipped,
          ads: r.ads.map((a) => {
            const start = offset;
            offset += a.duration;
            const events = (['impression', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete'] as const).map((event) => ({
              event, offsetSeconds: start + a.duration * ({ impression: 0, start: 0, firstQuartile: 0.25, midpoint: 0.5, thirdQuartile: 0.75, complete: 1 }[event]),
              beaconUrls: a.tracking[event],
            }));
            return { adId: a.adId, creativeId: a.creativeId, startOffsetSeconds: start, duration: a.duration, ...(r.startPdtMs !== undefined ? { startTime: new Date(r.startPdtMs + start * 1000).toISOString() } : {}), trackingEvents: events };
          }),
        };
      }),
    });
  }
}

function isKnown(records: AvailRecord[], avail: Avail, target: number): boolean {
  const slotMs = (avail.slotDuration || target) * 1000;
  return records.some((r) => r.id === avail.id || (r.startPdtMs !== undefined && avail.startPdtMs !== undefined
    ? Math.abs(r.startPdtMs - avail.startPdtMs) < slotMs / 2 : r.startSegmentIndex === avail.startSegmentIndex));
}

/** Adds decisions not yet in the session's cached list (by id; a decision never changes once made). */
function mergeRecords(hot: HotSession, records: AvailRecord[]): void {
  for (const r of records) if (!hot.records.some((x) => x.id === r.id)) hot.records.push(r);
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

function trackFor(plan: CreativePlan, entry: VariantEntry): CreativeTrack | undefined {
  if (entry.kind === 'audio') return plan.audio;
  return closestTrack(plan, entry);
}

const SESSION_BODY_LIMIT = 64 * 1024;

/** The body as text, or undefined when it is over `limit` (the rest is drained so a 413 can still be answered). */
function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= limit) chunks.push(c);
    });
    req.on('end', () => resolve(size > limit ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
    // A client gone before the end: settle (after 'end' this rejection is a no-op).
    req.on('close', () => reject(new Error('the request closed before its body ended')));
  });
}
