// Rewrites origin playlists for a viewer session: multivariant URIs to our /v1/manifest routes, and media playlists
// with the session's ads stitched in (issue 5 "Stitching"). Pure functions: no I/O, no clock.
import type { KeyInfo, MapInfo, MediaPlaylist, MediaSegment, RawTag, ScanError } from './playlist-scanner.js';
import { isVodPlaylist, parseAttributes, resolveUri } from './playlist-scanner.js';

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
export type PlannedAd = {
  id: string;
  duration: number;
  /** this track's segments of the ad; for subtitles may be empty (then emptySubtitleUri spans the ad) */
  segments: AdSegment[];
  mapUri?: string;
  /** slate filler: stitched like an ad but without an ad DATERANGE */
  slate?: boolean;
};
export type StitchAvail = {
  id: string;
  startSegmentIndex: number;
  endSegmentIndex?: number;
  duration: number;
  slotDuration: number;
  startPdtMs?: number;
  ads: PlannedAd[];
  /** origin media sequences in [start, end] that carried EXT-X-DISCONTINUITY (from previous `observed`) */
  absorbedDiscontinuities?: number[];
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
};
export type StitchObservation = { availId: string; absorbedDiscontinuities: number[] };
export type StitchResult = { text: string; mediaSequence: number; discontinuitySequence: number; targetDuration: number; observed: StitchObservation[] };

type Entry = { uri: string; duration: number; offset: number; slot: number; firstOfAd: boolean; ad: PlannedAd; adIndex: number };
type Break = { avail: StitchAvail; entries: Entry[]; bySlot: Map<number, Entry[]>; absorbed: Set<number> };

const CUE_TAGS = new Set(['EXT-X-CUE-OUT', 'EXT-X-CUE-OUT-CONT', 'EXT-X-CUE-IN', 'EXT-OATCLS-SCTE35', 'EXT-X-SPLICEPOINT-SCTE35', 'EXT-X-SCTE35']);
const EPS = 1e-6;

function planBreak(avail: StitchAvail, opts: StitchOptions, target: number): Break {
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

  // Origin discontinuities inside a break region (and on its first content segment after) are absorbed.
  for (const seg of segs) {
    const b = breaks.find((x) => seg.mediaSequence >= x.avail.startSegmentIndex && (x.avail.endSegmentIndex === undefined || seg.mediaSequence <= x.avail.endSegmentIndex));
    if (b && seg.discontinuity) b.absorbed.add(seg.mediaSequence);
  }

  let mediaSequence = W;
  let discontinuitySequence = pl.discontinuitySequence;
  const absorbedGone = new Set<number>(); // one origin tag may sit on the edge of two back-to-back breaks
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

  let targetDuration = Math.max(target0, opts.targetDurationFloor ?? 0);
  for (const s of segs) targetDuration = Math.max(targetDuration, Math.ceil(s.duration - EPS));
  for (const b of [...breaks, ...inserts]) for (const e of b.entries) targetDuration = Math.max(targetDuration, Math.ceil(e.duration - EPS));

  const out: string[] = ['#EXTM3U'];
  const needsMap = [...breaks, ...inserts].some((b) => b.avail.ads.some((a) => a.mapUri !== undefined));
  out.push(`#EXT-X-VERSION:${Math.max(pl.version ?? 3, needsMap ? 6 : 3)}`);
  out.push(`#EXT-X-TARGETDURATION:${targetDuration}`);
  out.push(`#EXT-X-MEDIA-SEQUENCE:${mediaSequence}`);
  out.push(`#EXT-X-DISCONTINUITY-SEQUENCE:${discontinuitySequence}`);
  if (pl.playlistType) out.push(`#EXT-X-PLAYLIST-TYPE:${pl.playlistType}`);
  if (pl.independentSegments) out.push('#EXT-X-INDEPENDENT-SEGMENTS');
  for (const t of pl.headerTags) out.push(`#${t.name}${t.value ? `:${t.value}` : ''}`);

  let first = true;
  let lastKey: KeyInfo | undefined;
  let lastMap: MapInfo | string | undefined;
  let carried: RawTag[] = [];
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
  const pushTags = (tags: RawTag[], stripCues: boolean): void => {
    for (const t of tags) {
      if (stripCues && CUE_TAGS.has(t.name)) continue;
      const value = shiftMs && t.name === 'EXT-X-DATERANGE' ? shiftDates(t.value, shiftMs) : t.value;
      out.push(`#${t.name}${value ? `:${value}` : ''}`);
    }
  };

  const emitAd = (b: Break, e: Entry): void => {
    pushTags(carried, true);
    carried = [];
    if (e.firstOfAd) out.push('#EXT-X-DISCONTINUITY');
    if (lastKey) { out.push(keyLine(undefined, base)); lastKey = undefined; }
    if (e.ad.mapUri && lastMap !== e.ad.mapUri) { out.push(`#EXT-X-MAP:URI="${e.ad.mapUri}"`); lastMap = e.ad.mapUri; }
    const startMs = b.avail.startPdtMs === undefined ? undefined : b.avail.startPdtMs + (b.avail.insert ? shiftMs : 0);
    if (startMs !== undefined && (e.firstOfAd || first)) out.push(`#EXT-X-PROGRAM-DATE-TIME:${iso(startMs + e.offset * 1000)}`);
    if (e.firstOfAd && !e.ad.slate && startMs !== undefined) {
      out.push(`#EXT-X-DATERANGE:ID="${b.avail.id}-${e.adIndex}",CLASS="com.engine.ad",START-DATE="${iso(startMs + e.offset * 1000)}",DURATION=${fmtDuration(e.ad.duration)},X-AD-ID="${e.ad.id}"`);
    }
    out.push(`#EXTINF:${fmtDuration(e.duration)},`, e.uri);
    first = false;
  };

  const emitContent = (seg: MediaSegment, afterBreak: boolean, stripCues: boolean): void => {
    pushTags(carried, true);
    carried = [];
    pushTags(seg.tags, stripCues);
    if (seg.discontinuity || afterBreak) out.push('#EXT-X-DISCONTINUITY');
    if (seg.key !== lastKey) { out.push(keyLine(seg.key, base)); lastKey = seg.key; }
    if (seg.map && seg.map !== lastMap) {
      out.push(`#EXT-X-MAP:URI="${resolveUri(base, seg.map.uri)}"${seg.map.byteRange ? `,BYTERANGE="${seg.map.byteRange}"` : ''}`);
      lastMap = seg.map;
    }
    if (shiftMs && seg.pdtMs !== undefined) {
      if (seg.programDateTime !== undefined || first || afterBreak || seg.discontinuity) out.push(`#EXT-X-PROGRAM-DATE-TIME:${iso(seg.pdtMs + shiftMs)}`);
    } else if (seg.programDateTime !== undefined) out.push(`#EXT-X-PROGRAM-DATE-TIME:${seg.programDateTime}`);
    else if (seg.pdtMs !== undefined && (first || afterBreak || seg.discontinuity)) out.push(`#EXT-X-PROGRAM-DATE-TIME:${iso(seg.pdtMs)}`);
    if (seg.gap) out.push('#EXT-X-GAP');
    const range = ranges.get(seg);
    if (range) out.push(`#EXT-X-BYTERANGE:${range}`);
    out.push(`#EXTINF:${fmtDuration(seg.duration)},${seg.title}`, resolveUri(base, seg.uri));
    first = false;
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
  const trailingStrip = breaks.some((b) => b.avail.endSegmentIndex === undefined || b.avail.endSegmentIndex >= (segs[segs.length - 1]?.mediaSequence ?? 0));
  pushTags([...carried, ...pl.trailingTags], trailingStrip);
  if (pl.endList) out.push('#EXT-X-ENDLIST');

  return {
    text: out.join('\n') + '\n', mediaSequence, discontinuitySequence, targetDuration,
    observed: [...breaks, ...inserts].map((b) => ({ availId: b.avail.id, absorbedDiscontinuities: [...b.absorbed].sort((x, y) => x - y) })),
  };
}
