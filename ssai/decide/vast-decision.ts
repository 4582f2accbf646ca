// Ad decisions over VAST 2–4 and VMAP (issue 5 "Ad decisions"): fills the ad server URL template, follows wrappers
// up to 5 deep inside one 3 s budget, and returns linear creatives. Failures are classified values, never throws:
// an ad failure is non-fatal and the avail plays content or slate (STYLE.md rule 5).
import { DOMParser } from '@xmldom/xmldom';
import { VASTClient } from '@dailymotion/vast-client';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { Agent, type Dispatcher } from 'undici';
import type { SpliceInfo } from '../../media/scte35.js';
import { inlineLinearAds } from '../parse/vast-inline.js';
import { universalAdIdOf, type LinearAd } from '../parse/linear-ad.js';

export type AdDecisionErrorReason = 'timeout' | 'http' | 'malformed' | 'empty';
export type AdDecisionError = { reason: AdDecisionErrorReason; message: string; status?: number };
/** An error the VAST asks to be told of: its <Error> URLs (every level of a wrapper chain) and the VAST 4 error code. */
export type VastErrorReport = { code: number; urls: string[] };
/** The VAST 4 error codes the proxy reports (docs/ssai.md "VAST errors"). */
export const VAST_ERROR = {
  xmlParse: 100, schema: 101, wrapperTimeout: 301, wrapperLimit: 302, noAdsAfterWrapper: 303, mediaFileTimeout: 402, noSupportedMediaFile: 403,
} as const;

export type AdDecisionResult = ({
  ok: true; ads: LinearAd[];
  /** every ad's trackingEvents packed in order (packed-tracking.ts), when a decision thread did it off the main thread */
  packedTracking?: string;
} | { ok: false; error: AdDecisionError }) & {
  /** errors of the answer to report (the planner fires them once per decision, with those of the ads it skips) */
  vastErrors?: VastErrorReport[];
};

/** An <Error> URL with its [ERRORCODE] macro filled (also percent-encoded, as some ad servers write it). */
export function withErrorCode(url: string, code: number): string {
  return url.replace(/\[ERRORCODE\]|%5BERRORCODE%5D/gi, String(code));
}

/** Marks a wrapper fetch failure with the VAST code it stands for: vast-client reports any such failure as 301. */
const codeMark = (code: number, message: string): Error => new Error(`[VAST ${code}] ${message}`);
const MARKED_CODE = /\[VAST (\d{3})\]/;

export type AdDecisionRequest = {
  /** the configuration's ad_server, with [variables] */
  adServerUrl: string;
  sessionId: string;
  availIndex: number;
  availDuration: number;
  scte35?: SpliceInfo;
  /** `ads.<name>` query parameters of the player, without the prefix */
  playerParams?: Record<string, string>;
  /** the User-Agent and the client address of the request that made the session */
  userAgent?: string;
  clientIp?: string;
  /** [avail.random] (availRandom) */
  availRandom?: number;
};

/** The seam the proxy depends on (STYLE.md rule 7): tests and other ad servers plug in here. */
export interface AdDecisionClient {
  decide(req: AdDecisionRequest): Promise<AdDecisionResult>;
  /** reads a VAST or VMAP document already in hand (a VMAP break's inline VAST); `url` resolves its relative links */
  fromText?(text: string, url: string): Promise<AdDecisionResult>;
  /** a viewer arrived: decisions are coming (a client with a slow start, such as a thread, gets ready now) */
  prepare?(): void;
}

export type VastDecisionOptions = {
  /** whole wrapper chain budget, ms */
  budgetMs?: number;
  maxWrapperDepth?: number;
  /** largest VAST/VMAP body accepted, bytes */
  maxBodyBytes?: number;
  random?: () => number;
  now?: () => number;
  /** read inline VAST answers with the cheap path of vast-inline.ts (default true; false: always the full client) */
  inlineFastPath?: boolean;
  /** sees every ad server request and its raw answer (a debug session's log, ssai/decide/debug-decisions.ts) */
  observe?: AdServerObserver;
};

/** An ad server request as it went (the wrapper chain's too): the filled URL, and the answer or why there was none. */
export type AdServerExchange = { url: string; ms: number; status?: number; body?: string; error?: string };
export type AdServerObserver = (exchange: AdServerExchange) => void;
/** The `[scte.<field>]` names a cue may fill (absent from a given cue: empty, not unknown). */
const SCTE_FIELDS = new Set(['event_id', 'splice_event_id', 'unique_program_id', 'avail_num', 'avails_expected', 'break_duration',
  'segmentation_event_id', 'segmentation_type_id', 'segmentation_upid_type', 'segmentation_upid', 'segment_num', 'segments_expected',
  'segmentation_duration', 'sub_segment_num', 'sub_segments_expected', 'provider_avail_id']);

/** Flat `[scte.<field>]` values of a decoded cue, named after the SCTE 35 syntax elements. */
export function scteTemplateFields(info: SpliceInfo | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!info) return out;
  const c = info.command;
  if (c.type === 'splice_insert') {
    Object.assign(out, { event_id: String(c.spliceEventId), splice_event_id: String(c.spliceEventId), unique_program_id: String(c.uniqueProgramId), avail_num: String(c.availNum), avails_expected: String(c.availsExpected) });
    if (c.breakDuration) out.break_duration = String(c.breakDuration.duration / 90000);
  }
  const seg = info.descriptors.find((d) => d.kind === 'segmentation');
  if (seg && seg.kind === 'segmentation') {
    Object.assign(out, {
      segmentation_event_id: String(seg.segmentationEventId), segmentation_type_id: String(seg.segmentationTypeId),
      segmentation_upid_type: String(seg.upidType), segmentation_upid: seg.upidHex, segment_num: String(seg.segmentNum), segments_expected: String(seg.segmentsExpected),
    });
    // A time_signal's event is its segmentation event (the cue finder names the break after it too).
    out.event_id ??= String(seg.segmentationEventId);
    if (seg.segmentationDuration !== undefined) out.segmentation_duration = String(seg.segmentationDuration / 90000);
    if (seg.subSegmentNum !== undefined) out.sub_segment_num = String(seg.subSegmentNum);
    if (seg.subSegmentsExpected !== undefined) out.sub_segments_expected = String(seg.subSegmentsExpected);
  }
  const avail = info.descriptors.find((d) => d.kind === 'avail');
  if (avail && avail.kind === 'avail') out.provider_avail_id = String(avail.providerAvailId);
  return out;
}

/** `[name]` of a variable: lowercase names, a namespace and a field (VAST macros, uppercase, never match). */
const VARIABLE = /\[([a-z_]+(?:\.[A-Za-z0-9_.-]+)?)\]/g;
const SESSION_VARIABLES = new Set(['session.id', 'session.user_agent', 'session.client_ip']);
const AVAIL_VARIABLES = new Set(['avail.index', 'avail.duration', 'avail.random']);
const OUR_NAMESPACES = ['session.', 'avail.', 'scte.', 'player_params.'];

/**
 * Whether a variable name is ours: `cachebuster` and the names of our namespaces (session., avail., scte.,
 * player_params.). A name of our namespaces that we do not fill is `unknown`: left empty (docs/ssai.md).
 */
function variableKind(name: string): 'ours' | 'unknown' | 'foreign' {
  if (name === 'cachebuster' || SESSION_VARIABLES.has(name) || AVAIL_VARIABLES.has(name) || name.startsWith('player_params.')) return 'ours';
  if (name.startsWith('scte.')) return SCTE_FIELDS.has(name.slice(5)) ? 'ours' : 'unknown';
  return OUR_NAMESPACES.some((ns) => name.startsWith(ns)) ? 'unknown' : 'foreign';
}

/** The variables of our namespaces a template names that we do not know (each left empty in the request). */
export function unknownVariables(template: string): string[] {
  const out: string[] = [];
  for (const m of template.matchAll(VARIABLE)) if (variableKind(m[1]!) === 'unknown' && !out.includes(m[1]!)) out.push(m[1]!);
  return out;
}

/**
 * `[avail.random]`: a number in [0, 1e10) fixed per break, the same in every ad request of that break (every viewer,
 * rendition, instance and insertion mode: derived, not drawn, from the configuration and the break's start, its
 * program date-time, or its id in a stream without one; the modes name a break differently), so an ad server can tell
 * the requests of one break from those of the next.
 */
export function availRandom(guid: string, avail: { id: string; startPdtMs?: number }): number {
  const which = avail.startPdtMs === undefined ? `id ${avail.id}` : `at ${avail.startPdtMs}`;
  return Number(createHash('sha256').update(`${guid}\n${which}`).digest().readBigUInt64BE(0) % 10_000_000_000n);
}

/**
 * Fills the template variables (docs/ssai.md "Ad server variables"), URL-encoded. An unknown name of our namespaces
 * is left empty (unknownVariables lists them for a log); any other bracketed name (a VAST macro such as
 * [CACHEBUSTING], a lowercase one of the ad server's) is left as it is for the ad server.
 */
export function fillAdServerUrl(template: string, req: Omit<AdDecisionRequest, 'adServerUrl'>, random: () => number = Math.random): string {
  let scte: Record<string, string> | undefined;
  return template.replace(VARIABLE, (m, name: string) => {
    let v: string | undefined;
    if (name === 'session.id') v = req.sessionId;
    else if (name === 'session.user_agent') v = req.userAgent;
    else if (name === 'session.client_ip') v = req.clientIp;
    else if (name === 'avail.duration') v = String(Math.round(req.availDuration));
    else if (name === 'avail.index') v = String(req.availIndex);
    else if (name === 'avail.random') v = req.availRandom === undefined ? undefined : String(req.availRandom);
    else if (name === 'cachebuster') v = String(Math.floor(random() * 1e10));
    else if (name.startsWith('scte.')) v = (scte ??= scteTemplateFields(req.scte35))[name.slice(5)];
    else if (name.startsWith('player_params.')) v = req.playerParams?.[name.slice(14)];
    else if (variableKind(name) === 'foreign') return m; // not ours: left for the ad server (VAST macros look the same)
    return encodeURIComponent(v ?? '');
  });
}

/** Chooses ads in order, skipping any that would overrun the avail; the rest of the avail is slate. */
export function pickAdsForAvail<T extends { duration: number }>(ads: readonly T[], availDuration: number, tolerance = 0.5): { ads: T[]; slateDuration: number } {
  const chosen: T[] = [];
  let total = 0;
  for (const ad of ads) {
    if (ad.duration <= 0 || total + ad.duration > availDuration + tolerance) continue;
    chosen.push(ad);
    total += ad.duration;
  }
  return { ads: chosen, slateDuration: Math.max(0, Math.round((availDuration - total) * 1000) / 1000) };
}

type Fetched = { ok: true; text: string; status?: number } | { ok: false; error: AdDecisionError };

async function fetchText(url: string, deadline: number, now: () => number, maxBytes: number, observe?: AdServerObserver): Promise<Fetched> {
  if (!observe) return fetchOnce(url, deadline, now, maxBytes);
  const started = now();
  const got = await fetchOnce(url, deadline, now, maxBytes);
  observe({ url, ms: now() - started, ...(got.ok ? { status: got.status, body: got.text } : { ...(got.error.status !== undefined ? { status: got.error.status } : {}), error: `${got.error.reason}: ${got.error.message}` }) });
  return got;
}

/**
 * The ad servers' connections, this module's own (one per thread), not undici's global dispatcher: that slot is shared
 * with Node's bundled undici, and once a fetch() has run in the thread it holds Node's own agent, an older undici that
 * refuses this module's handlers (`invalid onError method`, seen on the main thread's debug decisions).
 */
let agent: Agent | undefined;
const adServerAgent = (): Agent => (agent ??= new Agent());

/**
 * One GET through the agent's dispatch with a handler that gathers the body: no body stream, no async
 * iterator and no promise per chunk, as request() makes. Why: at 10,000 viewers a no-notice break asks the ad server
 * ~10,000 times within seconds, and undici's request() with its stream was the largest part of the decision thread's
 * CPU after the sockets (a CPU profile of bench/ssai-capacity.ts: undici 16%, streams and events 5%); the thread is
 * niced, so what it saves goes to decisions made in time. Bounded as before: the budget (one timer, cleared when the
 * answer is in), maxBytes, and the agent's header and body timeouts.
 */
function fetchOnce(url: string, deadline: number, now: () => number, maxBytes: number): Promise<Fetched> {
  const left = deadline - now();
  if (left <= 0) return Promise.resolve({ ok: false, error: { reason: 'timeout', message: `budget spent before ${url}` } });
  let target: URL;
  try {
    target = new URL(url);
  } catch (e) {
    return Promise.resolve({ ok: false, error: { reason: 'http', message: `invalid URL: ${e instanceof Error ? e.message : String(e)}` } });
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return Promise.resolve({ ok: false, error: { reason: 'http', message: `not an http(s) URL: ${url}` } });
  return new Promise<Fetched>((resolve) => {
    let settled = false;
    let status = 0;
    let size = 0;
    const chunks: Buffer[] = [];
    let controller: Dispatcher.DispatchController | undefined;
    const settle = (f: Fetched): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(f);
    };
    const failed = (e: unknown): void => {
      const name = e instanceof Error ? e.name : '';
      const code = (e as { code?: string } | undefined)?.code ?? '';
      if (name === 'TimeoutError' || name === 'AbortError' || code.includes('TIMEOUT')) settle({ ok: false, error: { reason: 'timeout', message: `no answer from ${url} in time` } });
      else settle({ ok: false, error: { reason: 'http', message: `${code || name}: ${e instanceof Error ? e.message : String(e)}` } });
    };
    const timer = setTimeout(() => {
      const err = new DOMException('ad server budget spent', 'TimeoutError');
      if (controller) controller.abort(err);
      failed(err);
    }, left);
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: (c) => { controller = c; },
      onResponseStart: (_c, statusCode) => {
        status = statusCode;
        if (statusCode === 204) settle({ ok: true, text: '', status: 204 });
        else if (statusCode >= 300) settle({ ok: false, error: { reason: 'http', message: `ad server answered ${statusCode}`, status: statusCode } });
        // (a settled answer's body is read to its end and dropped, as body.dump() did: the connection is kept)
      },
      onResponseData: (c, chunk) => {
        size += chunk.length;
        // (past maxBytes the connection is cut, an answer already settled too: an endless error body holds nothing)
        if (size > maxBytes) {
          settle({ ok: false, error: { reason: 'malformed', message: `response larger than ${maxBytes} bytes` } });
          c.abort(new Error('too large'));
          return;
        }
        if (!settled) chunks.push(chunk);
      },
      // (an answer settled at its status has dropped its body: nothing to join)
      onResponseEnd: () => { if (!settled) settle({ ok: true, text: Buffer.concat(chunks, size).toString('utf8'), status }); },
      onResponseError: (_c, err) => failed(err),
    };
    try {
      adServerAgent().dispatch({ origin: target.origin, path: `${target.pathname}${target.search}`, method: 'GET', headersTimeout: left, bodyTimeout: left }, handler);
    } catch (e) {
      failed(e);
    }
  });
}

type XmlDoc = ReturnType<DOMParser['parseFromString']>;

// @dailymotion/vmap ships CommonJS without types: loaded through require and viewed through this shape.
type VmapNode = { toString(): string; textContent?: string | null };
type VmapLib = new (doc: XmlDoc) => { adBreaks: { breakId?: string | null; timeOffset?: string | null; adSource?: { vastAdData?: VmapNode | null; adTagURI?: { uri?: string } | null } | null }[] };
const VMAP = createRequire(import.meta.url)('@dailymotion/vmap') as VmapLib;

function parseXml(text: string): XmlDoc | undefined {
  try {
    const doc = new DOMParser({ onError: () => undefined }).parseFromString(text, 'text/xml');
    return doc.documentElement ? doc : undefined;
  } catch {
    return undefined;
  }
}

// vast-client counts the root document as depth 1, hence wrapperLimit = depth + 1 below.
// Minimal views of @dailymotion/vast-client's untyped results.
type VastCreative = { id?: string | null; adId?: string | null; type?: string; universalAdIds?: { idRegistry?: string | null; value?: string | null }[]; duration?: number; trackingEvents?: Record<string, string[]>; mediaFiles?: { fileURL?: string | null; mimeType?: string | null; width?: number; height?: number; bitrate?: number }[] };
type VastAd = { id?: string | null; sequence?: string | number | null; system?: { value?: string | null } | string | null; errorCode?: number | null; impressionURLTemplates?: ({ url?: string } | string)[]; errorURLTemplates?: string[]; creatives?: VastCreative[] };

/** The <Error> URLs directly under a document's <VAST>. */
function vastLevelErrors(doc: XmlDoc): string[] {
  const out: string[] = [];
  const root = doc.documentElement;
  for (let n = root?.firstChild; n; n = n.nextSibling) if (n.nodeType === 1 && (n as { localName?: string }).localName === 'Error') out.push((n.textContent ?? '').trim());
  return out.filter(Boolean);
}

/** The parser's error tracking (VASTParser.trackVastError), replaced per decision to keep what it would send. */
type VastErrorTracker = { trackVastError: (templates: unknown[] | undefined, code: { ERRORCODE?: number | string }, ...data: Array<Record<string, unknown>>) => void };

const urlOf = (t: { url?: string } | string): string => (typeof t === 'string' ? t : (t.url ?? ''));

function toLinearAds(ads: VastAd[], rootErrors: string[]): LinearAd[] {
  const out: LinearAd[] = [];
  for (const ad of ads) {
    for (const c of ad.creatives ?? []) {
      if (c.type !== 'linear' || !c.duration || !(c.mediaFiles ?? []).length) continue;
      const ev = (k: string): string[] => (c.trackingEvents?.[k] ?? []).map((u) => u.trim()).filter(Boolean);
      const linear: LinearAd = {
        adId: String(ad.id ?? c.adId ?? ''), creativeId: String(c.id ?? c.adId ?? ''), duration: c.duration,
        mediaFiles: (c.mediaFiles ?? []).filter((m) => m.fileURL).map((m) => ({ url: (m.fileURL ?? '').trim(), type: m.mimeType ?? '', width: m.width ?? 0, height: m.height ?? 0, bitrate: m.bitrate ?? 0 })),
        trackingEvents: {
          impression: (ad.impressionURLTemplates ?? []).map(urlOf).map((u) => u.trim()).filter(Boolean),
          start: ev('start'), firstQuartile: ev('firstQuartile'), midpoint: ev('midpoint'), thirdQuartile: ev('thirdQuartile'), complete: ev('complete'),
          error: [...(ad.errorURLTemplates ?? []), ...rootErrors].map((u) => u.trim()).filter(Boolean),
        },
      };
      const universal = c.universalAdIds?.[0];
      const universalAdId = universal ? universalAdIdOf(universal.idRegistry, universal.value) : undefined;
      if (universalAdId) linear.universalAdId = universalAdId;
      const adSystem = (typeof ad.system === 'string' ? ad.system : ad.system?.value ?? '').trim();
      if (adSystem) linear.adSystem = adSystem;
      const seq = Number(ad.sequence);
      if (Number.isFinite(seq) && ad.sequence !== null && ad.sequence !== undefined) linear.sequence = seq;
      out.push(linear);
      break; // one linear creative per ad
    }
  }
  // An ad pod plays in sequence order; stand-alone ads keep document order after it.
  return out.sort((a, b) => (a.sequence ?? Infinity) - (b.sequence ?? Infinity));
}

/** VASTClient-based implementation, fetching over undici with one deadline for the whole chain. */
export class VastDecisionClient implements AdDecisionClient {
  private readonly budgetMs: number;
  private readonly depth: number;
  private readonly maxBytes: number;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly fastPath: boolean;
  private readonly observe: AdServerObserver | undefined;

  constructor(opts: VastDecisionOptions = {}) {
    this.observe = opts.observe;
    this.fastPath = opts.inlineFastPath ?? true;
    this.budgetMs = opts.budgetMs ?? 3000;
    this.depth = opts.maxWrapperDepth ?? 5;
    this.maxBytes = opts.maxBodyBytes ?? 1024 * 1024;
    this.random = opts.random ?? Math.random;
    this.now = opts.now ?? Date.now;
  }

  async decide(req: AdDecisionRequest): Promise<AdDecisionResult> {
    return this.decideUrl(fillAdServerUrl(req.adServerUrl, req, this.random));
  }

  /** The decision of an ad server URL already filled in (fillAdServerUrl). */
  async decideUrl(url: string): Promise<AdDecisionResult> {
    const deadline = this.now() + this.budgetMs;
    const root = await fetchText(url, deadline, this.now, this.maxBytes, this.observe);
    if (!root.ok) return root;
    return this.fromText(root.text, url, deadline);
  }

  /** Parses a VAST or VMAP document already in hand (VMAP: the first break with VAST data or an ad tag). */
  async fromText(text: string, url: string, deadline = this.now() + this.budgetMs): Promise<AdDecisionResult> {
    if (!text.trim()) return { ok: false, error: { reason: 'empty', message: 'empty response' } };
    // The common answer, an inline VAST with linear ads, skips the DOM and the full client (issue 19 point 4).
    const fast = this.fastPath ? inlineLinearAds(text) : undefined;
    if (fast?.length) return { ok: true, ads: fast };
    const doc = parseXml(text);
    if (!doc) return { ok: false, error: { reason: 'malformed', message: 'response is not well-formed XML' } };
    const rootName = doc.documentElement?.localName ?? '';
    if (rootName === 'VMAP') return this.fromVmap(doc, url, deadline);
    if (rootName !== 'VAST') return { ok: false, error: { reason: 'malformed', message: `root element <${rootName}> is not VAST or VMAP` } };

    let chainError: AdDecisionError | undefined;
    const urlHandler = {
      get: async (wrapperUrl: string): Promise<{ xml: XmlDoc; details: { byteLength: number; statusCode: number; rawXml: string } } | { error: Error; statusCode: number | null }> => {
        const r = await fetchText(wrapperUrl, deadline, this.now, this.maxBytes, this.observe);
        if (!r.ok) { chainError ??= r.error; return { error: codeMark(VAST_ERROR.wrapperTimeout, r.error.message), statusCode: r.error.reason === 'timeout' ? 408 : (r.error.status ?? null) }; }
        const xml = parseXml(r.text);
        if (!xml) { chainError ??= { reason: 'malformed', message: `wrapper target ${wrapperUrl} is not XML` }; return { error: codeMark(VAST_ERROR.xmlParse, 'malformed'), statusCode: 200 }; }
        if (xml.documentElement?.localName !== 'VAST') {
          chainError ??= { reason: 'malformed', message: `wrapper target ${wrapperUrl} is not VAST` };
          return { error: codeMark(VAST_ERROR.schema, 'not VAST'), statusCode: 200 };
        }
        return { xml, details: { byteLength: r.text.length, statusCode: 200, rawXml: r.text } };
      },
    };
    // vast-client's own error tracking, kept instead of sent (it pings only in a browser): the <Error> URLs of every
    // level of the chain with the code it found, ours where the fetch failure was marked (codeMark).
    const vastErrors: VastErrorReport[] = [];
    const withErrors = (result: AdDecisionResult): AdDecisionResult => (vastErrors.length ? { ...result, vastErrors } : result);
    try {
      const client = new VASTClient();
      const parser = (client as unknown as { getParser(): VastErrorTracker }).getParser();
      parser.trackVastError = (templates, code, ...data) => {
        const message = data.map((d) => d.ERRORMESSAGE).find((m): m is string => typeof m === 'string') ?? '';
        const marked = MARKED_CODE.exec(message);
        const urls = (templates ?? []).map((u) => (typeof u === 'string' ? u : '').trim()).filter(Boolean);
        if (urls.length) vastErrors.push({ code: marked ? Number(marked[1]) : Number(code.ERRORCODE) || 900, urls });
      };
      const response = (await client.parseVAST(doc, {
        urlHandler, timeout: Math.max(1, deadline - this.now()), wrapperLimit: this.depth + 1, resolveAll: true, allowMultipleAds: true, url,
      })) as { ads?: VastAd[]; errorURLTemplates?: string[] };
      const ads = toLinearAds(response.ads ?? [], response.errorURLTemplates ?? []);
      if (ads.length) return withErrors({ ok: true, ads });
      if (chainError) return withErrors({ ok: false, error: chainError });
      const depthHit = (response.ads ?? []).some((a) => a.errorCode === 302) || vastErrors.some((r) => r.code === VAST_ERROR.wrapperLimit);
      if (depthHit) return withErrors({ ok: false, error: { reason: 'malformed', message: `wrapper chain deeper than ${this.depth}` } });
      return withErrors({ ok: false, error: { reason: 'empty', message: 'no linear ad in the response' } });
    } catch (e) {
      // The client gave up on the document itself (an <Ad> neither InLine nor Wrapper makes it throw): a schema error,
      // told to the document's own <Error> URLs.
      if (!chainError && !vastErrors.length) {
        const urls = vastLevelErrors(doc);
        if (urls.length) vastErrors.push({ code: VAST_ERROR.schema, urls });
      }
      return withErrors({ ok: false, error: chainError ?? { reason: 'malformed', message: e instanceof Error ? e.message : String(e) } });
    }
  }

  private async fromVmap(doc: XmlDoc, url: string, deadline: number): Promise<AdDecisionResult> {
    const breaks = vmapBreaks(doc);
    for (const b of breaks) {
      if (b.vastXml) return this.fromText(b.vastXml, url, deadline);
      if (b.adTagUri) {
        const r = await fetchText(b.adTagUri, deadline, this.now, this.maxBytes, this.observe);
        return r.ok ? this.fromText(r.text, b.adTagUri, deadline) : r;
      }
    }
    return { ok: false, error: { reason: 'empty', message: 'VMAP without an ad break' } };
  }
}

export type VmapBreak = { breakId: string; timeOffset: string; vastXml?: string; adTagUri?: string };

/** Ad breaks of a VMAP document (VOD origins take their avails from it). */
export function vmapBreaks(doc: XmlDoc): VmapBreak[] {
  try {
    return new VMAP(doc).adBreaks.map((b) => {
      const out: VmapBreak = { breakId: b.breakId ?? '', timeOffset: b.timeOffset ?? '' };
      const vast = b.adSource?.vastAdData;
      if (vast) out.vastXml = vast.toString();
      const tag = b.adSource?.adTagURI?.uri?.trim();
      if (tag) out.adTagUri = tag;
      return out;
    });
  } catch {
    return [];
  }
}

/** Parses VMAP text into its breaks; undefined when the text is not VMAP. */
export function parseVmap(text: string): VmapBreak[] | undefined {
  const doc = parseXml(text);
  return doc?.documentElement?.localName === 'VMAP' ? vmapBreaks(doc) : undefined;
}
