// DASH MPD checks for `engine check-playlist` (issue 33): the Periods' timing, each Representation's segments against
// its Period, presentationTimeOffset, Period ids and the tracks across Periods. Pure: the checker also lists the
// segment URLs whose availability ssai/check/check-url.ts fetches (init, first and last media segment of each
// Representation of each Period), never fetching them itself. Rules and severities: docs/ssai-dash.md "Checking an MPD".
import { DOMParser, type Element } from '@xmldom/xmldom';
import { addressingOf, childrenNamed, parseIsoDuration, type MpdSegment } from '../parse/mpd-reader.js';

export type MpdRule =
  | 'NOT_MPD' | 'MPD_PERIOD_ID_DUPLICATE' | 'MPD_PERIOD_GAP' | 'MPD_PERIOD_OVERLAP' | 'MPD_PERIOD_UNTIMED' | 'MPD_DURATION_MISMATCH'
  | 'MPD_ADDRESSING_INVALID' | 'MPD_TIMELINE_SHORT' | 'MPD_SEGMENT_BEFORE_PTO' | 'MPD_TRACK_MISSING' | 'MPD_SEGMENT_UNAVAILABLE';
export type MpdFinding = { rule: MpdRule; severity: 'error' | 'warning'; message: string };

/** A segment URL to fetch: which Period and Representation it belongs to, and which of its files it is. */
export type MpdProbe = { period: string; representation: string; what: 'init' | 'first' | 'last' | 'file'; url: string };

/** Period starts and ends may differ by the 1 ms an MPD's durations are written to (PT8.533S). */
const TOLERANCE_SEC = 0.001;

/** A Representation's segments as the checker reads them, in seconds of its Period; media URLs by segment. */
type RepSegments = { starts: Array<{ start: number; duration: number }>; init?: string; media: string[]; ptoSec: number };
type RepRead = { id: string; bandwidth: string; segments?: RepSegments; file?: string; fileInit?: string; error?: string };
type PeriodRead = { id: string; start?: number; duration?: number; explicitStart: boolean; types: Set<string>; reps: RepRead[] };

const looksLikeMpd = (text: string): boolean => /^\s*(<\?xml|<MPD[\s>])/.test(text.replace(/^\uFEFF/, ''));
/** Whether a body is an MPD rather than an HLS playlist: its first characters (`<?xml`, `<MPD`). */
export const isMpdText = looksLikeMpd;

/** `$RepresentationID$`, `$Number$`, `$Time$`, `$Bandwidth$` (with `%0Nd`) and `$$` (ISO/IEC 23009-1 §5.3.9.4.4). */
export function fillTemplate(template: string, vars: { id: string; bandwidth: string; n: number; t: number }): string {
  return template.replace(/\$(RepresentationID|Number|Time|Bandwidth)?(%0(\d+)d)?\$/g, (_m, name: string | undefined, _f, width: string | undefined) => {
    if (!name) return '$';
    const v = name === 'RepresentationID' ? vars.id : name === 'Bandwidth' ? vars.bandwidth : String(name === 'Number' ? vars.n : vars.t);
    return width ? v.padStart(Number(width), '0') : v;
  });
}

const resolve = (base: string, ref: string): string => {
  try { return new URL(ref, base).href; } catch { return ref; }
};
/** The BaseURL of an element resolved against its parent's (the first BaseURL when several are listed). */
const baseOf = (el: Element, parent: string): string => {
  const b = childrenNamed(el, 'BaseURL')[0]?.textContent?.trim();
  return b ? resolve(parent, b) : parent;
};

function typeOf(set: Element): string {
  const type = set.getAttribute('contentType');
  if (type) return type;
  const rep = childrenNamed(set, 'Representation')[0];
  const mime = set.getAttribute('mimeType') || rep?.getAttribute('mimeType') || '';
  const codecs = set.getAttribute('codecs') || rep?.getAttribute('codecs') || '';
  if (/^(stpp|wvtt)/.test(codecs) || mime.startsWith('text/') || mime === 'application/ttml+xml') return 'text';
  return mime.split('/', 1)[0] || 'unknown';
}

/** A SegmentList's segments (SegmentURL@media, with a SegmentTimeline or @duration) and its Initialization. */
function segmentListOf(list: Element, periodSec: number): { segments: MpdSegment[]; timescale: number; pto: number; media: string[]; init?: string } | string {
  const timescale = Number(list.getAttribute('timescale') ?? 1);
  const pto = Number(list.getAttribute('presentationTimeOffset') ?? 0);
  const startNumber = Number(list.getAttribute('startNumber') ?? 1);
  const urls = childrenNamed(list, 'SegmentURL');
  const media = urls.map((u) => u.getAttribute('media') ?? '');
  const init = childrenNamed(list, 'Initialization')[0]?.getAttribute('sourceURL') ?? undefined;
  const timeline = childrenNamed(list, 'SegmentTimeline')[0];
  const segments: MpdSegment[] = [];
  if (timeline) {
    let t = 0;
    for (const s of childrenNamed(timeline, 'S')) {
      const d = Number(s.getAttribute('d'));
      if (!(d > 0)) return 'an S element of a SegmentTimeline has no positive @d';
      if (s.getAttribute('t')) t = Number(s.getAttribute('t'));
      for (let k = 0; k <= Math.max(0, Number(s.getAttribute('r') ?? 0)); k++, t += d) segments.push({ t, d, n: startNumber + segments.length });
    }
  } else {
    const d = Number(list.getAttribute('duration'));
    if (!(d > 0) && urls.length > 1) return 'a SegmentList of several segments has neither a SegmentTimeline nor a @duration';
    const every = d > 0 ? d : periodSec * timescale;
    for (let i = 0; i < urls.length; i++) segments.push({ t: pto + i * every, d: every, n: startNumber + i });
  }
  return { segments: segments.slice(0, urls.length), timescale, pto, media, ...(init ? { init } : {}) };
}

/** One Representation: its segments in its Period's seconds and their URLs, or the single file it is (sidecar, SegmentBase). */
function representationOf(period: Element, set: Element, rep: Element, base: string, periodSec: number): RepRead {
  const id = rep.getAttribute('id') ?? '';
  const bandwidth = rep.getAttribute('bandwidth') ?? '';
  const levels = [period, set, rep];
  const list = [...levels].reverse().map((l) => childrenNamed(l, 'SegmentList')[0]).find((l) => l !== undefined);
  if (list) {
    const read = segmentListOf(list, periodSec);
    if (typeof read === 'string') return { id, bandwidth, error: read };
    return { id, bandwidth, segments: {
      starts: read.segments.map((s) => ({ start: (s.t - read.pto) / read.timescale, duration: s.d / read.timescale })),
      ptoSec: read.pto / read.timescale, media: read.media.map((m) => resolve(base, m)), ...(read.init ? { init: resolve(base, read.init) } : {}),
    } };
  }
  const a = levels.some((l) => childrenNamed(l, 'SegmentTemplate').length) ? addressingOf(levels, periodSec) : undefined;
  if (typeof a === 'string') return { id, bandwidth, error: a };
  if (!a) {
    // SegmentBase or a whole file (a sidecar WebVTT): the BaseURL is the media
    const segmentBase = [...levels].reverse().map((l) => childrenNamed(l, 'SegmentBase')[0]).find((b) => b !== undefined);
    const init = segmentBase ? childrenNamed(segmentBase, 'Initialization')[0]?.getAttribute('sourceURL') : undefined;
    return { id, bandwidth, file: base, ...(init ? { fileInit: resolve(base, init) } : {}) };
  }
  const vars = (s: MpdSegment) => ({ id, bandwidth, n: s.n, t: s.t });
  return { id, bandwidth, segments: {
    starts: a.segments.map((s) => ({ start: (s.t - a.presentationTimeOffset) / a.timescale, duration: s.d / a.timescale })),
    ptoSec: a.presentationTimeOffset / a.timescale,
    media: a.media === undefined ? [] : a.segments.map((s) => resolve(base, fillTemplate(a.media!, vars(s)))),
    ...(a.initialization !== undefined ? { init: resolve(base, fillTemplate(a.initialization, { id, bandwidth, n: 0, t: 0 })) } : {}),
  } };
}

type MpdPeriods = { type: 'static' | 'dynamic'; durationSec?: number; periods: PeriodRead[]; explicitDurations: boolean[] };

/** The MPD's Periods with their start and duration as ISO/IEC 23009-1 §5.3.2.1 derives them, and their Representations. */
function readPeriods(text: string, url: string): MpdPeriods | string {
  if (!looksLikeMpd(text)) return 'the body does not start with <?xml or <MPD';
  let mpd: Element | null;
  try {
    mpd = new DOMParser({ onError: (level, msg) => { if (level !== 'warning') throw new Error(msg); } }).parseFromString(text, 'text/xml').documentElement;
  } catch (e) {
    return `not XML: ${e instanceof Error ? e.message.split('\n', 1)[0] : String(e)}`;
  }
  if (!mpd || mpd.localName !== 'MPD') return 'the document\'s root element is not MPD';
  const type = mpd.getAttribute('type') === 'dynamic' ? 'dynamic' : 'static';
  const durationSec = parseIsoDuration(mpd.getAttribute('mediaPresentationDuration'));
  const els = childrenNamed(mpd, 'Period');
  const starts = els.map((p) => parseIsoDuration(p.getAttribute('start')));
  const durations = els.map((p) => parseIsoDuration(p.getAttribute('duration')));
  // a start missing is the previous Period's end (the first static Period's: 0); a duration missing, up to the next start
  for (let i = 0; i < els.length; i++) {
    const prev = i > 0 ? (starts[i - 1] !== undefined && durations[i - 1] !== undefined ? starts[i - 1]! + durations[i - 1]! : undefined) : (type === 'static' ? 0 : undefined);
    starts[i] ??= prev;
    if (durations[i] === undefined) {
      const next = i + 1 < els.length ? parseIsoDuration(els[i + 1]!.getAttribute('start')) : durationSec;
      if (next !== undefined && starts[i] !== undefined) durations[i] = next - starts[i]!;
    }
  }
  const mpdBase = baseOf(mpd, url);
  const periods = els.map((p, i): PeriodRead => {
    const periodBase = baseOf(p, mpdBase);
    const sets = childrenNamed(p, 'AdaptationSet');
    const start = starts[i];
    const duration = durations[i];
    return {
      id: p.getAttribute('id') ?? '', explicitStart: p.getAttribute('start') !== null,
      ...(start !== undefined ? { start } : {}), ...(duration !== undefined ? { duration } : {}),
      types: new Set(sets.map(typeOf)),
      reps: sets.flatMap((set) => {
        const setBase = baseOf(set, periodBase);
        return childrenNamed(set, 'Representation').map((rep) => representationOf(p, set, rep, baseOf(rep, setBase), duration ?? 0));
      }),
    };
  });
  return { type, ...(durationSec !== undefined ? { durationSec } : {}), periods, explicitDurations: els.map((p) => p.getAttribute('duration') !== null) };
}

const secs = (x: number): string => `${Math.round(x * 1000) / 1000} s`;
const named = (p: PeriodRead, i: number): string => (p.id ? `Period "${p.id}"` : `Period ${i + 1}`);

/**
 * A Representation's segments against its Period: together they cover the Period's duration up to one segment (the
 * longest listed), and the first does not end at or before the Period's start. The presentationTimeOffset rule: the
 * first segment may start before presentationTimeOffset by less than its own length (a player cuts it at the Period's
 * start: audio split at a video boundary starts up to an AAC frame early), not by its whole length or more (it would
 * belong to the content before the Period: the offset or the timeline is wrong).
 */
function segmentFindings(where: string, rep: RepSegments, periodSec: number): MpdFinding[] {
  const out: MpdFinding[] = [];
  if (!rep.starts.length) return [{ rule: 'MPD_TIMELINE_SHORT', severity: 'error', message: `${where} lists no segment for a Period of ${secs(periodSec)}` }];
  let covered = 0;
  let longest = 0;
  for (const s of rep.starts) {
    covered += Math.max(0, Math.min(s.start + s.duration, periodSec) - Math.max(s.start, 0));
    longest = Math.max(longest, s.duration);
  }
  if (periodSec - covered > longest + TOLERANCE_SEC) {
    out.push({ rule: 'MPD_TIMELINE_SHORT', severity: 'error', message: `${where}: its segments cover ${secs(covered)} of the Period's ${secs(periodSec)}, short by more than a segment (${secs(longest)})` });
  }
  const first = rep.starts.reduce((a, b) => (b.start < a.start ? b : a));
  if (first.start + first.duration <= TOLERANCE_SEC) {
    out.push({ rule: 'MPD_SEGMENT_BEFORE_PTO', severity: 'error', message: `${where}: its first segment starts ${secs(-first.start)} before presentationTimeOffset (${secs(rep.ptoSec)} of media time) and ends before the Period starts: the offset or the timeline is wrong` });
  }
  return out;
}

/** Checks an MPD's text (its segments' URLs are not needed: mpdSegmentProbes lists them against the MPD's URL). */
export function checkMpd(text: string): MpdFinding[] {
  const read = readPeriods(text, '');
  if (typeof read === 'string') return [{ rule: 'NOT_MPD', severity: 'error', message: read }];
  const out: MpdFinding[] = [];
  const { periods } = read;
  const seen = new Set<string>();
  for (const p of periods) {
    if (p.id && seen.has(p.id)) out.push({ rule: 'MPD_PERIOD_ID_DUPLICATE', severity: 'error', message: `Period id "${p.id}" appears twice (ISO/IEC 23009-1 §5.3.2.2: unique within the MPD)` });
    seen.add(p.id);
  }
  periods.forEach((p, i) => {
    const next = periods[i + 1];
    if (!next) return;
    const missing = [...p.types].filter((t) => !next.types.has(t)).map((t) => `${t} in ${named(p, i)}, not in ${named(next, i + 1)}`)
      .concat([...next.types].filter((t) => !p.types.has(t)).map((t) => `${t} in ${named(next, i + 1)}, not in ${named(p, i)}`));
    for (const m of missing) out.push({ rule: 'MPD_TRACK_MISSING', severity: 'warning', message: `${m}: players keep the tracks of the Period they started with across Periods` });
  });
  if (read.type === 'dynamic') return out; // a live MPD's Periods and timelines are windows: checked on static MPDs only
  periods.forEach((p, i) => {
    if (p.start === undefined || p.duration === undefined) {
      out.push({ rule: 'MPD_PERIOD_UNTIMED', severity: 'error', message: `${named(p, i)} has no start or duration that can be derived (Period@start, Period@duration, mediaPresentationDuration)` });
      return;
    }
    const prev = periods[i - 1];
    if (prev && p.explicitStart && read.explicitDurations[i - 1] && prev.start !== undefined && prev.duration !== undefined) {
      const end = prev.start + prev.duration;
      if (p.start > end + TOLERANCE_SEC) out.push({ rule: 'MPD_PERIOD_GAP', severity: 'error', message: `${named(p, i)} starts at ${secs(p.start)}, ${secs(p.start - end)} after ${named(prev, i - 1)} ends (${secs(end)})` });
      if (p.start < end - TOLERANCE_SEC) out.push({ rule: 'MPD_PERIOD_OVERLAP', severity: 'error', message: `${named(p, i)} starts at ${secs(p.start)}, ${secs(end - p.start)} before ${named(prev, i - 1)} ends (${secs(end)})` });
    }
    for (const rep of p.reps) {
      const where = `Representation "${rep.id}" of ${named(p, i)}`;
      if (rep.error) out.push({ rule: 'MPD_ADDRESSING_INVALID', severity: 'error', message: `${where}: ${rep.error}` });
      else if (rep.segments) out.push(...segmentFindings(where, rep.segments, p.duration));
    }
  });
  const last = periods[periods.length - 1];
  if (last?.start !== undefined && last.duration !== undefined && read.durationSec !== undefined && Math.abs(last.start + last.duration - read.durationSec) > TOLERANCE_SEC) {
    out.push({ rule: 'MPD_DURATION_MISMATCH', severity: 'warning', message: `the last Period ends at ${secs(last.start + last.duration)}, mediaPresentationDuration is ${secs(read.durationSec)}` });
  }
  return out;
}

/**
 * The files whose availability `engine check-playlist` checks in a static MPD: per Representation of each Period, its
 * init segment and its first and last media segment (a whole file for a sidecar or SegmentBase), URLs resolved
 * through the BaseURL chain (MPD, Period, AdaptationSet, Representation) against `url`. A live MPD has none.
 */
export function mpdSegmentProbes(text: string, url: string): MpdProbe[] {
  const read = readPeriods(text, url);
  if (typeof read === 'string' || read.type === 'dynamic') return [];
  const out: MpdProbe[] = [];
  read.periods.forEach((p, i) => {
    const period = p.id || String(i + 1);
    for (const rep of p.reps) {
      const add = (what: MpdProbe['what'], u: string | undefined) => {
        if (u !== undefined && !out.some((x) => x.url === u && x.period === period && x.representation === rep.id)) out.push({ period, representation: rep.id, what, url: u });
      };
      if (rep.file !== undefined) { add('init', rep.fileInit); add('file', rep.file); }
      if (rep.segments) { add('init', rep.segments.init); add('first', rep.segments.media[0]); add('last', rep.segments.media.at(-1)); }
    }
  });
  return out;
}
