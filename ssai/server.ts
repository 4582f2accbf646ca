// The SSAI proxy's hot path (issue 5 "Playback"): plain node:http, no framework. Moves manifests only: content
// segments stay on the origin, ad segments on the media store behind a beacon-firing redirect.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { AdinsertConfig } from '../src/adinserts/adinsert.schema.js';
import { AdPlanner, closestTrack, keys, type AvailRecord, type CreativePlan, type CreativeTrack, type Rung, type SessionRecord } from './ad-planner.js';
import type { BeaconSender } from './beacons.js';
import { findAvails } from './cue-finder.js';
import { ssaiError, toErrorBody, type SsaiError } from './errors.js';
import type { SsaiMetrics, PlaylistKind } from './metrics.js';
import { rewriteMultivariant, stitchMediaPlaylist, type PlannedAd, type StitchAvail, type VariantEntry } from './manifest-rewriter.js';
import type { OriginFetcher } from './origin-fetcher.js';
import { scanMediaPlaylist, scanMultivariantPlaylist, type MediaPlaylist } from './playlist-scanner.js';
import type { SessionStore } from './session-store.js';
import type { TrackingEvents } from './vast-decision.js';

export interface SsaiServerDeps {
  lookup: { get(guid: string): Promise<AdinsertConfig | undefined> };
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

function rungsOf(text: string): Rung[] {
  const scanned = scanMultivariantPlaylist(text).playlist;
  if (!scanned) return [];
  return scanned.variants.map((v) => {
    const [w, h] = (v.resolution ?? '').split('x').map((x) => Number.parseInt(x, 10));
    const fr = Number.parseFloat(v.attrs['FRAME-RATE'] ?? '');
    return { width: w || 0, height: h || 0, bandwidth: v.bandwidth, ...(Number.isFinite(fr) ? { frameRate: fr } : {}) };
  });
}

export class SsaiServer {
  constructor(private readonly deps: SsaiServerDeps) {}

  /** The part's rawHandler: takes only /v1/ paths. */
  handler(): (req: IncomingMessage, res: ServerResponse) => boolean {
    return (req, res) => {
      const url = req.url ?? '/';
      if (!url.startsWith('/v1/')) return false;
      void this.serve(req, res, url);
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
    const headers: Record<string, string> = { ...CORS, 'content-type': reply.type, ...reply.headers };
    if (reply.status !== 302) headers['content-length'] = String(Buffer.byteLength(reply.body));
    res.writeHead(reply.status, headers);
    res.end(req.method === 'HEAD' ? undefined : reply.body);
    this.deps.metrics.served.inc({ kind: metricKind, status: String(reply.status) });
    this.deps.metrics.latency.observe({ kind: metricKind }, Number(process.hrtime.bigint() - started) / 1e9);
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
    const existing = split.sessionId && !forced ? await this.deps.store.get<SessionRecord>(keys.session(sid)) : undefined;
    const playerParams = forced?.playerParams ?? existing?.playerParams ?? split.playerParams;
    const base = `/v1/manifest/${guid}/${sid}`;
    const multivariant = scanMultivariantPlaylist(fetched.text);
    let text: string;
    let variants: VariantEntry[];
    if (multivariant.playlist && multivariant.playlist.variants.length) {
      const rewritten = rewriteMultivariant(fetched.text, { originUrl: origin, makeVariantUri: (n) => `${base}/${n}.m3u8` });
      if (rewritten.error) return ssaiError('ORIGIN_NOT_HLS', rewritten.error.message);
      text = rewritten.text;
      variants = rewritten.entries;
    } else {
      // A media playlist given as the entry point: the session has that one track.
      const media = scanMediaPlaylist(fetched.text);
      if (!media.playlist) return ssaiError('ORIGIN_NOT_HLS', media.error.message);
      variants = [{ n: 0, kind: 'video', uri: origin }];
      text = `#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000000\n${base}/0.m3u8\n`;
    }
    const session: SessionRecord = {
      id: sid, guid, origin, variants, rungs: rungsOf(fetched.text), playerParams, createdAt: this.deps.now(),
    };
    if (!existing) await this.deps.store.set(keys.session(sid), session, this.deps.sessionTtlMs);
    return { reply: playlist(text, true), session: existing ?? session };
  }

  /** POST /v1/session/{guid}/{path} → {manifestUrl, trackingUrl}. */
  private async session(req: IncomingMessage, guid: string, rest: string, query: string): Promise<Reply> {
    const body = await readBody(req, 64 * 1024);
    let params: Record<string, string> = splitQuery(query).playerParams;
    if (body.trim()) {
      try {
        const parsed = JSON.parse(body) as { adsParams?: Record<string, unknown>; playerParams?: Record<string, unknown> };
        for (const [k, v] of Object.entries(parsed.adsParams ?? parsed.playerParams ?? {})) params = { ...params, [k]: String(v) };
      } catch {
        return json(400, { status: false, code: 'BAD_PLAYBACK_PATH', description: 'The session body is not valid JSON' });
      }
    }
    const id = randomUUID();
    const made = await this.startSession(guid, rest, splitQuery(query).rest, { id, playerParams: params });
    if ('kind' in made) return fail(made);
    const restQuery = splitQuery(query).rest;
    return json(200, {
      manifestUrl: `/v1/master/${guid}/${rest}?${restQuery ? `${restQuery}&` : ''}sessionId=${id}`,
      trackingUrl: `/v1/tracking/${guid}/${id}`,
    });
  }

  private async loadSession(guid: string, sid: string): Promise<SessionRecord | SsaiError> {
    const session = sid ? await this.deps.store.get<SessionRecord>(keys.session(sid)) : undefined;
    if (!session || session.guid !== guid) return ssaiError('SESSION_NOT_FOUND');
    return session;
  }

  /** GET /v1/manifest/{guid}/{session}/{n}.m3u8: the origin media playlist with this session's ads stitched in. */
  private async media(guid: string, sid: string, n: number): Promise<Reply> {
    const config = await this.config(guid);
    if ('kind' in config) return fail(config);
    const session = await this.loadSession(guid, sid);
    if ('kind' in session) return fail(session);
    const entry = session.variants[n];
    if (!entry) return fail(ssaiError('VARIANT_NOT_FOUND'));
    const fetched = await this.deps.origin.fetch(entry.uri);
    if (!fetched.ok) return fail(fetched.error);
    const scanned = scanMediaPlaylist(fetched.text);
    if (!scanned.playlist) return fail(ssaiError('ORIGIN_NOT_HLS', scanned.error.message));
    const pl = scanned.playlist;
    if (config.type === 'broker' && !pl.endList) {
      return fail(ssaiError('ADINSERT_NOT_LIVE', `Configuration ${guid} is of type broker: live playback needs a configuration of type live (spec 4.2)`));
    }
    if (entry.kind === 'iframe') {
      return playlist(stitchMediaPlaylist(pl, { originUrl: entry.uri, avails: [], trackKind: 'iframe' }).text, !pl.endList);
    }
    const target = pl.targetDuration || 6;
    let records = await this.records(sid);
    const fresh = await this.decideNew(session, config.adServer, pl, records, target);
    if (entry.kind !== 'video') {
      // Packagers often cue only the video playlists: decide from a video playlist too, so an audio or subtitle
      // playlist fetched first never misses an avail that its video finds (players fetch them side by side).
      const ref = session.variants.find((v) => v.kind === 'video');
      const refText = ref ? await this.deps.origin.fetch(ref.uri) : undefined;
      const refPl = refText?.ok ? scanMediaPlaylist(refText.text).playlist : undefined;
      if (refPl && await this.decideNew(session, config.adServer, refPl, fresh ? await this.records(sid) : records, refPl.targetDuration || target)) records = await this.records(sid);
      else if (fresh) records = await this.records(sid);
    } else if (fresh) records = await this.records(sid);
    const observedKey = keys.observed(sid, n);
    const observed = (await this.deps.store.get<Record<string, number[]>>(observedKey)) ?? {};
    const avails: StitchAvail[] = [];
    for (const record of records) {
      const placed = await this.placeAvail(record, pl, entry, observed[record.id]);
      if (placed) avails.push(placed);
    }
    const result = stitchMediaPlaylist(pl, {
      originUrl: entry.uri, avails, trackKind: entry.kind, emptySubtitleUri: EMPTY_VTT_PATH, targetDurationFloor: target,
      // Each empty subtitle span gets its own URI: players and checkers tell segments apart by URI.
      makeAdSegmentUri: (c) => entry.kind === 'subtitles' ? `${c.uri}?avail=${encodeURIComponent(c.avail.id)}&ad=${c.adIndex}&s=${c.segmentIndex}`
        : `/v1/segment/${guid}/${sid}/${encodeURIComponent(c.avail.id)}/${c.adIndex}/${n}/${c.segmentIndex}`,
    });
    let changed = false;
    for (const o of result.observed) {
      const before = observed[o.availId] ?? [];
      const merged = [...new Set([...before, ...o.absorbedDiscontinuities])].sort((a, b) => a - b);
      if (merged.length !== before.length) { observed[o.availId] = merged; changed = true; }
    }
    if (changed) await this.deps.store.set(observedKey, observed, this.deps.sessionTtlMs);
    return playlist(result.text, !pl.endList);
  }

  /**
   * Decides the avails of a playlist not yet known to the session. A break found again under another id (its
   * CUE-OUT slid out and a CUE-OUT-CONT names it by its SCTE-35 event id) is the same break: matched by start.
   */
  private async decideNew(session: SessionRecord, adServer: string, pl: MediaPlaylist, records: AvailRecord[], target: number): Promise<boolean> {
    let fresh = false;
    for (const avail of findAvails(pl).avails) {
      const slotMs = (avail.slotDuration || target) * 1000;
      const known = records.some((r) => r.id === avail.id || (r.startPdtMs !== undefined && avail.startPdtMs !== undefined
        ? Math.abs(r.startPdtMs - avail.startPdtMs) < slotMs / 2 : r.startSegmentIndex === avail.startSegmentIndex));
      if (known) continue;
      await this.deps.planner.recordFor(session, adServer, avail, target);
      fresh = true;
    }
    return fresh;
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
    const session = await this.loadSession(guid, sid);
    if ('kind' in session) return fail(session);
    const availId = decodeURIComponent(availRaw);
    const record = await this.deps.store.get<AvailRecord>(keys.avail(sid, availId));
    const ad = record?.ads[Number(adIndexRaw)];
    const entry = session.variants[Number(nRaw)];
    const plan = ad ? await this.deps.planner.plan(ad.creativeKey) : undefined;
    const track = plan && entry ? trackFor(plan, entry) : undefined;
    const segIndex = Number(segRaw);
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
    const session = await this.loadSession(guid, sid);
    if ('kind' in session) return fail(session);
    const records = await this.records(sid);
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

function nominal(pl: MediaPlaylist): number {
  const ds = pl.segments.map((s) => s.duration).sort((a, b) => a - b);
  return Math.round((ds[Math.floor(ds.length / 2)] ?? pl.targetDuration) * 1000) / 1000 || pl.targetDuration || 6;
}

function trackFor(plan: CreativePlan, entry: VariantEntry): CreativeTrack | undefined {
  if (entry.kind === 'audio') return plan.audio;
  return closestTrack(plan, entry);
}

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) { req.destroy(); reject(new Error('body too large')); return; }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
