// A viewer's MPD with its ads as Periods of their own (issue 33 item 1): the origin's Periods split at each break (a
// Period without one passes whole) into content Periods whose presentationTimeOffset keeps their media time (the
// origin's segments, numbers and times unchanged, addressed on the origin through each Period's BaseURL), and one
// Period per ad between them whose AdaptationSets mirror those of the content it interrupts (ids, kinds, languages,
// roles, codecs, sizes) and address the prepared creative through a SegmentTemplate with a SegmentTimeline. The
// origin's EventStreams are cut to the content Periods, its SCTE-35 ones kept or left out (ad_marker_passthrough). Pure: the origin's document is cloned, never edited.
import { XMLSerializer, type Element } from '@xmldom/xmldom';
import { childrenNamed, isoDuration, periodAt, timelineStarts, type MpdAddressing, type MpdRead, type MpdRepresentation, type MpdSegment } from '../parse/mpd-reader.js';
import { resolveUri } from '../../media/playlist-scanner.js';

/** One Representation of an ad: its init segment, its media segments' URL around $Number$ (from 0), their seconds. */
export type DashAdRendition = {
  init: string;
  mediaPrefix: string;
  mediaSuffix: string;
  durations: number[];
  bandwidth: number;
  width?: number;
  height?: number;
  /** timescale of the timeline written: the audio's sample rate, 90 kHz for video */
  timescale: number;
};

export type DashAd = {
  periodId: string;
  duration: number;
  /** the ad's Representation mirroring a content Representation (undefined: none, the AdaptationSet may go without it) */
  rendition: (rep: MpdRepresentation) => DashAdRendition | undefined;
};

/**
 * A break: its ads go in at `atSeconds` of the content's Period (a segment boundary; the content's end is a post-roll)
 * and the content resumes at `resumeSeconds` (a boundary too): the same for an insertion (VMAP, a cue without a
 * duration), later for a cue whose break replaces the content under it.
 */
export type DashBreak = { id: string; atSeconds: number; resumeSeconds: number; ads: DashAd[] };

export type StitchMpdOptions = {
  /** the origin MPD's absolute URL: the content's BaseURL resolves against it */
  mpdUrl: string;
  breaks: DashBreak[];
  /** a sidecar text track's empty stand-in in ad Periods */
  emptyTextUri: string;
  /** content_segment_prefix (issue 31 item 5): the content's BaseURL as listed */
  contentUri?: (absoluteUri: string) => string;
  /**
   * a live (dynamic) MPD: Periods placed on the origin's timeline (liveTimeline below); the MPD reloads at `location`;
   * `presentationDelaySeconds` is announced as its suggestedPresentationDelay (where a viewer's pre-roll was placed)
   */
  live?: { location: string; presentationDelaySeconds?: number };
  /** ad_marker_passthrough false (issue 31 item 5): the origin's SCTE-35 EventStreams and InbandEventStreams left out */
  removeCues?: boolean;
};

/** The SCTE-35 schemes the cue reader reads (ssai/parse/mpd-cues.ts), and their binary inband form (SCTE 214-3). */
const SCTE35_SCHEMES = new Set(['urn:scte:scte35:2013:xml', 'urn:scte:scte35:2014:xml+bin', 'urn:scte:scte35:2013:bin']);
const isScte35 = (stream: Element): boolean => SCTE35_SCHEMES.has((stream.getAttribute('schemeIdUri') ?? '').trim());

/** How far before a Period's start a segment may begin and still be that Period's (audio ends an AAC frame off video). */
const START_TOLERANCE_SEC = 0.1;
/** Descriptors of an AdaptationSet that tell players which track it is: copied into the ad Periods. */
const SET_DESCRIPTORS = new Set(['Role', 'Accessibility', 'Label', 'AudioChannelConfiguration']);
/** Attributes of a content AdaptationSet that an ad's mirror keeps (not its segment alignment with the content). */
const SET_ATTRIBUTES = ['id', 'contentType', 'mimeType', 'lang', 'par', 'maxWidth', 'maxHeight', 'frameRate', 'startWithSAP', 'segmentAlignment', 'label'];

/** `$` in a literal part of a template is written `$$` (ISO/IEC 23009-1 §5.3.9.4.4). */
const literal = (s: string): string => s.replace(/\$/g, '$$$$');

const directoryOf = (url: string): string => {
  const bare = url.replace(/[?#].*$/, '');
  return bare.slice(0, bare.lastIndexOf('/') + 1);
};

/** S elements for consecutive segments: a run of equal durations is one S with @r; @t where a gap or overlap begins. */
function timelineOf(segments: Array<{ t: number; d: number }>, el: (name: string) => Element): Element {
  const timeline = el('SegmentTimeline');
  let expected: number | undefined;
  let last: Element | undefined;
  let lastD = -1;
  let repeat = 0;
  for (const s of segments) {
    if (last && s.d === lastD && s.t === expected) {
      repeat += 1;
      last.setAttribute('r', String(repeat));
    } else {
      last = el('S');
      if (s.t !== expected) last.setAttribute('t', String(s.t));
      last.setAttribute('d', String(s.d));
      timeline.appendChild(last);
      lastD = s.d;
      repeat = 0;
    }
    expected = s.t + s.d;
  }
  return timeline;
}

/** The content's SegmentTemplate for the part [fromSec, toSec) of its Period: same media, numbers and times. */
function contentTemplate(a: MpdAddressing, fromSec: number, toSec: number, el: (name: string) => Element): Element {
  const startOf = (s: MpdSegment): number => (s.t - a.presentationTimeOffset) / a.timescale;
  const kept = a.segments.filter((s) => startOf(s) >= fromSec - START_TOLERANCE_SEC && startOf(s) < toSec - START_TOLERANCE_SEC);
  const t = el('SegmentTemplate');
  t.setAttribute('timescale', String(a.timescale));
  t.setAttribute('presentationTimeOffset', String(a.presentationTimeOffset + Math.round(fromSec * a.timescale)));
  t.setAttribute('startNumber', String(kept[0]?.n ?? a.startNumber));
  if (a.initialization !== undefined) t.setAttribute('initialization', a.initialization);
  if (a.media !== undefined) t.setAttribute('media', a.media);
  if (a.timeline) t.appendChild(timelineOf(kept, el));
  else if (a.duration !== undefined) t.setAttribute('duration', String(a.duration));
  return t;
}

/**
 * An origin EventStream in the content Period of [fromSec, toSec) of the origin's: its Events that start there, their
 * presentationTime unchanged and the stream's presentationTimeOffset moved by `fromSec` (as the segments' is), so each
 * Event keeps its place in the media. `dropAtStart`: the Period follows a break, whose end an SCTE-35 Event at its
 * start marks (the ads already ended it: as the HLS cue-in after stitched ads). Undefined when no Event is left.
 */
function eventStreamPart(stream: Element, fromSec: number, toSec: number, dropAtStart: boolean): Element | undefined {
  const timescale = Number(stream.getAttribute('timescale') || 1);
  const pto = Number(stream.getAttribute('presentationTimeOffset') || 0);
  if (!(timescale > 0) || !Number.isFinite(pto)) return undefined;
  const part = stream.cloneNode(true) as Element;
  let kept = 0;
  for (const event of childrenNamed(part, 'Event')) {
    const at = (Number(event.getAttribute('presentationTime') || 0) - pto) / timescale;
    const inside = at >= fromSec - START_TOLERANCE_SEC && at < toSec - START_TOLERANCE_SEC;
    if (!inside || (dropAtStart && Math.abs(at - fromSec) <= START_TOLERANCE_SEC)) part.removeChild(event);
    else kept += 1;
  }
  if (!kept) return undefined;
  if (fromSec > 0) part.setAttribute('presentationTimeOffset', String(pto + Math.round(fromSec * timescale)));
  return part;
}

/** The stitched MPD's text. */
export function stitchMpd(read: MpdRead, opts: StitchMpdOptions): string {
  const { doc, mpd } = read;
  const ns = mpd.namespaceURI;
  const el = (name: string): Element => doc.createElementNS(ns, name);
  const out = mpd.cloneNode(false) as Element;
  let base = opts.mpdUrl;
  for (let c = mpd.firstChild; c; c = c.nextSibling) {
    const name = c.nodeType === 1 ? (c as Element).localName : '';
    if (name === 'BaseURL') { base = resolveUri(base, (c.textContent ?? '').trim()); continue; }
    // Location would send a reload to the origin; the Periods are ours
    if (name === 'Period' || name === 'Location' || name === 'PatchLocation') continue;
    out.appendChild(c.cloneNode(true));
  }
  // each Period's content under its own BaseURL (the MPD's folded in): Periods of one MPD may live in other directories
  const contentBases = read.periods.map((p) => {
    const own = childrenNamed(p.element, 'BaseURL')[0];
    return directoryOf(own ? resolveUri(base, (own.textContent ?? '').trim()) : base);
  });
  const byKey = new Map(read.representations.map((r) => [`${r.periodIndex}/${r.setIndex}/${r.id}`, r]));

  const breaks = opts.breaks.filter((b) => b.ads.length > 0).sort((x, y) => x.atSeconds - y.atSeconds);
  if (opts.live) {
    const location = el('Location');
    location.appendChild(doc.createTextNode(opts.live.location));
    out.insertBefore(location, out.firstChild);
    if (opts.live.presentationDelaySeconds !== undefined) out.setAttribute('suggestedPresentationDelay', isoDuration(opts.live.presentationDelaySeconds));
  }

  /**
   * The origin's event signalling in a content Period, one step for both forms (ad_marker_passthrough, issue 31 item 5):
   * its EventStreams cut to [from, to) after the BaseURL, before the AdaptationSets (ISO/IEC 23009-1 Table 4); with
   * passthrough off, the SCTE-35 EventStreams and the SCTE-35 InbandEventStreams left out (inband cues stay in the
   * content's segments, which the proxy does not touch: players are no longer told to read them).
   */
  const placeSignalling = (p: Element, streams: Element[], from: number, to: number, afterBreak: boolean): void => {
    const firstSet = childrenNamed(p, 'AdaptationSet')[0] ?? null;
    for (const stream of streams) {
      const scte = isScte35(stream);
      if (scte && opts.removeCues) continue;
      const part = eventStreamPart(stream, from, to, scte && afterBreak);
      if (part) p.insertBefore(part, firstSet);
    }
    if (!opts.removeCues) return;
    for (const set of childrenNamed(p, 'AdaptationSet')) {
      for (const owner of [set, ...childrenNamed(set, 'Representation')]) {
        for (const x of childrenNamed(owner, 'InbandEventStream')) if (isScte35(x)) owner.removeChild(x);
      }
    }
  };

  const contentPeriod = (index: number, from: number, to: number, afterBreak: boolean): Element => {
    const period = read.periods[index]!.element;
    const p = period.cloneNode(true) as Element;
    const streams = childrenNamed(p, 'EventStream');
    for (const c of [...childrenNamed(p, 'BaseURL'), ...childrenNamed(p, 'SegmentTemplate'), ...streams]) p.removeChild(c);
    const baseUrl = el('BaseURL');
    const contentBase = contentBases[index]!;
    baseUrl.appendChild(doc.createTextNode(opts.contentUri ? opts.contentUri(contentBase) : contentBase));
    p.insertBefore(baseUrl, p.firstChild);
    placeSignalling(p, streams, from, to, afterBreak);
    childrenNamed(p, 'AdaptationSet').forEach((set, setIndex) => {
      for (const t of childrenNamed(set, 'SegmentTemplate')) set.removeChild(t);
      const reps = childrenNamed(set, 'Representation');
      let kept = 0;
      for (const rep of reps) {
        const known = byKey.get(`${index}/${setIndex}/${rep.getAttribute('id') ?? ''}`);
        // a Representation the reader does not know (thumbnails, an unknown kind) loses its template: left out
        if (!known) { set.removeChild(rep); continue; }
        kept += 1;
        if (!known.addressing) continue;
        for (const t of childrenNamed(rep, 'SegmentTemplate')) rep.removeChild(t);
        rep.appendChild(contentTemplate(known.addressing, from, to, el));
      }
      if (!kept) p.removeChild(set);
    });
    return p;
  };

  /** An ad's Period, its AdaptationSets mirroring those of the origin Period `index` (the content it interrupts). */
  const adPeriod = (ad: DashAd, index: number): Element => {
    const p = el('Period');
    p.setAttribute('id', ad.periodId);
    childrenNamed(read.periods[index]!.element, 'AdaptationSet').forEach((set, setIndex) => {
      const mirror = el('AdaptationSet');
      for (const a of SET_ATTRIBUTES) { const v = set.getAttribute(a); if (v) mirror.setAttribute(a, v); }
      for (let c = set.firstChild; c; c = c.nextSibling) if (c.nodeType === 1 && SET_DESCRIPTORS.has((c as Element).localName ?? '')) mirror.appendChild(c.cloneNode(true));
      for (const repEl of childrenNamed(set, 'Representation')) {
        const rep = byKey.get(`${index}/${setIndex}/${repEl.getAttribute('id') ?? ''}`);
        if (!rep) continue;
        const r = el('Representation');
        r.setAttribute('id', rep.id);
        r.setAttribute('bandwidth', String(rep.bandwidth || 1));
        if (rep.mimeType && !set.getAttribute('mimeType')) r.setAttribute('mimeType', rep.mimeType);
        if (rep.kind === 'text') {
          // a sidecar WebVTT stands in as an empty file; segmented text (stpp, wvtt) has no ad counterpart: left out
          if (!rep.sidecar || rep.mimeType !== 'text/vtt') continue;
          const b = el('BaseURL');
          b.appendChild(doc.createTextNode(opts.emptyTextUri));
          r.appendChild(b);
          mirror.appendChild(r);
          continue;
        }
        const ofAd = ad.rendition(rep);
        if (!ofAd) continue;
        r.setAttribute('bandwidth', String(ofAd.bandwidth));
        // prepared to the content's profile and level (ladderOf): the content's codecs string names it
        if (rep.codecs) r.setAttribute('codecs', rep.codecs);
        if (rep.kind === 'video') {
          if (ofAd.width) r.setAttribute('width', String(ofAd.width));
          if (ofAd.height) r.setAttribute('height', String(ofAd.height));
          r.setAttribute('sar', '1:1');
        } else if (rep.audioSamplingRate) r.setAttribute('audioSamplingRate', String(rep.audioSamplingRate));
        for (const c of childrenNamed(repEl, 'AudioChannelConfiguration')) r.appendChild(c.cloneNode(true));
        const t = el('SegmentTemplate');
        t.setAttribute('timescale', String(ofAd.timescale));
        t.setAttribute('presentationTimeOffset', '0');
        t.setAttribute('startNumber', '0');
        t.setAttribute('initialization', literal(ofAd.init));
        t.setAttribute('media', `${literal(ofAd.mediaPrefix)}$Number$${literal(ofAd.mediaSuffix)}`);
        let time = 0;
        const segs = ofAd.durations.map((d) => {
          const start = Math.round(time * ofAd.timescale);
          time += d;
          return { t: start, d: Math.round(time * ofAd.timescale) - start };
        });
        t.appendChild(timelineOf(segs, el));
        r.appendChild(t);
        mirror.appendChild(r);
      }
      if (childrenNamed(mirror, 'Representation').length) p.appendChild(mirror);
    });
    return p;
  };

  const placed = opts.live ? liveTimeline(read, breaks) : vodTimeline(read, breaks);
  for (const p of placed) {
    const origin = read.periods[p.period]!;
    const element = p.kind === 'content'
      ? contentPeriod(p.period, p.from - origin.startSec, (p.to ?? Infinity) - origin.startSec, p.afterBreak)
      : adPeriod(p.ad, p.period);
    element.setAttribute('id', p.id);
    element.setAttribute('start', isoDuration(p.start));
    if (p.duration !== undefined) element.setAttribute('duration', isoDuration(p.duration));
    out.appendChild(element);
  }
  if (opts.live) out.removeAttribute('mediaPresentationDuration');
  else {
    const last = placed[placed.length - 1];
    out.setAttribute('mediaPresentationDuration', isoDuration(last ? last.start + (last.duration ?? 0) : 0));
  }
  return `<?xml version="1.0" encoding="utf-8"?>\n${new XMLSerializer().serializeToString(out)}\n`;
}

/**
 * A Period of a viewer's MPD: `start` on the viewer's timeline (VOD: one after the other from the origin's first Period;
 * live: where its media plays on the origin's), `period` the origin Period it is cut from (content) or mirrors (ads);
 * a content Period's `from` and `to` on the MPD's timeline, the last live one open (no `to`, no duration). `afterBreak`:
 * it starts where a break's ads end.
 */
export type StitchedPeriod = { id: string; start: number; duration?: number; period: number }
  & ({ kind: 'content'; from: number; to?: number; afterBreak: boolean } | { kind: 'ad'; ad: DashAd });

type Piece = { kind: 'content'; period: number; from: number; to: number; afterBreak: string | undefined } | { kind: 'ads'; period: number; b: DashBreak };

/**
 * The origin's Periods cut at the breaks, on the MPD's timeline (seconds): the content from the first Period's start up
 * to each break, split where the origin's Periods meet (a Period with no break passes whole), the break's ads (which
 * mirror the origin Period that plays at its start: at a Period boundary, the one it starts), the content again from
 * where the break resumes it. A break that replaces content replaces it whichever Periods it lies in: one spanning
 * a boundary ends its Period at the break's start and resumes the next at the break's end (a Period it covers whole is
 * left out). `stop`: the live edge, a break after it not placed yet; `end` the content's.
 */
function cutAtBreaks(periods: MpdRead['periods'], breaks: readonly DashBreak[], end: number, stop = Infinity): Piece[] {
  const pieces: Piece[] = [];
  // (from before the first Period: a live window's first Period may start after a break it has left, whose replaced
  // content is none of the Periods after it)
  let cursor = -Infinity;
  let after: string | undefined;
  const content = (to: number): void => {
    for (const p of periods) {
      const from = Math.max(cursor, p.startSec);
      // (a live MPD's last Period runs on past the edge of the moment)
      const upTo = Math.min(to, p.open ? Infinity : p.startSec + p.durationSec);
      if (upTo - from <= 1e-6) continue;
      pieces.push({ kind: 'content', period: p.index, from, to: upTo, afterBreak: from === cursor ? after : undefined });
    }
    after = undefined;
  };
  for (const b of breaks) {
    const from = Math.min(b.atSeconds, end);
    // a break inside the content another break replaced is none; one ahead of the live edge waits for it
    if (!b.ads.length || from < cursor) continue;
    if (from > stop + START_TOLERANCE_SEC) break;
    if (from > cursor) content(from);
    pieces.push({ kind: 'ads', period: periodAt(periods, from).index, b });
    after = b.id;
    cursor = Math.max(from, Math.min(b.resumeSeconds, end));
  }
  if (cursor < end) content(end);
  return pieces;
}

/** A VOD viewer's Periods: one after the other from the origin's first Period's start, every ad whole. */
export function vodTimeline(read: Pick<MpdRead, 'periods'>, breaks: readonly DashBreak[]): StitchedPeriod[] {
  const last = read.periods[read.periods.length - 1];
  const end = last ? last.startSec + last.durationSec : 0;
  let at = read.periods[0]?.startSec ?? 0;
  let part = 0;
  const out: StitchedPeriod[] = [];
  for (const piece of cutAtBreaks(read.periods, [...breaks].sort((x, y) => x.atSeconds - y.atSeconds), end)) {
    if (piece.kind === 'ads') {
      for (const ad of piece.b.ads) { out.push({ id: ad.periodId, kind: 'ad', ad, period: piece.period, start: at, duration: ad.duration }); at += ad.duration; }
      continue;
    }
    const duration = piece.to - piece.from;
    out.push({ id: `content-${part++}`, kind: 'content', period: piece.period, from: piece.from, to: piece.to, afterBreak: piece.afterBreak !== undefined, start: at, duration });
    at += duration;
  }
  return out;
}

/**
 * The Periods of a live viewer's MPD (issue 33, live): the origin's Periods split at each break, every Period placed
 * where its media plays on the origin's timeline, so a break's Periods stay where they were on every reload whatever
 * the window holds: a content Period from an origin Period's start (`content-{its id}`) or a break's end
 * (`content-{break}`) up to the next break or the origin Period's end, the break's ads from its start one after the
 * other, the content resuming at the break's end (its content replaced). Periods wholly before the window are left
 * out; the last content Period is open. A break ahead of the live edge is published once the edge reaches it (its
 * Periods as they will stay): a Period with an end is complete to dash.js, which does not follow its growing window
 * (it stalls, then skips to the next Period).
 */
export function liveTimeline(read: Pick<MpdRead, 'periods' | 'durationSec'>, breaks: readonly DashBreak[]): StitchedPeriod[] {
  const windowStart = timelineStarts(read)[0]?.start ?? read.periods[0]?.startSec ?? 0;
  const edge = read.durationSec;
  const periods: StitchedPeriod[] = [];
  for (const piece of cutAtBreaks(read.periods, [...breaks].sort((x, y) => x.atSeconds - y.atSeconds), Infinity, edge)) {
    if (piece.kind === 'ads') {
      let at = piece.b.atSeconds;
      for (const ad of piece.b.ads) {
        // ads longer than the break end where the content resumes (its time runs on with the wall clock)
        const duration = Math.min(ad.duration, piece.b.resumeSeconds - at);
        if (duration > 0 && at + duration > windowStart) periods.push({ id: ad.periodId, kind: 'ad', ad, period: piece.period, start: at, duration });
        at += duration;
      }
      continue;
    }
    const open = piece.to === Infinity;
    // before the window, or not begun in it yet
    if ((!open && piece.to <= windowStart + START_TOLERANCE_SEC) || piece.from >= edge - START_TOLERANCE_SEC) continue;
    const id = piece.afterBreak !== undefined ? `content-${piece.afterBreak}` : `content-${read.periods[piece.period]!.id}`;
    periods.push({ id, kind: 'content', period: piece.period, start: piece.from, from: piece.from, afterBreak: piece.afterBreak !== undefined,
      ...(open ? {} : { to: piece.to, duration: piece.to - piece.from }) });
  }
  return periods;
}
