// DASH playback through the proxy, VOD (issue 33 items 1–3): GET /v1/dash/{guid}/{path}.mpd (or the /v1/master path
// of an .mpd) makes a viewer's session from a static MPD (one Period or several), decides its breaks as a VOD HLS session's (the
// ad server's VMAP, asked once per session; one decision per break, stored, whatever the format) and answers the
// viewer's own MPD: the ads as Periods (mpd-stitcher.ts) whose segments go through /v1/segment, so beacons fire as
// for HLS, and /v1/tracking lists the breaks. A live (dynamic) MPD's breaks come from its window's SCTE-35 cues and
// are placed by their stored decisions (dash-live.ts): docs/ssai-dash.md.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AdinsertConfig } from '../../kernel/seams/adinserts.js';
import type { AvailRecord, ContentRung, SessionRecord } from '../decide/avail-record.js';
import type { AdPlanner } from '../decide/ad-planner.js';
import type { DecisionScheduler } from '../decide/decision-scheduler.js';
import type { ContentShape } from '../stitch/content-shape.js';
import type { VariantEntry } from '../stitch/manifest-rewriter.js';
import type { PlaylistPolicy } from '../stitch/playlist-policy.js';
import { stitchMpd, type DashBreak, type DashAdRendition } from '../stitch/mpd-stitcher.js';
import { periodAt, timelineStarts, type MpdRead, type MpdRepresentation } from '../parse/mpd-reader.js';
import type { Avail } from '../parse/cue-finder.js';
import { cueAvails, mpdCues, orderedCues } from '../parse/mpd-cues.js';
import type { InbandCues } from './dash-inband.js';
import { liveCueAvails, livePlace, livePrerollAvail, outsideLivePreroll, pastBreak, presentationDelayOf, readFetchedMpd } from './dash-live.js';
import { isPreroll, livePrerollOf, noPrerollRecord, PREROLL_AVAIL_ID, PREROLL_JOIN_WINDOW_MS } from '../decide/live-preroll.js';
import type { SsaiMetrics } from '../metrics.js';
import type { MediaPlaylist } from '../../media/playlist-scanner.js';
import { ssaiError, type SsaiError } from '../errors.js';
import { trackFor } from './avail-placement.js';
import { mergeRecords, type HotSessions } from './hot-sessions.js';
import { fail, type Client, type Reply } from './http-reply.js';
import { derive, type OriginFetcher, type OriginOk } from './origin-fetcher.js';
import { originUrlOf, splitQuery } from './playback-path.js';
import { isSessionStoreUnavailable, type SessionStore } from '../store/session-store.js';
import type { StoreFallbacks } from './store-outage.js';
import type { DebugLog } from '../store/debug-log.js';
import { debugFlag, originEntry } from './debug-route.js';
import { breakPolicies, suppresses } from './break-gate.js';
import { suppressionOf, type LiveEdge } from '../decide/break-policy.js';
import { keys } from '../decide/avail-record.js';

export const MPD_TYPE = 'application/dash+xml';

export interface DashPlaybackDeps {
  origin: OriginFetcher;
  planner: Pick<AdPlanner, 'vmapAvails' | 'plan' | 'expectDecisions' | 'suppressedRecord'>;
  decisions: Pick<DecisionScheduler, 'inWindow'>;
  sessions: HotSessions;
  store: SessionStore;
  fallbacks: StoreFallbacks;
  logger: Logger;
  metrics: Pick<SsaiMetrics, 'cueErrors'>;
  now: () => number;
  /** how long a session's own records (its live edge) are kept */
  sessionTtlMs: number;
  config: (guid: string) => Promise<AdinsertConfig | SsaiError>;
  policyOf: (config: AdinsertConfig) => PlaylistPolicy;
  /** the empty WebVTT a sidecar text track plays during ads */
  emptyTextUri: string;
  /** debug sessions' logs (issue 31 item 8): a session started with ads.debug=1 logs its origin fetches here */
  debugLog?: DebugLog;
  /** the segments' emsg cues of an MPD that announces them (InbandEventStream) */
  inband?: InbandCues;
}

/** Whether a playback path names an MPD (the /v1/master and /v1/session routes hand those to DASH). */
export const isMpdPath = (rest: string): boolean => /\.mpd$/i.test(rest);

type Track = Omit<VariantEntry, 'n' | 'uri'>;
function trackOf(r: MpdRepresentation): Track {
  const v: Track = { kind: r.kind === 'text' ? 'subtitles' : r.kind, bandwidth: r.bandwidth };
  if (r.width && r.height) v.resolution = `${r.width}x${r.height}`;
  if (r.codecs) v.codecs = r.codecs;
  if (r.lang) v.language = r.lang;
  if (r.audioChannels) v.channels = r.audioChannels;
  return v;
}
const sameTrack = (a: Track, b: Track): boolean => a.kind === b.kind && a.bandwidth === b.bandwidth && a.resolution === b.resolution
  && a.codecs === b.codecs && a.language === b.language && a.channels === b.channels;

/**
 * The session's tracks (the /v1/segment route reads `n` as an index into them): one entry per track of the origin's
 * Periods, a track that several Periods list (the same kind, size, bandwidth, codecs, language) once.
 */
function variantsOf(origin: string, read: MpdRead): VariantEntry[] {
  const out: VariantEntry[] = [];
  for (const r of read.representations) {
    const track = trackOf(r);
    if (out.some((v) => sameTrack(v, track))) continue;
    // (a single-Period MPD's entries named as before Periods were read: stored sessions keep their tracks)
    const where = `${r.periodIndex ? `${read.periods[r.periodIndex]!.id}/` : ''}${r.setIndex}/${encodeURIComponent(r.id)}`;
    out.push({ n: out.length, ...track, uri: `${origin}#${where}` });
  }
  return out;
}

/**
 * The session's track an ad Representation mirroring `rep` is addressed by: the same track, else (a live Period whose
 * tracks came after the session began) the nearest of its kind by bandwidth.
 */
function variantIndexOf(variants: readonly VariantEntry[], rep: MpdRepresentation): number | undefined {
  const track = trackOf(rep);
  const same = variants.findIndex((v) => sameTrack(v, track));
  if (same >= 0) return same;
  const off = (v: VariantEntry): number => Math.abs((v.bandwidth ?? 0) - (track.bandwidth ?? 0));
  let best: VariantEntry | undefined;
  for (const v of variants) if (v.kind === track.kind && (!best || off(v) < off(best))) best = v;
  return best ? variants.indexOf(best) : undefined;
}

function rungsOf(read: MpdRead): ContentRung[] {
  // (the creative is prepared once per rung, whichever Periods list it)
  const rungs = new Map<string, ContentRung>();
  for (const r of read.representations) {
    if (r.kind !== 'video') continue;
    const key = `${r.width}x${r.height} ${r.bandwidth} ${r.frameRate ?? ''} ${r.codecs ?? ''}`;
    if (!rungs.has(key)) rungs.set(key, { width: r.width ?? 0, height: r.height ?? 0, bandwidth: r.bandwidth, ...(r.frameRate ? { frameRate: r.frameRate } : {}), ...(r.codecs ? { codecs: r.codecs } : {}) });
  }
  return [...rungs.values()];
}

/** The content's shape from the MPD itself (no probe): CMAF segments, audio in its own AdaptationSet or not. */
function shapeOf(read: MpdRead): ContentShape {
  const audio = read.representations.find((r) => r.kind === 'audio');
  return { container: 'fmp4', muxedAudio: !audio, ...(audio?.audioSamplingRate ? { audioSampleRate: audio.audioSamplingRate } : {}),
    ...(audio?.audioChannels ? { audioChannels: audio.audioChannels } : {}) };
}

/**
 * The reference video's segments as an ENDLIST playlist (numbered from 0): VMAP breaks are placed on its segment
 * boundaries exactly as on an HLS VOD's (vmap-avails.ts), and a record's startSegmentIndex is an index into it.
 */
export function timelinePlaylist(starts: Array<{ start: number; duration: number }>): MediaPlaylist {
  const durations = starts.map((s) => s.duration);
  return {
    kind: 'media', targetDuration: Math.ceil(Math.max(1, ...durations)), mediaSequence: 0, discontinuitySequence: 0, playlistType: 'VOD',
    endList: true, independentSegments: true, headerTags: [], header: [], trailingTags: [], trailingLines: [], hasTargetDuration: true,
    segments: starts.map((s, i) => ({
      uri: String(i), duration: s.duration, title: '', mediaSequence: i, discontinuitySequence: 0, discontinuity: false,
      tags: [], lines: [], extinf: String(s.duration), ownKey: false, ownMap: false, gap: false, line: i + 1,
    })),
  };
}

/**
 * A track's segments that start inside the ad: the creative's audio ends an AAC frame after its video, a last segment
 * of 21 ms that would start after the Period's end.
 */
function withinAd(durations: number[], adSeconds: number): number[] {
  const kept: number[] = [];
  let at = 0;
  for (const d of durations) {
    if (at >= adSeconds - 0.05) break;
    kept.push(d);
    at += d;
  }
  return kept;
}

/** A VOD break's place: the segment boundary of its record, the content resuming at the boundary nearest its end. */
function vodPlace(record: AvailRecord, read: MpdRead, starts: Array<{ start: number; duration: number }>): { at: number; resume: number } | undefined {
  const last = read.periods[read.periods.length - 1]!;
  const bounds = [...starts.map((s) => s.start), last.startSec + last.durationSec];
  const at = bounds[Math.min(record.startSegmentIndex, starts.length)];
  if (at === undefined) return undefined;
  // a break that replaces content resumes it at the boundary nearest its end (the decision's duration)
  let resume = at;
  if (!record.insert) for (const x of bounds) if (Math.abs(x - (at + record.duration)) < Math.abs(resume - (at + record.duration))) resume = x;
  return { at, resume };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 6;

/** `reload`: the session's own MPD URL (a live MPD's Location: its reloads come back to the session). */
/** `fetched`: the origin MPD's fetch, whose memo holds what is derived from it (shared by every viewer of it). */
type Started = { session: SessionRecord; read: MpdRead; origin: string; storeAway: boolean; fetched: OriginOk; reload: string };

/**
 * Where a viewer's session id goes in a shared MPD text: viewers with the same breaks and creatives get one MPD but
 * for their session id in the ad segments' URLs (the ads' ids are in the tracking, not in the MPD), so it is stitched
 * once per origin text and signature, as HLS's playlists are (server.ts). Characters valid in a URL path and in XML.
 */
const SID_PLACEHOLDER = `@@sid-${randomUUID()}@@`;
/** A session id as the stitcher writes a template's literal part in an attribute: `$` doubled, XML's specials escaped. */
const escapedSid = (sid: string): string => sid.replace(/\$/g, '$$$$').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** Shared MPD texts per origin text; distinct signatures beyond the bound are stitched on their own. */
const MAX_SHARED_MPDS = 512;

/**
 * A stitched MPD shared by viewers, as the bytes written: the text encoded once, in pieces split where the session id
 * goes. A viewer's answer is one Buffer.concat of the pieces and its id (one memcpy of the MPD), written with one
 * res.end: no per-request join, UTF-8 encoding or length scan of the text (bench/ssai-dash.ts).
 */
type SharedMpd = { pieces: Buffer[] };
const sharedMpd = (text: string): SharedMpd => ({ pieces: text.split(SID_PLACEHOLDER).map((p) => Buffer.from(p, 'utf8')) });
function render(shared: SharedMpd, sid: Buffer): Buffer {
  const { pieces } = shared;
  if (pieces.length === 1) return pieces[0]!;
  const list: Buffer[] = [];
  let length = 0;
  for (let i = 0; i < pieces.length; i++) {
    if (i > 0) { list.push(sid); length += sid.length; }
    list.push(pieces[i]!);
    length += pieces[i]!.length;
  }
  return Buffer.concat(list, length);
}

/**
 * A VOD viewer's MPD as last answered (issue 33 item 5): the shared MPD its breaks and creatives map to, for the
 * configuration object it was made under. Kept with the origin fetch (a new origin text starts afresh), so a viewer's
 * MPD asked again costs the configuration and origin lookups (both cached) and a render, not the session, decision and
 * creative lookups nor the signature. Kept VIEWER_MPD_TTL_MS: past it the next request takes the whole path again, so a
 * creative whose plan expired (kept a week: the viewer then gets the content there) or a session gone from the store
 * is seen within a minute.
 */
type ViewerMpd = { config: AdinsertConfig; guid: string; shared: SharedMpd; sid: Buffer; until: number };
const VIEWER_MPD_TTL_MS = 60_000;
/** Viewers remembered per origin text (the oldest dropped beyond): a pointer and an id each. */
const MAX_VIEWER_MPDS = 200_000;
const MPD_HEADERS: Record<string, string> = { 'cache-control': 'no-store' };
/** The origin fetch's memo entry of the viewers answered from it. */
const VIEWERS = 'mpd-viewers';

export class DashPlayback {
  constructor(private readonly deps: DashPlaybackDeps) {}

  /** GET /v1/dash/{guid}/{path}.mpd: the session's MPD with its breaks decided and stitched. */
  async mpd(guid: string, rest: string, query: string, client: Client): Promise<Reply> {
    const config = await this.deps.config(guid);
    if ('kind' in config) return fail(config);
    const again = rest ? await this.answeredBefore(config, rest, query) : undefined;
    if (again) return again;
    const started = await this.start(config, rest, query, client);
    if ('kind' in started) return fail(started);
    return this.stitched(config, started);
  }

  /**
   * The MPD of a VOD viewer who asked before (ViewerMpd), or undefined: the whole path. The origin is looked up as on
   * every request (its cache, its refresh): a changed text is a new fetch with no viewers remembered.
   */
  private async answeredBefore(config: AdinsertConfig, rest: string, query: string): Promise<Reply | undefined> {
    if (!query.includes('sessionId=')) return undefined;
    // the query a player's reloads carry (the Location and session route's manifestUrl: sessionId alone) read without
    // splitQuery's decoding; any other query by it
    const bare = query.startsWith('sessionId=') && !/[&%+]/.test(query);
    const split = bare ? { sessionId: query.slice('sessionId='.length), rest: '' } : splitQuery(query);
    if (!split.sessionId) return undefined;
    const fetched = await this.deps.origin.fetch(originUrlOf(config.sourceUrl, rest, split.rest), { mpd: true });
    if (!fetched.ok) return undefined;
    const seen = (fetched.memo.get(VIEWERS) as Map<string, ViewerMpd> | undefined)?.get(split.sessionId);
    if (!seen || seen.config !== config || seen.guid !== config.guid || this.deps.now() >= seen.until) return undefined;
    return { status: 200, body: render(seen.shared, seen.sid), type: MPD_TYPE, headers: MPD_HEADERS };
  }

  /** Remembers a VOD viewer's MPD with the origin fetch it was stitched from (answeredBefore). */
  private remember(config: AdinsertConfig, started: Started, shared: SharedMpd, sid: Buffer): void {
    const viewers = derive(started.fetched, VIEWERS, () => new Map<string, ViewerMpd>());
    // the oldest first out: a Map iterates in insertion order
    if (viewers.size >= MAX_VIEWER_MPDS) viewers.delete(viewers.keys().next().value!);
    viewers.delete(started.session.id);
    viewers.set(started.session.id, { config, guid: config.guid, shared, sid, until: this.deps.now() + VIEWER_MPD_TTL_MS });
  }

  /** Makes (or finds, by `sessionId`) the session of an MPD; `forced` is the session route's own id and parameters. */
  async start(config: AdinsertConfig, rest: string, query: string, client: Client, forced?: { id: string; playerParams: Record<string, string> }): Promise<Started | SsaiError> {
    if (!rest) return ssaiError('BAD_PLAYBACK_PATH', 'the playback path names no MPD after the configuration guid');
    const split = splitQuery(query);
    const origin = originUrlOf(config.sourceUrl, rest, split.rest);
    // ads.debug (the session body's debug) as HLS reads it: a bad value is a 400 whether or not the session exists
    const debug = debugFlag((forced?.playerParams ?? split.playerParams).debug);
    if (typeof debug !== 'boolean') return debug;
    const asked = performance.now();
    const fetched = await this.deps.origin.fetch(origin, { mpd: true });
    // an existing debug session logs every origin fetch of its MPD, as an HLS session its playlists'
    const logOrigin = (session: SessionRecord | undefined): void => {
      if (session?.debug) this.deps.debugLog?.write(session, originEntry(origin, fetched, performance.now() - asked));
    };
    if (!fetched.ok) {
      if (split.sessionId && !forced) logOrigin((await this.deps.sessions.get(split.sessionId).catch(() => undefined))?.session);
      return fetched.error;
    }
    const read = readFetchedMpd(fetched, this.deps.now());
    if (!read.ok) return ssaiError(read.unsupported ? 'DASH_MPD_UNSUPPORTED' : 'ORIGIN_NOT_DASH', read.message);
    const sid = forced?.id ?? split.sessionId ?? randomUUID();
    const reload = `/v1/dash/${config.guid}/${rest}?${split.rest ? `${split.rest}&` : ''}sessionId=${encodeURIComponent(sid)}`;
    let storeAway = false;
    let existing: SessionRecord | undefined;
    try {
      existing = split.sessionId && !forced ? (await this.deps.sessions.get(sid))?.session : undefined;
    } catch (e) {
      if (!isSessionStoreUnavailable(e)) throw e;
      storeAway = true;
    }
    // another configuration's session is not this one's to play (nor to overwrite): as HLS's session routes answer
    if (existing && existing.guid !== config.guid) return ssaiError('SESSION_NOT_FOUND');
    if (existing) {
      logOrigin(existing);
      return { session: existing, read: read.value, origin, storeAway, fetched, reload };
    }
    // ads.mode is the HLS routes' (guided playback: HLS interstitials); ads.debug is the proxy's own, not the ad server's
    const { mode: _mode, debug: _debug, ...playerParams } = forced?.playerParams ?? split.playerParams;
    const variants = variantsOf(origin, read.value);
    const layout = { variants, rungs: derive(fetched, 'mpd-rungs', () => rungsOf(read.value)) };
    // the viewer's user agent and address, for the ad server URL's [session.user_agent] and [session.client_ip]
    const session: SessionRecord = { id: sid, guid: config.guid, origin, variants, rungs: layout.rungs, playerParams,
      ...(debug && this.deps.debugLog ? { debug: true as const } : {}), ...client, createdAt: this.deps.now() };
    if (!storeAway) {
      try {
        await this.deps.sessions.save(session, layout);
        this.deps.planner.expectDecisions();
      } catch (e) {
        if (!isSessionStoreUnavailable(e)) throw e;
        storeAway = true;
      }
    }
    if (session.debug && !storeAway) {
      this.deps.debugLog?.write(session, { kind: 'session', mode: 'stitched', origin, playerParams });
      logOrigin(session);
    }
    return { session, read: read.value, origin, storeAway, fetched, reload };
  }

  /** The session's MPD: its VMAP breaks decided (within the decision deadline) and stitched as Periods. */
  private async stitched(config: AdinsertConfig, started: Started): Promise<Reply> {
    if (started.read.type === 'dynamic') return this.live(config, started);
    const { session, read, origin, fetched } = started;
    const memo = fetched.memo;
    const policy = this.deps.policyOf(config);
    const starts = this.startsOf(started);
    let records: AvailRecord[] = [];
    // No store, no session another proxy could read (issue 27): the viewer gets the content alone.
    if (!started.storeAway && starts.length) {
      // SCTE-35 EventStream cues place the breaks; a VOD without them takes its breaks from the ad server's VMAP
      const cues = await this.cuesOf(started);
      const fromCues = cueAvails(cues.cues, starts);
      const avails = fromCues.length ? fromCues
        : await this.deps.fallbacks.or(this.deps.planner.vmapAvails(session, config.adServer, timelinePlaylist(starts)), [], 'read');
      records = await this.decide(session, config, avails, Math.round(median(starts.map((s) => s.duration))) || 6, shapeOf(read));
    }
    const breaks: DashBreak[] = [];
    // what the MPD text depends on besides the origin's: the layout, the policy, each break stitched and its creatives
    let signature = `${session.guid} ${policy.key} ${session.variants.map((v) => v.uri).join(' ')}`;
    for (const record of records) {
      const place = vodPlace(record, read, starts);
      const b = place ? await this.breakOf(session, record, read, place, policy) : undefined;
      if (!b) continue;
      breaks.push(b);
      signature += `|${b.id},${b.atSeconds},${b.resumeSeconds}${record.ads.map((a) => `,${a.creativeKey}/${a.duration}`).join('')}`;
    }
    const stitch = (): SharedMpd => sharedMpd(stitchMpd(read, { mpdUrl: origin, breaks, emptyTextUri: policy.adUri?.(this.deps.emptyTextUri) ?? this.deps.emptyTextUri,
      ...(policy.contentUri ? { contentUri: policy.contentUri } : {}), removeCues: policy.removeCues }));
    const key = `mpd-stitched ${signature}`;
    let shared = memo.get(key) as SharedMpd | undefined;
    if (!shared) {
      shared = stitch();
      if (memo.size < MAX_SHARED_MPDS) memo.set(key, shared);
    }
    const sid = Buffer.from(escapedSid(session.id), 'utf8');
    // (a debug session's requests each log their origin fetch, and a session without the store is not one to keep)
    if (!session.debug && !started.storeAway) this.remember(config, started, shared, sid);
    return { status: 200, body: render(shared, sid), type: MPD_TYPE, headers: MPD_HEADERS };
  }

  /** The video timeline's segment starts across the Periods, once per origin fetch (every viewer of the MPD shares them). */
  private startsOf(started: Started): ReturnType<typeof timelineStarts> {
    return derive(started.fetched, 'mpd-starts', () => timelineStarts(started.read));
  }

  /** The MPD's SCTE-35 cues, once per origin fetch; a malformed one is counted once per fetch, not per viewer. */
  private async cuesOf(started: Started): Promise<ReturnType<typeof mpdCues>> {
    const own = derive(started.fetched, 'mpd-cues', () => {
      const cues = mpdCues(started.read);
      for (const w of cues.warnings) this.deps.metrics.cueErrors.inc({ reason: w.reason });
      return cues;
    });
    // inband (emsg) cues, read from the segments once per origin (dash-inband.ts, which counts their errors); kept
    // with the fetch once every segment is read
    const kept = started.fetched.memo.get('mpd-inband-cues') as ReturnType<typeof mpdCues> | undefined;
    if (kept || !this.deps.inband) return kept ?? own;
    const inband = await this.deps.inband.cues(started.origin, started.read);
    const cues = inband.cues.length ? { cues: orderedCues([...own.cues, ...inband.cues]), warnings: own.warnings } : own;
    if (inband.complete) started.fetched.memo.set('mpd-inband-cues', cues);
    return cues;
  }

  /**
   * A live session's MPD: the breaks its window's cues announce decided on first sight (one decision per viewer and
   * break, stored), every break the session has decided placed by its record, the origin's Period split at them.
   */
  private async live(config: AdinsertConfig, started: Started): Promise<Reply> {
    const { session, read, origin } = started;
    const policy = this.deps.policyOf(config);
    const starts = this.startsOf(started);
    let records: AvailRecord[] = [];
    const slot = Math.round(median(starts.map((s) => s.duration))) || 6;
    // a configuration with a live pre-roll announces where players start (the pre-roll is placed there)
    const delay = livePrerollOf(config) ? presentationDelayOf(read, slot) : undefined;
    if (!started.storeAway && starts.length) {
      const cues = await this.cuesOf(started);
      let known = (await this.deps.sessions.get(session.id).catch(() => undefined))?.records ?? [];
      const windowBreaks = liveCueAvails(cues.cues, starts[0]!.start, slot);
      if (delay && !known.some((r) => isPreroll(r.id))) {
        const preroll = await this.livePreroll(config, session, read, windowBreaks, starts, slot, delay.seconds);
        if (preroll) known = [...known, preroll];
      }
      // (a break announced after the viewer joined may begin under its pre-roll: the pre-roll's ads play there)
      let fresh = outsideLivePreroll(windowBreaks.filter((a) => !known.some((r) => r.id === a.id)), known.find((r) => isPreroll(r.id)));
      const suppressed: AvailRecord[] = [];
      if (fresh.length && suppresses(config)) ({ admitted: fresh } = await this.admitLive(config, session, read, fresh, slot, suppressed));
      const decided = [...suppressed, ...(fresh.length ? await this.decide(session, config, fresh, slot, shapeOf(read)) : [])];
      if (suppressed.length) {
        const hot = await this.deps.sessions.get(session.id).catch(() => undefined);
        if (hot) mergeRecords(hot, suppressed);
      }
      // the breaks decided before (their cues may have left the origin's MPD) stay where they were published
      records = [...known, ...decided.filter((r) => !known.some((k) => k.id === r.id))];
    }
    const breaks: DashBreak[] = [];
    const windowStart = starts[0]?.start ?? 0;
    for (const record of records) {
      const place = livePlace(record);
      if (!place) continue;
      // a break the window has left only names the content Period after it: its creatives are not looked up
      const b = place.resume <= windowStart ? pastBreak(record, place) : await this.breakOf(session, record, read, place, policy);
      if (b) breaks.push(b);
    }
    const text = stitchMpd(read, { mpdUrl: origin, breaks, emptyTextUri: policy.adUri?.(this.deps.emptyTextUri) ?? this.deps.emptyTextUri,
      ...(policy.contentUri ? { contentUri: policy.contentUri } : {}), removeCues: policy.removeCues,
      live: { location: started.reload, ...(delay?.announce ? { presentationDelaySeconds: delay.seconds } : {}) } });
    // a live MPD is the viewer's own (its breaks as that viewer was given them): the session id filled in at once
    return { status: 200, body: text.split(SID_PLACEHOLDER).join(escapedSid(session.id)), type: MPD_TYPE, headers: { 'cache-control': 'no-store' } };
  }

  /**
   * A live viewer's pre-roll (issue 31 item 4), decided at the session's first live MPD as a break in the window (the
   * MPD waits for it), asked of live_preroll_ad_server and stored like a break's decision: every reload and instance
   * places the same. Where it goes: livePrerollAvail. A session older than the join window never gets one.
   */
  private async livePreroll(config: AdinsertConfig, session: SessionRecord, read: MpdRead, windowBreaks: Avail[], starts: Array<{ start: number; duration: number }>, slot: number, delaySec: number): Promise<AvailRecord | undefined> {
    const preroll = livePrerollOf(config);
    if (!preroll || this.deps.now() - session.createdAt > PREROLL_JOIN_WINDOW_MS) return undefined;
    try {
      let record = await this.deps.store.get<AvailRecord>(keys.avail(session.id, PREROLL_AVAIL_ID));
      if (!record) {
        const place = livePrerollAvail(starts, read.durationSec, delaySec, windowBreaks, preroll.maxSeconds, slot);
        if (!place) return undefined;
        record = 'skip' in place
          ? (await this.deps.store.setIfAbsent(keys.avail(session.id, PREROLL_AVAIL_ID), noPrerollRecord(place.skip, slot), this.deps.sessionTtlMs)).value as AvailRecord
          : await this.deps.decisions.inWindow({ session, adServer: preroll.adServer, avail: place.avail, targetDuration: slot, shape: shapeOf(read) });
      }
      const hot = await this.deps.sessions.get(session.id).catch(() => undefined);
      if (hot) mergeRecords(hot, [record]);
      return record;
    } catch (e) {
      // the store away or a failed decision: the viewer starts on the content
      if (!isSessionStoreUnavailable(e)) this.deps.logger.warn({ err: e, session: session.id }, 'a live pre-roll decision failed');
      return undefined;
    }
  }

  /**
   * Avail suppression (issue 31) of a live DASH viewer's new breaks, as HLS's (break-gate.ts, break-policy.ts): each
   * judged against the viewer's live edge, the end of the origin's window in the session's first live MPD, fixed then
   * and stored with the session. A DASH break is placed in seconds of the origin Period (its cue's own time), so the
   * edge is kept on that timeline (LiveEdge.pdtMs holds the MPD's timeline in ms, its Periods' @start kept on every
   * refresh: it does not move), and a PARTIAL_AVAIL rest starts at the moment the rules give, not on a segment boundary.
   * A break not filled is stored as its content (no ad-server request) into `suppressed`; `admitted` are decided.
   */
  private async admitLive(config: AdinsertConfig, session: SessionRecord, read: MpdRead, avails: Avail[], slot: number, suppressed: AvailRecord[]): Promise<{ admitted: Avail[] }> {
    const mine: LiveEdge = { wallMs: this.deps.now(), pdtMs: Math.round(read.durationSec * 1000) };
    let edge: LiveEdge;
    try {
      edge = (await this.deps.store.setIfAbsent(keys.liveEdge(session.id), mine, this.deps.sessionTtlMs)).value as LiveEdge;
    } catch (e) {
      if (!isSessionStoreUnavailable(e)) throw e;
      return { admitted: avails }; // (the store away: nothing is suppressed, as HLS)
    }
    const admitted: Avail[] = [];
    for (const avail of avails) {
      const at = avail.contentOffsetSeconds ?? 0;
      const verdict = suppressionOf(config.availSuppression, at * 1000 - (edge.pdtMs ?? mine.pdtMs!), avail.duration, false);
      if (verdict.fill === 'all') { admitted.push(avail); continue; }
      const left = verdict.fill === 'rest' ? Math.round((avail.duration - verdict.skipSeconds) * 1000) / 1000 : 0;
      // the rest of the break, from the moment it may be filled (less than half a segment left: none)
      if (verdict.fill === 'rest' && left >= slot / 2) {
        admitted.push({ ...avail, contentOffsetSeconds: Math.round((at + verdict.skipSeconds) * 1000) / 1000, duration: left, startVisible: false });
        continue;
      }
      try {
        suppressed.push(await this.deps.planner.suppressedRecord(session, avail, slot));
      } catch (e) {
        if (!isSessionStoreUnavailable(e)) throw e;
      }
    }
    return { admitted };
  }

  /** Every break decided side by side (one deadline for all, as an HLS VOD's VMAP breaks), kept with the session. */
  private async decide(session: SessionRecord, config: AdinsertConfig, avails: Avail[], target: number, shape: ContentShape): Promise<AvailRecord[]> {
    // a session's MPD asked again: its breaks were decided and kept with it (a session never changes its mind)
    const known = (await this.deps.sessions.get(session.id).catch(() => undefined))?.records;
    const kept = known ? avails.map((a) => known.find((r) => r.id === a.id)) : [];
    if (known && kept.every((r) => r !== undefined)) return kept as AvailRecord[];
    // the configuration's personalization threshold and bumpers (issue 31), applied by the planner as for HLS
    const policies = breakPolicies(config);
    const decided = await Promise.all(avails.map((avail) => this.deps.decisions.inWindow({ session, adServer: config.adServer, avail, targetDuration: target, shape, ...(policies ? { policies } : {}) })
      .catch((e: unknown) => {
        // the store away or a failed decision: this break plays no ad (the content goes on)
        if (!isSessionStoreUnavailable(e)) this.deps.logger.warn({ err: e, session: session.id, avail: avail.id }, 'an ad decision failed');
        return undefined;
      })));
    const records = decided.filter((r): r is AvailRecord => r !== undefined);
    const hot = await this.deps.sessions.get(session.id).catch(() => undefined);
    if (hot) mergeRecords(hot, records);
    return records;
  }

  /** A decided break as the stitcher takes it; undefined when it has no ad, or a creative's plan is gone (content plays). */
  private async breakOf(session: SessionRecord, record: AvailRecord, read: MpdRead, place: { at: number; resume: number }, policy: PlaylistPolicy): Promise<DashBreak | undefined> {
    if (!record.ads.length) return undefined;
    const b: DashBreak = { id: record.id, atSeconds: place.at, resumeSeconds: place.resume, ads: [] };
    // (the ads mirror the origin Period they interrupt: its tracks)
    const needsAudio = periodAt(read.periods, place.at).representations.some((r) => r.kind === 'audio');
    for (const [k, ad] of record.ads.entries()) {
      const plan = await this.deps.planner.plan(ad.creativeKey);
      // the shared creative record expired, or the creative is not CMAF (an init segment per rendition, its audio apart
      // when the content's is): the content plays rather than a Period missing a track
      if (!plan || plan.video.some((t) => !t.mapUri) || (needsAudio && !plan.audio?.mapUri)) return undefined;
      // the session id is filled in per viewer (SID_PLACEHOLDER): the text is shared by viewers with the same ads
      const segmentBase = `/v1/segment/${session.guid}/${SID_PLACEHOLDER}/${encodeURIComponent(record.id)}/${k}`;
      b.ads.push({
        periodId: `${record.id}-${k}`, duration: ad.duration,
        rendition: (rep: MpdRepresentation): DashAdRendition | undefined => {
          const n = variantIndexOf(session.variants, rep);
          const entry = n === undefined ? undefined : session.variants[n];
          const track = entry ? trackFor(plan, entry) : undefined;
          // a creative without an init segment (MPEG-TS) has no place in a DASH Period
          if (!track?.mapUri) return undefined;
          const own = (u: string): string => policy.adUri?.(u) ?? u;
          return {
            init: own(track.mapUri), mediaPrefix: own(`${segmentBase}/${n}/`), mediaSuffix: '.m4s',
            durations: withinAd(track.segments.map((s) => s.duration), ad.duration), bandwidth: track.bandwidth,
            ...(track.width ? { width: track.width } : {}), ...(track.height ? { height: track.height } : {}),
            timescale: rep.kind === 'audio' ? rep.audioSamplingRate ?? 48_000 : 90_000,
          };
        },
      });
    }
    return b;
  }
}
