// A DASH MPD as the proxy reads it (issue 33 "DASH ad insertion"): parsed with @xmldom/xmldom (the parser
// vod-encoder/captions.ts edits MPDs with), its Periods on the MPD's timeline (one or several: a live origin's
// programmes, a VOD assembled from parts), their AdaptationSets and Representations, and each Representation's
// segments from its SegmentTemplate (SegmentTimeline or @duration), inherited from the Period and AdaptationSet as
// ISO/IEC 23009-1 §5.3.9 says. A live MPD addressed by the clock (SegmentTemplate@duration, a SegmentTimeline whose
// last S repeats with r="-1") is read at a given time: its window is what the wall clock makes available (DASH-IF IOP
// 4.3 §4.3.2.2), written back as the SegmentTimeline of that moment. Pure; the forms the stitcher cannot split yet
// are reported, never guessed.
import { DOMParser, type Document, type Element } from '@xmldom/xmldom';

export type MpdTrackKind = 'video' | 'audio' | 'text';

/** A Representation's segments on its media timeline: start time `t` and duration `d` in `timescale` units, number `n`. */
export type MpdSegment = { t: number; d: number; n: number };

/** The addressing of a Representation's media: its effective SegmentTemplate. */
export type MpdAddressing = {
  timescale: number;
  presentationTimeOffset: number;
  startNumber: number;
  media?: string;
  initialization?: string;
  /** @duration of a template without a SegmentTimeline (every segment as long, the last one cut by the Period) */
  duration?: number;
  /** whether the segments come from a SegmentTimeline (or are written as one: a live window known by the clock) */
  timeline: boolean;
  segments: MpdSegment[];
  /** a live window read off the clock: seconds of the Period at which its next segment becomes available */
  clockNextSec?: number;
};

/**
 * A live Period's clock at the moment of reading: seconds since the Period's start on the wall clock
 * (now − availabilityStartTime − Period@start) and the MPD's timeShiftBufferDepth.
 */
export type MpdClock = { elapsedSec: number; timeShiftSec?: number };

export type MpdRepresentation = {
  /** the Representation element (the stitcher clones and edits its document) */
  element: Element;
  adaptationSet: Element;
  /** index of its Period in the MPD (MpdRead.periods) */
  periodIndex: number;
  /** index of its AdaptationSet in the Period */
  setIndex: number;
  id: string;
  kind: MpdTrackKind;
  mimeType?: string;
  codecs?: string;
  bandwidth: number;
  width?: number;
  height?: number;
  frameRate?: number;
  lang?: string;
  audioSamplingRate?: number;
  audioChannels?: number;
  /** undefined for a Representation addressed otherwise: a sidecar file (BaseURL only: WebVTT), SegmentBase, SegmentList */
  addressing?: MpdAddressing;
  /** a whole-file text track (a BaseURL, no segment information): WebVTT or TTML sidecar */
  sidecar: boolean;
};

/** One Period of the origin's MPD, placed on the MPD's timeline (seconds from its Period@start reference). */
export type MpdPeriod = {
  element: Element;
  index: number;
  /** the origin's Period@id, else its start in ms: a live Period keeps both on every refresh */
  id: string;
  startSec: number;
  /**
   * static: the Period's length; dynamic: up to the next Period's start, the last (open) Period up to the live edge,
   * the end of its first video Representation's window
   */
  durationSec: number;
  /** a dynamic MPD's last Period: its window grows on */
  open: boolean;
  representations: MpdRepresentation[];
};

export type MpdRead = {
  doc: Document;
  mpd: Element;
  type: 'static' | 'dynamic';
  /** seconds: the MPD's mediaPresentationDuration, else the last Period's end (live: the live edge, on the MPD's timeline) */
  durationSec: number;
  /** the origin's Periods in order, each with a video Representation */
  periods: MpdPeriod[];
  /** every Period's Representations, in order */
  representations: MpdRepresentation[];
  /**
   * A live window read off the clock (SegmentTemplate@duration, r="-1"): the wall-clock time (ms) at which the next
   * segment becomes available, when this read is out of date. Undefined: the MPD's text says it all.
   */
  clockUntilMs?: number;
};

export type MpdReadResult = { ok: true; value: MpdRead } | { ok: false; unsupported: boolean; message: string };

/** An ISO 8601 duration as MPDs write it (PT1H2M3.5S, P1DT2H): seconds, or undefined when malformed. */
export function parseIsoDuration(raw: string | null | undefined): number | undefined {
  if (!raw) return undefined;
  const m = /^\s*-?P(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?\s*$/.exec(raw);
  if (!m || raw.trim().endsWith('T') || raw.trim() === 'P') return undefined;
  const [, y, mo, d, h, mi, s] = m.map((x) => (x === undefined ? 0 : Number(x)));
  return (y ?? 0) * 31_536_000 + (mo ?? 0) * 2_592_000 + (d ?? 0) * 86_400 + (h ?? 0) * 3600 + (mi ?? 0) * 60 + (s ?? 0);
}

/** An MPD duration written in seconds (PT2.5S) with the digits a player reads back the same. */
export function isoDuration(seconds: number): string {
  return `PT${Math.max(0, Math.round(seconds * 1000) / 1000)}S`;
}

/** The element children of `parent` named `name` (namespace ignored: MPDs are written with and without prefixes). */
export function childrenNamed(parent: Element, name: string): Element[] {
  const out: Element[] = [];
  for (let c = parent.firstChild; c; c = c.nextSibling) if (c.nodeType === 1 && (c as Element).localName === name) out.push(c as Element);
  return out;
}

const num = (el: Element | undefined, attr: string): number | undefined => {
  const v = el?.getAttribute(attr);
  if (v === null || v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
};

/** The attribute of the nearest element that has it (Representation, then AdaptationSet). */
const inherited = (els: Array<Element | undefined>, attr: string): string | undefined => {
  for (const el of els) { const v = el?.getAttribute(attr); if (v) return v; }
  return undefined;
};

function frameRateOf(raw: string | undefined): number | undefined {
  if (!raw) return undefined;
  const [a, b] = raw.split('/').map(Number);
  const fr = b ? (a ?? 0) / b : a;
  return fr && Number.isFinite(fr) ? fr : undefined;
}

function kindOf(set: Element, rep: Element): MpdTrackKind | undefined {
  const type = set.getAttribute('contentType') || '';
  const mime = rep.getAttribute('mimeType') || set.getAttribute('mimeType') || '';
  const codecs = rep.getAttribute('codecs') || set.getAttribute('codecs') || '';
  // text in fMP4 (stpp, wvtt) comes as application/mp4, sometimes under a video mimeType
  if (type === 'text' || mime.startsWith('text/') || mime === 'application/ttml+xml' || /^(stpp|wvtt)/.test(codecs)) return 'text';
  if (type === 'video' || mime.startsWith('video/')) return 'video';
  if (type === 'audio' || mime.startsWith('audio/')) return 'audio';
  return undefined;
}

/**
 * The segments a SegmentTimeline lists; `r="-1"` repeats up to the next S's @t, else the Period's end (`endT`), else
 * in a live Period the live edge (`edgeT`, the clock's: only segments wholly out by now).
 */
function timelineSegments(timeline: Element, startNumber: number, endT: number, edgeT?: number, fromT = -Infinity): MpdSegment[] | string {
  const out: MpdSegment[] = [];
  let t = 0;
  let n = startNumber;
  const ss = childrenNamed(timeline, 'S');
  for (const [i, s] of ss.entries()) {
    const d = num(s, 'd');
    if (d === undefined || d <= 0) return 'an S element of a SegmentTimeline has no positive @d';
    const st = num(s, 't');
    if (st !== undefined) t = st;
    let r = num(s, 'r') ?? 0;
    if (r < 0) {
      const next = num(ss[i + 1], 't') ?? endT;
      if (Number.isFinite(next)) r = Math.ceil((next - t) / d) - 1;
      // a live window's last S repeating on: the segments the clock has made available (their end passed)
      else if (edgeT !== undefined) {
        r = Math.floor((edgeT - t) / d + 1e-9) - 1;
        // a repeat running for days: the segments before the time shift buffer are skipped, not listed
        const skip = Math.max(0, Math.min(r, Math.floor((fromT - t) / d)));
        t += skip * d;
        n += skip;
        r -= skip;
      }
      else return 'a dynamic MPD\'s SegmentTimeline ends with @r="-1" and the MPD gives no availabilityStartTime';
    }
    for (let k = 0; k <= r; k++) {
      out.push({ t, d, n });
      t += d;
      n += 1;
    }
  }
  return out;
}

/** Segments a clock-read live window lists at most (no timeShiftBufferDepth: the most recent). */
const MAX_CLOCK_SEGMENTS = 1800;

/** A clock-read window's segments that end within the time shift buffer (the last MAX_CLOCK_SEGMENTS without one). */
function inTimeShift(segments: MpdSegment[], pto: number, timescale: number, clock: MpdClock): MpdSegment[] {
  const from = clock.timeShiftSec !== undefined ? pto + (clock.elapsedSec - clock.timeShiftSec) * timescale : -Infinity;
  // (the newest segment out stays listed however short the buffer)
  return segments.filter((s, i) => s.t + s.d > from || i === segments.length - 1).slice(-MAX_CLOCK_SEGMENTS);
}

/**
 * The effective SegmentTemplate of a Representation (Period, AdaptationSet, Representation: the nearest wins); a string
 * says why it cannot be read, undefined: no SegmentTemplate at any level. Also read by ssai/check/mpd-checker.ts.
 */
export function addressingOf(levels: Element[], periodDurationSec: number, clock?: MpdClock): MpdAddressing | string | undefined {
  const templates = levels.map((l) => childrenNamed(l, 'SegmentTemplate')[0]).filter((t): t is Element => t !== undefined);
  if (!templates.length) {
    if (levels.some((l) => childrenNamed(l, 'SegmentList').length || childrenNamed(l, 'SegmentBase').length)) return 'SegmentBase and SegmentList are not split yet';
    return undefined;
  }
  const nearest = [...templates].reverse();
  const attr = (name: string): string | undefined => inherited(nearest, name);
  const timescale = Number(attr('timescale') ?? 1);
  const presentationTimeOffset = Number(attr('presentationTimeOffset') ?? 0);
  const startNumber = Number(attr('startNumber') ?? 1);
  if (!(timescale > 0) || !Number.isFinite(presentationTimeOffset) || !Number.isInteger(startNumber)) return 'a SegmentTemplate has a malformed timescale, presentationTimeOffset or startNumber';
  const media = attr('media');
  const initialization = attr('initialization');
  const base: MpdAddressing = { timescale, presentationTimeOffset, startNumber, timeline: false, segments: [],
    ...(media ? { media } : {}), ...(initialization ? { initialization } : {}) };
  const endT = presentationTimeOffset + Math.round(periodDurationSec * timescale);
  const timeline = nearest.map((t) => childrenNamed(t, 'SegmentTimeline')[0]).find((t) => t !== undefined);
  const live = !Number.isFinite(periodDurationSec);
  if (timeline) {
    const edgeT = live && clock ? presentationTimeOffset + Math.floor(clock.elapsedSec * timescale) : undefined;
    const fromT = live && clock ? presentationTimeOffset + (clock.elapsedSec - (clock.timeShiftSec ?? Infinity)) * timescale : undefined;
    const segments = timelineSegments(timeline, startNumber, endT, edgeT, fromT);
    if (typeof segments === 'string') return segments;
    const repeatsOn = live && clock && childrenNamed(timeline, 'S').at(-1)?.getAttribute('r') === '-1';
    if (!repeatsOn) return { ...base, timeline: true, segments };
    const last = segments.at(-1);
    const d = last?.d ?? num(childrenNamed(timeline, 'S').at(-1), 'd') ?? timescale;
    const nextEnd = last ? last.t + last.d + d : presentationTimeOffset + d;
    return { ...base, timeline: true, segments: inTimeShift(segments, presentationTimeOffset, timescale, clock),
      clockNextSec: (nextEnd - presentationTimeOffset) / timescale };
  }
  const duration = Number(attr('duration'));
  if (!(duration > 0)) return 'a SegmentTemplate has neither a SegmentTimeline nor a @duration';
  if (live) {
    // a live window addressed by @duration is known by the wall clock only: segment k (from startNumber) is out once
    // the Period's clock passes its end, (k + 1) × duration; the window, those within the time shift buffer
    if (!clock) return 'a live (dynamic) MPD addressed by SegmentTemplate@duration gives no availabilityStartTime';
    const out = Math.max(0, Math.floor((clock.elapsedSec * timescale) / duration + 1e-9));
    // (the newest segment out stays listed however short the buffer)
    const from = clock.timeShiftSec !== undefined ? Math.max(0, Math.min(out - 1, Math.floor(((clock.elapsedSec - clock.timeShiftSec) * timescale) / duration))) : 0;
    const segments: MpdSegment[] = [];
    for (let k = Math.max(from, out - MAX_CLOCK_SEGMENTS); k < out; k++) segments.push({ t: presentationTimeOffset + k * duration, d: duration, n: startNumber + k });
    // written as a SegmentTimeline of the moment: the content Periods the stitcher cuts start anywhere in the window
    return { ...base, timeline: true, segments, clockNextSec: ((out + 1) * duration) / timescale };
  }
  const count = Math.ceil((periodDurationSec * timescale) / duration - 1e-6);
  const segments: MpdSegment[] = [];
  for (let i = 0; i < count; i++) {
    const t = presentationTimeOffset + i * duration;
    segments.push({ t, d: Math.min(duration, endT - t), n: startNumber + i });
  }
  return { ...base, duration, segments };
}

/**
 * Reads an MPD's text. `unsupported` marks a valid MPD of a form the stitcher cannot split yet. `nowMs`: the wall
 * clock a live MPD addressed by the clock is read at (its window then holds the segments out by then).
 */
export function readMpd(text: string, opts: { nowMs?: number } = {}): MpdReadResult {
  let doc: Document;
  try {
    doc = new DOMParser({ onError: (level, msg) => { if (level !== 'warning') throw new Error(msg); } }).parseFromString(text, 'text/xml');
  } catch (e) {
    return { ok: false, unsupported: false, message: `not XML: ${e instanceof Error ? e.message.split('\n', 1)[0] : String(e)}` };
  }
  const mpd = doc.documentElement;
  if (!mpd || mpd.localName !== 'MPD') return { ok: false, unsupported: false, message: 'the document is not an MPD' };
  const unsupported = (message: string): MpdReadResult => ({ ok: false, unsupported: true, message });
  const type = mpd.getAttribute('type') === 'dynamic' ? 'dynamic' : 'static';
  const elements = childrenNamed(mpd, 'Period');
  if (!elements.length) return unsupported('the MPD has no Period');
  if (elements.some((p) => p.getAttribute('xlink:href'))) return unsupported('a remote (xlink) Period');
  const total = parseIsoDuration(mpd.getAttribute('mediaPresentationDuration'));
  const ast = Date.parse(mpd.getAttribute('availabilityStartTime') ?? '');
  const timeShiftSec = parseIsoDuration(mpd.getAttribute('timeShiftBufferDepth'));
  const periods: MpdPeriod[] = [];
  const representations: MpdRepresentation[] = [];
  for (const [index, element] of elements.entries()) {
    // ISO/IEC 23009-1 §5.3.2.1: a Period without @start starts where the previous one ends; the first at 0
    const prev = periods[index - 1];
    const startSec = parseIsoDuration(element.getAttribute('start')) ?? (prev ? prev.startSec + prev.durationSec : 0);
    if (prev && startSec < prev.startSec) return unsupported(`Period ${index} starts before the Period ahead of it`);
    const nextStart = parseIsoDuration(elements[index + 1]?.getAttribute('start'));
    const last = index === elements.length - 1;
    // a live MPD's last Period runs on: its segments are read to no end, its length is the window's (below)
    const durationSec = type === 'dynamic' && last ? Infinity
      : parseIsoDuration(element.getAttribute('duration')) ?? (nextStart !== undefined ? nextStart - startSec : last && total !== undefined ? total - startSec : undefined);
    if (durationSec === undefined || !(durationSec > 0)) {
      return unsupported(elements.length > 1 ? `Period ${index} has no length (no @duration, no next Period@start, no mediaPresentationDuration)` : 'the MPD gives no mediaPresentationDuration nor Period@duration');
    }
    const clock: MpdClock | undefined = type === 'dynamic' && Number.isFinite(ast) && opts.nowMs !== undefined
      ? { elapsedSec: (opts.nowMs - ast) / 1000 - startSec, ...(timeShiftSec !== undefined ? { timeShiftSec } : {}) } : undefined;
    const own = periodRepresentations(element, index, durationSec, clock);
    if (typeof own === 'string') return unsupported(elements.length > 1 ? `Period ${index}: ${own}` : own);
    const id = element.getAttribute('id') || String(Math.round(startSec * 1000));
    periods.push({ element, index, id, startSec, durationSec, open: !Number.isFinite(durationSec), representations: own });
    representations.push(...own);
  }
  const ids = new Set(periods.map((p) => p.id));
  if (ids.size !== periods.length) return unsupported('two Periods have the same id');
  const lastPeriod = periods[periods.length - 1]!;
  if (type === 'dynamic') {
    // live: the last Period as far as the window goes (its live edge), on its first video Representation's timeline
    const a = lastPeriod.representations.find((r) => r.kind === 'video')?.addressing;
    const end = a?.segments[a.segments.length - 1];
    lastPeriod.durationSec = a && end ? (end.t + end.d - a.presentationTimeOffset) / a.timescale : 0;
    const value: MpdRead = { doc, mpd, type, durationSec: lastPeriod.startSec + lastPeriod.durationSec, periods, representations };
    const next = Math.min(...lastPeriod.representations.map((r) => r.addressing?.clockNextSec ?? Infinity));
    if (Number.isFinite(next)) {
      value.clockUntilMs = ast + (lastPeriod.startSec + next) * 1000;
      // the viewer's MPD lists the window as a SegmentTimeline: its player reloads it to see each new segment (an
      // origin addressed by the clock may ask for reloads minutes apart, ffmpeg's PT500S), and the breaks at the edge
      const segSec = Math.min(...lastPeriod.representations.flatMap((r) => { const l = r.addressing?.segments.at(-1); return l && r.addressing ? [l.d / r.addressing.timescale] : []; }));
      const mup = parseIsoDuration(mpd.getAttribute('minimumUpdatePeriod'));
      if (Number.isFinite(segSec) && (mup === undefined || mup > segSec)) mpd.setAttribute('minimumUpdatePeriod', isoDuration(segSec));
    }
    return { ok: true, value };
  }
  return { ok: true, value: { doc, mpd, type, durationSec: total ?? lastPeriod.startSec + lastPeriod.durationSec, periods, representations } };
}

/**
 * A Period's Representations of the kinds the proxy reads, each with its addressing; a string says why the Period
 * cannot be split. A live MPD's Period before its last one is complete: read as far as its end, its segments addressed
 * by @duration those the time shift buffer still holds.
 */
function periodRepresentations(period: Element, periodIndex: number, durationSec: number, clock: MpdClock | undefined): MpdRepresentation[] | string {
  const representations: MpdRepresentation[] = [];
  for (const [setIndex, set] of childrenNamed(period, 'AdaptationSet').entries()) {
    for (const rep of childrenNamed(set, 'Representation')) {
      const kind = kindOf(set, rep);
      if (!kind) continue;
      const addressing = addressingOf([period, set, rep], durationSec, clock);
      if (typeof addressing === 'string') return addressing;
      if (addressing?.duration !== undefined && clock && Number.isFinite(durationSec)) {
        addressing.segments = inTimeShift(addressing.segments, addressing.presentationTimeOffset, addressing.timescale, clock);
      }
      const sidecar = addressing === undefined && childrenNamed(rep, 'BaseURL').length > 0 && kind === 'text';
      if (!addressing && !sidecar) return `Representation ${rep.getAttribute('id') ?? '?'} has no SegmentTemplate`;
      const channels = [rep, set].map((el) => childrenNamed(el, 'AudioChannelConfiguration')[0]).find((c) => c !== undefined);
      const r: MpdRepresentation = {
        element: rep, adaptationSet: set, periodIndex, setIndex, id: rep.getAttribute('id') ?? '', kind, sidecar,
        bandwidth: num(rep, 'bandwidth') ?? 0,
        ...(addressing ? { addressing } : {}),
      };
      const mimeType = inherited([rep, set], 'mimeType');
      const codecs = inherited([rep, set], 'codecs');
      const width = num(rep, 'width') ?? num(set, 'width');
      const height = num(rep, 'height') ?? num(set, 'height');
      const frameRate = frameRateOf(inherited([rep, set], 'frameRate'));
      const lang = inherited([rep, set], 'lang');
      const rate = num(rep, 'audioSamplingRate') ?? num(set, 'audioSamplingRate');
      const ch = Number(channels?.getAttribute('value'));
      if (mimeType) r.mimeType = mimeType;
      if (codecs) r.codecs = codecs;
      if (width) r.width = width;
      if (height) r.height = height;
      if (frameRate) r.frameRate = frameRate;
      if (lang) r.lang = lang;
      if (rate) r.audioSamplingRate = rate;
      if (Number.isInteger(ch) && ch > 0) r.audioChannels = ch;
      representations.push(r);
    }
  }
  if (!representations.some((r) => r.kind === 'video')) return 'the MPD has no video Representation';
  return representations;
}

/** A Representation's segment boundaries in seconds of the Period (its media time less presentationTimeOffset). */
export function segmentStarts(a: MpdAddressing): Array<{ start: number; duration: number }> {
  return a.segments.map((s) => ({ start: (s.t - a.presentationTimeOffset) / a.timescale, duration: s.d / a.timescale }));
}

/**
 * The reference video's segments across the Periods (each Period's first video Representation), in seconds of the
 * MPD's timeline, each cut to its Period: VMAP and cue breaks are placed on these boundaries whichever Period holds them.
 */
export function timelineStarts(read: Pick<MpdRead, 'periods'>): Array<{ start: number; duration: number }> {
  const micro = (x: number): number => Math.round(x * 1e6) / 1e6;
  return read.periods.flatMap((p) => {
    const a = p.representations.find((r) => r.kind === 'video' && r.addressing)?.addressing;
    return a ? segmentStarts(a).flatMap((s) => {
      const from = Math.max(0, s.start);
      const to = Math.min(p.durationSec, s.start + s.duration);
      return to - from > 1e-6 ? [{ start: micro(p.startSec + from), duration: micro(to - from) }] : [];
    }) : [];
  });
}

/** The Period of `read` that plays at `sec` of the MPD's timeline (the last one from its start on; the first before it). */
export function periodAt<P extends { startSec: number }>(periods: readonly P[], sec: number): P {
  let found = periods[0]!;
  for (const p of periods) if (p.startSec <= sec + 1e-6) found = p;
  return found;
}
