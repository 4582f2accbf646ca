// Rewrites origin playlists for a viewer session: multivariant URIs to our /v1/manifest routes, and media playlists
// with the session's ads stitched in (issue 5 "Stitching"). Pure functions: no I/O, no clock.
import type { KeyInfo, MapInfo, MediaPlaylist, MediaSegment, RawTag, ScanError } from '../../media/playlist-scanner.js';
import { isVodPlaylist, parseAttributes, resolveUri } from '../../media/playlist-scanner.js';
import { CUE_TAG_NAMES, isCueTag } from '../parse/cue-finder.js';
import type { PlaylistPolicy } from './playlist-policy.js';

export type TrackKind = 'video' | 'audio' | 'subtitles' | 'iframe';

export type VariantEntry = {
  n: number;
  kind: TrackKind;
  /** absolute origin URI */
  uri: string;
  groupId?: string;
  language?: string;
  name?: string;
  bandwidth?: number;
  resolution?: string;
  codecs?: string;
  /** a variant's AUDIO group: its audio is in that group's renditions (demuxed) when they have URIs */
  audioGroup?: string;
  /** an audio rendition's CHANNELS count */
  channels?: number;
};

export type RewriteMultivariantOptions = {
  originUrl: string;
  makeVariantUri: (n: number, kind: TrackKind, originalAbsoluteUri: string) => string;
};
export type RewriteMultivariantResult = { text: string; entries: VariantEntry[]; error?: undefined } | { text?: undefined; entries?: undefined; error: ScanError };

const URI_ATTR = /URI="([^"]*)"/;

/**
 * One pass over a multivariant playlist: every variant, rendition and I-frame URI goes through makeVariantUri
 * (numbered in order of first appearance, the same origin URI keeps one n); session key/data URIs become absolute.
 */
export function rewriteMultivariant(text: string, opts: RewriteMultivariantOptions): RewriteMultivariantResult {
  const src = text.replace(/^\uFEFF/, '');
  if (!src.trimStart().startsWith('#EXTM3U')) return { error: { code: src.trim() ? 'NOT_HLS' : 'EMPTY', message: 'first line is not #EXTM3U', line: 1 } };
  if (/^#EXTINF/m.test(src)) return { error: { code: 'NOT_HLS', message: 'a media playlist where a multivariant playlist was expected', line: 1 } };
  const entries: VariantEntry[] = [];
  const byUri = new Map<string, VariantEntry>();
  const entryFor = (kind: TrackKind, rawUri: string, attrs: Record<string, string>): VariantEntry => {
    const uri = resolveUri(opts.originUrl, rawUri);
    const known = byUri.get(`${kind} ${uri}`);
    if (known) return known;
    const e: VariantEntry = { n: entries.length, kind, uri };
    if (attrs['GROUP-ID'] !== undefined) e.groupId = attrs['GROUP-ID'];
    if (attrs.LANGUAGE !== undefined) e.language = attrs.LANGUAGE;
    if (attrs.NAME !== undefined) e.name = attrs.NAME;
    if (attrs.BANDWIDTH !== undefined) e.bandwidth = Number.parseInt(attrs.BANDWIDTH, 10) || 0;
    if (attrs.RESOLUTION !== undefined) e.resolution = attrs.RESOLUTION;
    if (attrs.CODECS !== undefined) e.codecs = attrs.CODECS;
    if (kind === 'video' && attrs.AUDIO !== undefined) e.audioGroup = attrs.AUDIO;
    const channels = Number.parseInt(attrs.CHANNELS ?? '', 10);
    if (kind === 'audio' && channels > 0) e.channels = channels;
    entries.push(e);
    byUri.set(`${kind} ${uri}`, e);
    return e;
  };
  const out: string[] = [];
  let streamInf: Record<string, string> | undefined;
  for (const raw of src.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    if (line.charCodeAt(0) !== 35) {
      if (streamInf) {
        const e = entryFor('video', line, streamInf);
        out.push(opts.makeVariantUri(e.n, e.kind, e.uri));
        streamInf = undefined;
      } else out.push(resolveUri(opts.originUrl, line));
      continue;
    }
    if (line.startsWith('#EXT-X-STREAM-INF:')) {
      streamInf = parseAttributes(line.slice(18));
      out.push(line);
    } else if (line.startsWith('#EXT-X-MEDIA:') && line.includes('URI="')) {
      const a = parseAttributes(line.slice(13));
      const kind: TrackKind = a.TYPE === 'AUDIO' ? 'audio' : a.TYPE === 'SUBTITLES' ? 'subtitles' : 'video';
      const e = entryFor(kind, a.URI ?? '', a);
      out.push(line.replace(URI_ATTR, () => `URI="${opts.makeVariantUri(e.n, e.kind, e.uri)}"`));
    } else if (line.startsWith('#EXT-X-I-FRAME-STREAM-INF:')) {
      const a = parseAttributes(line.slice(26));
      const e = entryFor('iframe', a.URI ?? '', a);
      out.push(line.replace(URI_ATTR, () => `URI="${opts.makeVariantUri(e.n, e.kind, e.uri)}"`));
    } else if (line.startsWith('#EXT-X-SESSION-KEY:') || line.startsWith('#EXT-X-SESSION-DATA:')) {
      out.push(line.replace(URI_ATTR, (_m, u: string) => `URI="${resolveUri(opts.originUrl, u)}"`));
    } else if (line.startsWith('#EXT-X-CONTENT-STEERING:')) {
      out.push(`#EXT-X-CONTENT-STEERING:${mapQuoted(line.slice(24), 'SERVER-URI', (u) => resolveUri(opts.originUrl, u))}`);
    } else out.push(line);
  }
  return { text: out.join('\n') + '\n', entries };
}

// ---------------------------------------------------------------------------------------------------------------
// Stitching
//
// Sequence numbering (why it stays monotonic and deterministic across reloads of a sliding window):
// every output entry belongs to exactly one origin "slot" (a content media sequence number). Outside a break, slot s
// holds content segment s. Inside a stitched break [start, end), ad segment j, which starts t_j seconds into the ad
// timeline, belongs to slot start + floor(t_j / slotDuration), clamped to the break's last slot once the end is known.
// The slot rule only uses the origin's sequence numbers and the ad plan, never the durations of segments that slid
// out, so when the origin window drops slot s the output drops exactly the entries of slot s:
//   MEDIA-SEQUENCE = W + Σ_breaks (entries in slots < W − content slots < W)   (W = origin's first sequence)
//   DISCONTINUITY-SEQUENCE = origin's + Σ (our DISCONTINUITY tags in slots < W) − Σ (origin ones we absorbed, < W)
// The server keeps each avail as first found (start, slotDuration, ad plan) and the absorbed origin discontinuities
// reported in `observed`, so a session computes the same numbers on every reload and every instance.
// ---------------------------------------------------------------------------------------------------------------

export type AdSegment = { uri: string; duration: number };
/** Who an ad is, as its DATERANGE names it (X-AD-ID, X-CREATIVE-ID, X-UNIVERSAL-AD-ID, X-AD-SYSTEM). */
export type AdIdentity = { id: string; creativeId?: string; universalAdId?: string; adSystem?: string };

export type PlannedAd = AdIdentity & {
  /**
   * the DATERANGE's ad attributes as written (adIdAttributes), instead of their rendering from the ids: the server
   * puts a placeholder here and renders each viewer's own ids into the shared text
   */
  idAttributes?: string;
  duration: number;
  /** this track's segments of the ad; for subtitles may be empty (then emptySubtitleUri spans the ad) */
  segments: AdSegment[];
  mapUri?: string;
  /** slate filler: stitched like an ad but without an ad DATERANGE */
  slate?: boolean;
  /** the configuration's bumper (issue 31 item 3): stitched like an ad, its DATERANGE of class com.engine.bumper */
  bumper?: 'start' | 'end';
};
/** The longest id value written: ids come from the ad server. */
const MAX_ID_LENGTH = 256;

/** An ad server's id as an RFC 8216 quoted-string value: no double quote, no line break or other control character. */
export function quotedStringSafe(value: string): string {
  return value.replace(/["\u0000-\u001f\u007f]/g, '').slice(0, MAX_ID_LENGTH);
}

/** The ad attributes of an ad's EXT-X-DATERANGE: X-AD-ID always, the others when the VAST gave them. */
export function adIdAttributes(ad: AdIdentity): string {
  let out = `X-AD-ID="${quotedStringSafe(ad.id)}"`;
  if (ad.creativeId) out += `,X-CREATIVE-ID="${quotedStringSafe(ad.creativeId)}"`;
  if (ad.universalAdId) out += `,X-UNIVERSAL-AD-ID="${quotedStringSafe(ad.universalAdId)}"`;
  if (ad.adSystem) out += `,X-AD-SYSTEM="${quotedStringSafe(ad.adSystem)}"`;
  return out;
}

export type StitchAvail = {
  id: string;
  startSegmentIndex: number;
  endSegmentIndex?: number;
  duration: number;
  slotDuration: number;
  startPdtMs?: number;
  ads: PlannedAd[];
  /** origin media sequences in [start, end] that carried EXT-X-DISCONTINUITY (from previous `observed`) */
  absorbedDiscontinuities?: readonly number[];
  /**
   * VOD insertion (issue 19 point 2): the ads go before content segment startSegmentIndex (after the last one for a
   * post-roll), every content segment stays, and the content's later PDTs and DATERANGEs move by the ads' length.
   */
  insert?: boolean;
};
export type AdSegmentUriContext = { avail: StitchAvail; ad: PlannedAd; adIndex: number; segmentIndex: number; uri: string };
export type StitchOptions = {
  originUrl: string;
  avails: StitchAvail[];
  trackKind: TrackKind;
  makeAdSegmentUri?: (ctx: AdSegmentUriContext) => string;
  /** an empty WebVTT file: subtitle tracks span each ad with it when the ad has no subtitle segments */
  emptySubtitleUri?: string;
  /** never announce a smaller EXT-X-TARGETDURATION than this (lets the server pin it for the session) */
  targetDurationFloor?: number;
  /** the URI an EXT-X-RENDITION-REPORT of this origin playlist (absolute) takes; undefined keeps it absolute */
  renditionReportUri?: (absoluteUri: string) => string | undefined;
  /** the configuration's ad-operations fields: origin cues removed, segment URIs through CDN prefixes (issue 31) */
  policy?: PlaylistPolicy;
  /** live: what breaks wholly before the window, not in `avails`, add to the numbering (breaksBefore) */
  before?: BreaksBefore;
};
/**
 * What live breaks wholly before the window add to a stitched playlist (the numbering note above): their entries and
 * discontinuities to the sequence numbers, the origin discontinuities they absorbed, the target duration and version
 * their ads need. A long session's past breaks are summed once into this, not planned on every stitch (issue 28).
 */
export type BreaksBefore = { mediaSequence: number; discontinuitySequence: number; absorbed: readonly number[]; targetDuration: number; mapped: boolean };
export type StitchObservation = { availId: string; absorbedDiscontinuities: number[] };
export type StitchTail = { sequence: number; originSequence: number; ad: boolean };
export type StitchResult = {
  text: string; mediaSequence: number; discontinuitySequence: number; targetDuration: number; observed: StitchObservation[];
  /**
   * The last entry listed (LL-HLS directive mapping): its sequence number here, the origin sequence whose completion
   * lists the next entry, and whether it is an ad (no parts).
   */
  tail: StitchTail;
};

type Entry = { uri: string; duration: number; offset: number; slot: number; firstOfAd: boolean; ad: PlannedAd; adIndex: number };
type Break = { avail: StitchAvail; entries: Entry[]; bySlot: Map<number, Entry[]>; absorbed: Set<number> };

const CUE_TAGS = CUE_TAG_NAMES;
const asListed = (uri: string): string => uri;
const EPS = 1e-6;

function planBreak(avail: StitchAvail, opts: Pick<StitchOptions, 'trackKind' | 'emptySubtitleUri' | 'makeAdSegmentUri'>, target: number): Break {
  const entries: Entry[] = [];
  const slotDur = avail.slotDuration > 0 ? avail.slotDuration : target;
  const lastSlot = avail.insert ? avail.startSegmentIndex : avail.endSegmentIndex === undefined ? Infinity : avail.endSegmentIndex - 1;
  let t = 0;
  avail.ads.forEach((ad, adIndex) => {
    let segs = ad.segments;
    if (!segs.length && opts.trackKind === 'subtitles' && opts.emptySubtitleUri) {
      segs = [];
      for (let left = ad.duration; left > EPS; left -= target) segs.push({ uri: opts.emptySubtitleUri, duration: Math.min(target, left) });
    }
    segs.forEach((s, segmentIndex) => {
      const uri = opts.makeAdSegmentUri ? opts.makeAdSegmentUri({ avail, ad, adIndex, segmentIndex, uri: s.uri }) : s.uri;
      const slot = Math.min(avail.startSegmentIndex + Math.floor((t + EPS) / slotDur), lastSlot);
      entries.push({ uri, duration: s.duration, offset: t, slot, firstOfAd: segmentIndex === 0, ad, adIndex });
      t += s.duration;
    });
  });
  const bySlot = new Map<number, Entry[]>();
  for (const e of entries) {
    const list = bySlot.get(e.slot);
    if (list) list.push(e); else bySlot.set(e.slot, [e]);
  }
  return { avail, entries, bySlot, absorbed: new Set(avail.absorbedDiscontinuities ?? []) };
}

/**
 * breaksBefore's sum of `avails` (live replacements, each with its end), on a track whose origin target duration is
 * `target`. Exact where every break of the playlist not given here starts after the last end given here: a break's
 * end then never falls in another's (which would take its closing discontinuity), and the playlist's window starts
 * after that end. A break `before` adds to is summed the same: addBreaksBefore.
 */
export function breaksBefore(avails: readonly StitchAvail[], opts: Pick<StitchOptions, 'trackKind' | 'emptySubtitleUri'>, target: number): BreaksBefore {
  const breaks = avails.filter((a) => a.ads.length).map((a) => planBreak(a, opts, target)).filter((b) => b.entries.length);
  const inBreak = (s: number): boolean => breaks.some((b) => s >= b.avail.startSegmentIndex && s < (b.avail.endSegmentIndex ?? Infinity));
  const absorbed = new Set<number>();
  let mediaSequence = 0;
  let discontinuitySequence = 0;
  for (const b of breaks) {
    const end = b.avail.endSegmentIndex ?? b.avail.startSegmentIndex;
    mediaSequence += b.entries.length - (end - b.avail.startSegmentIndex);
    for (const e of b.entries) if (e.firstOfAd) discontinuitySequence++;
    if (!inBreak(end)) discontinuitySequence++;
    for (const s of b.absorbed) absorbed.add(s);
  }
  return {
    mediaSequence, discontinuitySequence, absorbed: [...absorbed].sort((x, y) => x - y),
    targetDuration: stitchedTargetDuration({ hasTargetDuration: false, targetDuration: 0, segments: [] }, breaks, 0),
    mapped: breaks.some((b) => b.avail.ads.some((a) => a.mapUri !== undefined)),
  };
}

/** Two sums of breaksBefore as one (the second's breaks after the first's). */
export function addBreaksBefore(a: BreaksBefore, b: BreaksBefore): BreaksBefore {
  return {
    mediaSequence: a.mediaSequence + b.mediaSequence, discontinuitySequence: a.discontinuitySequence + b.discontinuitySequence,
    absorbed: unionOfSorted(a.absorbed, b.absorbed),
    targetDuration: Math.max(a.targetDuration, b.targetDuration), mapped: a.mapped || b.mapped,
  };
}

/** The numbers of both lists, each once, in order: `a` itself where `b` adds none (callers tell "nothing new" so). */
export function unionOfSorted(a: readonly number[], b: readonly number[]): readonly number[] {
  if (b.every((x) => a.includes(x))) return a;
  return [...new Set([...a, ...b])].sort((x, y) => x - y);
}

const fmtDuration = (d: number): string => String(Math.round(d * 1000) / 1000);
const iso = (ms: number): string => new Date(ms).toISOString();

/** A DATERANGE's START-DATE and END-DATE moved by `ms` (content after inserted ads); unparseable dates stay as written. */
function shiftDates(value: string, ms: number): string {
  return value.replace(/\b(START-DATE|END-DATE)="([^"]*)"/g, (whole, name: string, date: string) => {
    const t = Date.parse(date);
    return Number.isNaN(t) ? whole : `${name}="${iso(t + ms)}"`;
  });
}

function keyLine(key: KeyInfo | undefined, base: string): string {
  if (!key) return '#EXT-X-KEY:METHOD=NONE';
  const parts = Object.entries(key.attrs).map(([k, v]) => {
    if (k === 'URI') return `URI="${resolveUri(base, v)}"`;
    return k === 'METHOD' || k === 'IV' ? `${k}=${v}` : `${k}="${v}"`;
  });
  return `#EXT-X-KEY:${parts.join(',')}`;
}

/** Replaces each planned avail's content segments by its ads, or inserts them (VOD); see the numbering note above. */
export function stitchMediaPlaylist(pl: MediaPlaylist, opts: StitchOptions): StitchResult {
  const base = opts.originUrl;
  const target0 = pl.targetDuration || 6;
  const planned = opts.avails.filter((a) => a.ads.length).map((a) => planBreak(a, opts, target0)).filter((b) => b.entries.length);
  // Insertions only in a VOD: a live window has no room to grow (live is always replacement).
  const inserts = isVodPlaylist(pl) ? planned.filter((b) => b.avail.insert).sort((x, y) => x.avail.startSegmentIndex - y.avail.startSegmentIndex) : [];
  const breaks = planned.filter((b) => !b.avail.insert);
  const segs = pl.segments;
  const W = segs[0]?.mediaSequence ?? pl.mediaSequence;
  const inBreak = (s: number): Break | undefined =>
    breaks.find((b) => s >= b.avail.startSegmentIndex && (b.avail.endSegmentIndex === undefined || s < b.avail.endSegmentIndex));
  const endsBreak = (s: number): boolean => breaks.some((b) => b.avail.endSegmentIndex === s) && !inBreak(s);
  const lastOrigin = segs[segs.length - 1]?.mediaSequence ?? W - 1;
  const lowLatency = !pl.endList && pl.header.some((t) => t.name === 'EXT-X-PART-INF')
    && pl.trailingLines.some((t) => t.name === 'EXT-X-PART' || t.name === 'EXT-X-PRELOAD-HINT');
  // While the playlist ends in a break, no part is listed at all: hls.js loads nothing past the last part it has
  // loaded (it takes the parts as the live edge), so content parts before the ads would hold the ads back.
  const hideParts = lowLatency && (inBreak(lastOrigin) !== undefined || inBreak(lastOrigin + 1) !== undefined);

  // Origin discontinuities inside a break region (and on its first content segment after) are absorbed.
  for (const seg of segs) {
    const b = breaks.find((x) => seg.mediaSequence >= x.avail.startSegmentIndex && (x.avail.endSegmentIndex === undefined || seg.mediaSequence <= x.avail.endSegmentIndex));
    if (b && seg.discontinuity) b.absorbed.add(seg.mediaSequence);
  }

  let mediaSequence = W + (opts.before?.mediaSequence ?? 0);
  let discontinuitySequence = pl.discontinuitySequence + (opts.before?.discontinuitySequence ?? 0);
  const absorbedGone = new Set<number>(opts.before?.absorbed); // one origin tag may sit on the edge of two back-to-back breaks
  for (const b of breaks) {
    const start = b.avail.startSegmentIndex;
    const end = b.avail.endSegmentIndex;
    if (start >= W) continue;
    const gone = b.entries.filter((e) => e.slot < W);
    const contentGone = Math.min(W, end ?? W) - start;
    mediaSequence += gone.length - contentGone;
    discontinuitySequence += gone.filter((e) => e.firstOfAd).length;
    if (end !== undefined && end < W && !inBreak(end)) discontinuitySequence += 1;
    for (const s of b.absorbed) if (s < W) absorbedGone.add(s);
  }
  discontinuitySequence -= absorbedGone.size;

  const targetDuration = stitchedTargetDuration(pl, [...breaks, ...inserts], Math.max(opts.targetDurationFloor ?? 0, opts.before?.targetDuration ?? 0));
  const needsMap = opts.before?.mapped === true || [...breaks, ...inserts].some((b) => b.avail.ads.some((a) => a.mapUri !== undefined));
  const out: string[] = ['#EXTM3U'];
  writeHeader(out, pl, { targetDuration, mediaSequence, discontinuitySequence, minVersion: needsMap ? 6 : 0 });

  let first = true;
  let lastKey: KeyInfo | undefined;
  let lastMap: MapInfo | string | undefined;
  let carried: RawTag[] = [];
  /** the origin sequence of the content segment written last (undefined after an ad): an implicit byte-range offset
   * continues from it, anything else gets an explicit offset */
  let previousContent: number | undefined;
  let outSequence = mediaSequence;
  let lastSlot = W - 1;
  // Explicit byte-range offsets: stitching may remove the sub-range an implicit offset would continue from.
  const ranges = new Map<MediaSegment, string>();
  const byteEnd = new Map<string, number>();
  for (const seg of segs) {
    if (seg.byteRange === undefined) continue;
    const [len = '0', off] = seg.byteRange.split('@');
    const o = off !== undefined ? Number(off) : (byteEnd.get(seg.uri) ?? 0);
    byteEnd.set(seg.uri, o + Number(len));
    ranges.set(seg, `${len}@${o}`);
  }
  /** ms the content is moved by the ads inserted before it (VOD insertion) */
  let shiftMs = 0;
  const removeCues = opts.policy?.removeCues === true;
  const contentUri = opts.policy?.contentUri ?? asListed;
  const adUri = opts.policy?.adUri ?? asListed;
  const pushTags = (tags: RawTag[], stripCues: boolean): void => {
    for (const t of tags) {
      if ((stripCues && CUE_TAGS.has(t.name)) || (removeCues && isCueTag(t))) continue;
      out.push(originLine(t, base, shiftMs, contentUri));
    }
  };

  const emitAd = (b: Break, e: Entry): void => {
    pushTags(carried, true);
    carried = [];
    if (e.firstOfAd) out.push('#EXT-X-DISCONTINUITY');
    if (lastKey) { out.push(keyLine(undefined, base)); lastKey = undefined; }
    if (e.ad.mapUri && lastMap !== e.ad.mapUri) { out.push(`#EXT-X-MAP:URI="${adUri(e.ad.mapUri)}"`); lastMap = e.ad.mapUri; }
    const startMs = b.avail.startPdtMs === undefined ? undefined : b.avail.startPdtMs + (b.avail.insert ? shiftMs : 0);
    if (startMs !== undefined && (e.firstOfAd || first)) out.push(`#EXT-X-PROGRAM-DATE-TIME:${iso(startMs + e.offset * 1000)}`);
    if (e.firstOfAd && !e.ad.slate && startMs !== undefined) {
      // A bumper is no ad: a class of its own, so that players and tools counting the ad class do not count it.
      const [cls, attributes] = e.ad.bumper ? ['com.engine.bumper', `X-BUMPER="${e.ad.bumper}"`] : ['com.engine.ad', e.ad.idAttributes ?? adIdAttributes(e.ad)];
      out.push(`#EXT-X-DATERANGE:ID="${b.avail.id}-${e.adIndex}",CLASS="${cls}",START-DATE="${iso(startMs + e.offset * 1000)}",DURATION=${fmtDuration(e.ad.duration)},${attributes}`);
    }
    out.push(`#EXTINF:${fmtDuration(e.duration)},`, adUri(e.uri));
    first = false;
    previousContent = undefined;
    outSequence++;
    lastSlot = e.slot;
  };

  /**
   * A content segment as the origin wrote it (its own lines, URIs made absolute); after ads it first gets back the
   * discontinuity, key, map and date that the ads interrupted.
   */
  const emitContent = (seg: MediaSegment, afterBreak: boolean, stripCues: boolean): void => {
    pushTags(carried, true);
    carried = [];
    if (afterBreak && !seg.discontinuity) out.push('#EXT-X-DISCONTINUITY');
    if (!seg.ownKey && seg.key !== lastKey) {
      if (seg.keyTags) for (const t of seg.keyTags) out.push(originLine(t, base, 0));
      else out.push(keyLine(undefined, base));
    }
    lastKey = seg.key;
    if (seg.map && !seg.ownMap && seg.map !== lastMap) {
      out.push(`#EXT-X-MAP:URI="${contentUri(resolveUri(base, seg.map.uri))}"${seg.map.byteRange ? `,BYTERANGE="${seg.map.byteRange}"` : ''}`);
    }
    if (seg.map) lastMap = seg.map;
    if (seg.programDateTime === undefined && seg.pdtMs !== undefined && (first || afterBreak || seg.discontinuity)) {
      out.push(`#EXT-X-PROGRAM-DATE-TIME:${iso(seg.pdtMs + shiftMs)}`);
    }
    const continuous = first || previousContent === seg.mediaSequence - 1;
    for (const t of seg.lines) {
      if ((stripCues && CUE_TAGS.has(t.name)) || (hideParts && t.name === 'EXT-X-PART') || (removeCues && isCueTag(t))) continue;
      if (t.name === 'EXT-X-BYTERANGE' && !continuous && t.value.indexOf('@') < 0) out.push(`#EXT-X-BYTERANGE:${ranges.get(seg) ?? t.value}`);
      else if (t.name === 'EXT-X-PROGRAM-DATE-TIME' && shiftMs && seg.pdtMs !== undefined) out.push(`#EXT-X-PROGRAM-DATE-TIME:${iso(seg.pdtMs + shiftMs)}`);
      else if (t.name === 'EXTINF') out.push(seg.extinf ? `#EXTINF:${seg.extinf}` : `#EXTINF:${fmtDuration(seg.duration)},${seg.title}`);
      else out.push(originLine(t, base, shiftMs, contentUri));
    }
    out.push(contentUri(resolveUri(base, seg.uri)));
    first = false;
    previousContent = seg.mediaSequence;
    outSequence++;
    lastSlot = seg.mediaSequence;
  };

  let nextInsert = 0;
  /** Emits the insertions placed before content sequence `s` (all the rest when undefined); true when any was. */
  const emitInserts = (s: number | undefined): boolean => {
    let any = false;
    for (; nextInsert < inserts.length; nextInsert++) {
      const b = inserts[nextInsert]!;
      if (s !== undefined && b.avail.startSegmentIndex > s) break;
      for (const e of b.entries) emitAd(b, e);
      // By the ads' own lengths, not this track's segment sums (AAC framing differs by track): every track moves alike.
      shiftMs += Math.round(b.avail.ads.reduce((t, a) => t + a.duration, 0) * 1000);
      any = true;
    }
    return any;
  };

  for (const seg of segs) {
    const s = seg.mediaSequence;
    if (inserts.length && emitInserts(s)) {
      emitContent(seg, true, true);
      continue;
    }
    const b = inBreak(s);
    if (!b) {
      const inRegion = breaks.some((x) => x.avail.endSegmentIndex === s);
      emitContent(seg, endsBreak(s), inRegion);
      continue;
    }
    carried.push(...seg.tags.filter((t) => t.name === 'EXT-X-DATERANGE'));
    for (const e of b.bySlot.get(s) ?? []) emitAd(b, e);
  }
  if (inserts.length) emitInserts(undefined); // post-rolls
  // LL-HLS: the ads of the segment in progress are whole files already, so they are listed now, one segment ahead of
  // the origin: a player that played content parts up to the break finds its first ad in time.
  const ahead = lowLatency ? inBreak(lastOrigin + 1) : undefined;
  const lookahead = ahead !== undefined && (ahead.bySlot.get(lastOrigin + 1)?.length ?? 0) > 0;
  if (ahead) for (const e of ahead.bySlot.get(lastOrigin + 1) ?? []) emitAd(ahead, e);
  const trailingStrip = breaks.some((b) => b.avail.endSegmentIndex === undefined || b.avail.endSegmentIndex >= lastOrigin);
  // The segment in progress (LL-HLS parts, preload hint) is never listed inside a break: parts of a segment the ads
  // replace must not play (ads are whole segments: issue 26 §2). The first content segment after a break is listed
  // with its parts in a low-latency playlist, the discontinuity, key and map the ads interrupted written before them.
  const resumes = lowLatency && endsBreak(lastOrigin + 1) && previousContent === undefined && !first;
  const partialHidden = !resumes && (inBreak(lastOrigin + 1) !== undefined || endsBreak(lastOrigin + 1) || (previousContent === undefined && !first));
  const linesBeforeTail = out.length;
  pushTags(carried, true);
  if (resumes) {
    const has = (name: string): boolean => pl.trailingLines.some((t) => t.name === name);
    const last = segs[segs.length - 1];
    if (!has('EXT-X-DISCONTINUITY')) out.push('#EXT-X-DISCONTINUITY');
    if (last?.keyTags && !has('EXT-X-KEY')) for (const t of last.keyTags) out.push(originLine(t, base, 0));
    if (last?.map && !has('EXT-X-MAP')) out.push(`#EXT-X-MAP:URI="${contentUri(resolveUri(base, last.map.uri))}"${last.map.byteRange ? `,BYTERANGE="${last.map.byteRange}"` : ''}`);
  }
  const tailOffset = outSequence - 1 - lastSlot;
  for (const t of pl.trailingLines) {
    if ((trailingStrip && CUE_TAGS.has(t.name)) || (removeCues && isCueTag(t))) continue;
    if (partialHidden && PARTIAL_SEGMENT_TAGS.has(t.name)) continue;
    if (t.name === 'EXT-X-RENDITION-REPORT') {
      const line = renditionReportLine(t, base, opts.renditionReportUri, tailOffset, partialHidden);
      if (line) out.push(line);
      continue;
    }
    out.push(originLine(t, base, shiftMs, contentUri));
  }
  // hls.js reads a low-latency playlist ending on a segment URI as if that segment were also the one in progress
  // ("media sequence mismatch" once the next one is listed): a line after it, here a comment, ends the segment.
  if (partialHidden && out.length === linesBeforeTail && !pl.endList && pl.header.some((t) => t.name === 'EXT-X-PART-INF')) {
    out.push('# the segment in progress belongs to an ad break: it is listed once whole');
  }
  if (pl.endList) out.push('#EXT-X-ENDLIST');

  return {
    text: out.join('\n') + '\n', mediaSequence, discontinuitySequence, targetDuration,
    // The last entry listed, its sequence here and the origin segment that must be whole before the next entry shows.
    tail: { sequence: outSequence - 1, originSequence: lookahead ? lastSlot - 1 : lastSlot, ad: previousContent === undefined && !first && !resumes },
    observed: [...breaks, ...inserts].map((b) => ({ availId: b.avail.id, absorbedDiscontinuities: [...b.absorbed].sort((x, y) => x - y) })),
  };
}

/** Tags of the segment in progress after the last whole one (LL-HLS §4.4.4): hidden with it inside a break. */
const PARTIAL_SEGMENT_TAGS = new Set(['EXT-X-PART', 'EXT-X-PRELOAD-HINT', 'EXT-X-DISCONTINUITY', 'EXT-X-KEY', 'EXT-X-MAP',
  'EXT-X-PROGRAM-DATE-TIME', 'EXT-X-GAP', 'EXT-X-BYTERANGE', 'EXT-X-BITRATE', 'EXTINF']);

/**
 * EXT-X-TARGETDURATION: the origin's whenever it is valid (every EXTINF rounded to the nearest integer fits,
 * RFC 8216 §4.3.3.1), else repaired by that same rule; raised, by that rule too, only for stitched ads that need more.
 */
export function stitchedTargetDuration(pl: Pick<MediaPlaylist, 'hasTargetDuration' | 'targetDuration' | 'segments'>, breaks: ReadonlyArray<{ entries: ReadonlyArray<{ duration: number }> }>, floor: number): number {
  let target = Math.max(pl.hasTargetDuration ? pl.targetDuration : 0, floor);
  for (const s of pl.segments) target = Math.max(target, Math.round(s.duration));
  for (const b of breaks) for (const e of b.entries) target = Math.max(target, Math.round(e.duration));
  return Math.max(target, 1);
}

type HeaderValues = { targetDuration: number; mediaSequence: number; discontinuitySequence: number; minVersion: number };

/**
 * The origin's playlist-level tags in the origin's order, with the numbers stitching changes put in place. Delta
 * updates are withdrawn (CAN-SKIP-UNTIL): the proxy needs the whole window to find and stitch breaks, so it never asks
 * the origin for a delta and cannot answer one (issue 26 §2, docs/ssai-ll-hls.md).
 */
function writeHeader(out: string[], pl: MediaPlaylist, h: HeaderValues): void {
  const seen = new Set<string>();
  const version = Math.max(pl.version ?? 0, h.minVersion);
  if (version > (pl.version ?? 0) && !pl.header.some((t) => t.name === 'EXT-X-VERSION')) out.push(`#EXT-X-VERSION:${version}`);
  if (!pl.hasTargetDuration) out.push(`#EXT-X-TARGETDURATION:${h.targetDuration}`);
  const sequences = (): void => {
    if (!seen.has('EXT-X-MEDIA-SEQUENCE') && (h.mediaSequence !== 0 || pl.header.some((t) => t.name === 'EXT-X-MEDIA-SEQUENCE'))) out.push(`#EXT-X-MEDIA-SEQUENCE:${h.mediaSequence}`);
    if (!seen.has('EXT-X-DISCONTINUITY-SEQUENCE') && (h.discontinuitySequence !== 0 || pl.header.some((t) => t.name === 'EXT-X-DISCONTINUITY-SEQUENCE'))) out.push(`#EXT-X-DISCONTINUITY-SEQUENCE:${h.discontinuitySequence}`);
    seen.add('EXT-X-MEDIA-SEQUENCE');
    seen.add('EXT-X-DISCONTINUITY-SEQUENCE');
  };
  for (const t of pl.header) {
    switch (t.name) {
      case 'EXT-X-ENDLIST': break; // written last
      case 'EXT-X-VERSION': out.push(version > (pl.version ?? 0) ? `#EXT-X-VERSION:${version}` : rawLine(t)); break;
      case 'EXT-X-TARGETDURATION': out.push(h.targetDuration === pl.targetDuration ? rawLine(t) : `#EXT-X-TARGETDURATION:${h.targetDuration}`); break;
      case 'EXT-X-MEDIA-SEQUENCE': case 'EXT-X-DISCONTINUITY-SEQUENCE': sequences(); break;
      case 'EXT-X-SERVER-CONTROL': out.push(`#EXT-X-SERVER-CONTROL:${serverControl(t.value, pl.targetDuration, h.targetDuration)}`); break;
      default: out.push(rawLine(t));
    }
  }
  sequences();
}

/** SERVER-CONTROL without delta updates, its HOLD-BACK kept at three target durations when the target was raised. */
function serverControl(value: string, originTarget: number, target: number): string {
  const kept: string[] = [];
  for (const attr of splitAttributeList(value)) {
    const name = attr.slice(0, attr.indexOf('='));
    if (name === 'CAN-SKIP-UNTIL' || name === 'CAN-SKIP-DATERANGES') continue;
    if (name === 'HOLD-BACK' && target > originTarget && Number(attr.slice(10)) < 3 * target) kept.push(`HOLD-BACK=${3 * target}`);
    else kept.push(attr);
  }
  return kept.join(',');
}

/** An attribute list split at the commas outside quotes, each `NAME=value` as written. */
function splitAttributeList(value: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 34) quoted = !quoted;
    else if (c === 44 && !quoted) { parts.push(value.slice(start, i)); start = i + 1; }
  }
  if (start < value.length) parts.push(value.slice(start));
  return parts;
}

const rawLine = (t: RawTag): string => t.text ?? (t.value || t.name === 'EXTINF' ? `#${t.name}:${t.value}` : `#${t.name}`);

/** A quoted attribute's value passed through f (the first `NAME="…"` at an attribute boundary); the rest as written. */
function mapQuoted(value: string, name: string, f: (v: string) => string): string {
  const needle = `${name}="`;
  let from = 0;
  for (;;) {
    const at = value.indexOf(needle, from);
    if (at < 0) return value;
    if (at === 0 || value.charCodeAt(at - 1) === 44) {
      const start = at + needle.length;
      const end = value.indexOf('"', start);
      return end < 0 ? value : value.slice(0, start) + f(value.slice(start, end)) + value.slice(end);
    }
    from = at + 1;
  }
}

/**
 * An origin tag line as written, but for the URIs it carries, made absolute against the origin (issue 26 §2), and
 * the dates of a DATERANGE moved by shiftMs (content after inserted ads). Media (init segments, parts, preload hints)
 * goes through `media` (a CDN prefix); keys and rendition reports do not (not segments).
 */
function originLine(t: RawTag, base: string, shiftMs: number, media: (absoluteUri: string) => string = asListed): string {
  switch (t.name) {
    case 'EXT-X-MAP': case 'EXT-X-PART': case 'EXT-X-PRELOAD-HINT':
      return `#${t.name}:${mapQuoted(t.value, 'URI', (u) => media(resolveUri(base, u)))}`;
    case 'EXT-X-KEY': case 'EXT-X-RENDITION-REPORT':
      return `#${t.name}:${mapQuoted(t.value, 'URI', (u) => resolveUri(base, u))}`;
    case 'EXT-X-DATERANGE': {
      if (!shiftMs && !t.value.includes('X-ASSET-')) return rawLine(t);
      const abs = (u: string): string => resolveUri(base, u);
      const v = shiftMs ? shiftDates(t.value, shiftMs) : t.value;
      return `#EXT-X-DATERANGE:${mapQuoted(mapQuoted(v, 'X-ASSET-URI', abs), 'X-ASSET-LIST', abs)}`;
    }
    default: return rawLine(t);
  }
}

/**
 * A rendition report names another media playlist of the origin. hls.js matches a report to a level by resolving its
 * URI against the playlist's own URL, so it names the session's own /v1/manifest route of that rendition; its
 * LAST-MSN moves by the ads stitched before this playlist's tail (the renditions of a session carry the same breaks).
 */
function renditionReportLine(t: RawTag, base: string, route: ((absoluteUri: string) => string | undefined) | undefined, offset: number, partHidden: boolean): string {
  let v = mapQuoted(t.value, 'URI', (u) => { const abs = resolveUri(base, u); return route?.(abs) ?? abs; });
  if (offset || partHidden) {
    v = splitAttributeList(v).filter((a) => !(partHidden && a.startsWith('LAST-PART=')))
      .map((a) => (a.startsWith('LAST-MSN=') ? `LAST-MSN=${Number(a.slice(9)) + offset}` : a)).join(',');
  }
  return `#EXT-X-RENDITION-REPORT:${v}`;
}
