// Single-pass HLS line scanner (RFC 8216 §4). Why our own: the proxy rewrites every playlist of every session on the
// hot path (issue 5 goals ≤ 30 µs for 6 segments); hls-parser/m3u8-parser build full object trees and re-serialize,
// which bench/ssai compares. Attribute lists are parsed only for the tags the proxy acts on; everything else is kept
// as raw lines so the rewrite passes unknown tags through untouched. Never throws: bad text gives { error }.

export type ScanErrorCode = 'NOT_HLS' | 'EMPTY' | 'BAD_TAG';
export type ScanError = { code: ScanErrorCode; message: string; line: number };

/** A tag line kept verbatim: `name` without '#', `value` after ':' ('' when absent), `text` the whole line as written. */
export type RawTag = { name: string; value: string; line: number; text?: string };

export type KeyInfo = { method: string; uri?: string; attrs: Record<string, string> };
export type MapInfo = { uri: string; byteRange?: string };

export type MediaSegment = {
  uri: string;
  duration: number;
  title: string;
  mediaSequence: number;
  discontinuitySequence: number;
  discontinuity: boolean;
  byteRange?: string;
  /** EXT-X-PROGRAM-DATE-TIME as written, when present on this segment */
  programDateTime?: string;
  /** epoch ms of this segment's start: from its own PDT or extrapolated from the last PDT */
  pdtMs?: number;
  /** effective key and map: shared objects, a new object each time the tag appears */
  key?: KeyInfo;
  map?: MapInfo;
  /** EXT-X-DATERANGE, cue tags and unknown tags that preceded this segment, in order */
  tags: RawTag[];
  /**
   * Every tag line of this segment as the origin wrote it, in order (EXTINF, BYTERANGE, KEY, MAP, PDT, PART, unknown
   * tags…): pass-through writes these back so durations keep their digits and unknown tags their place (issue 26 §3).
   */
  lines: RawTag[];
  /** the EXTINF value as written ("4.00008,title"); '' when its duration is not a valid number */
  extinf: string;
  /** the EXT-X-KEY tags in effect (one per KEYFORMAT), re-emitted after an ad; shared between segments */
  keyTags?: RawTag[];
  /** whether this segment's own lines carry EXT-X-KEY / EXT-X-MAP */
  ownKey: boolean;
  ownMap: boolean;
  gap: boolean;
  /** 1-based line of the URI */
  line: number;
};

export type MediaPlaylist = {
  kind: 'media';
  version?: number;
  targetDuration: number;
  mediaSequence: number;
  discontinuitySequence: number;
  playlistType?: string;
  endList: boolean;
  independentSegments: boolean;
  /** header-level tags we do not model (EXT-X-START, EXT-X-SERVER-CONTROL...) */
  headerTags: RawTag[];
  /** every playlist-level tag (VERSION, TARGETDURATION, MEDIA-SEQUENCE, SERVER-CONTROL, PART-INF…) in order, as written */
  header: RawTag[];
  segments: MediaSegment[];
  /** tags after the last segment (a trailing EXT-X-CUE-IN, DATERANGE...) */
  trailingTags: RawTag[];
  /** every tag line after the last segment, as written: LL-HLS parts and preload hints of the segment in progress,
   * rendition reports, and the cues and DATERANGEs of trailingTags */
  trailingLines: RawTag[];
  hasTargetDuration: boolean;
};

export type Variant = { uri: string; attrs: Record<string, string>; bandwidth: number; resolution?: string; line: number };
export type Rendition = { type: string; groupId: string; name: string; language?: string; uri?: string; attrs: Record<string, string>; line: number };
export type MultivariantPlaylist = {
  kind: 'multivariant';
  version?: number;
  variants: Variant[];
  renditions: Rendition[];
  iframeVariants: Variant[];
  sessionData: RawTag[];
  sessionKeys: RawTag[];
  otherTags: RawTag[];
};

export type ScanResult<P> = { playlist: P; error?: undefined } | { playlist?: undefined; error: ScanError };

/** Parses an attribute-list (RFC 8216 §4.2); quoted values lose their quotes. */
export function parseAttributes(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  const n = s.length;
  while (i < n) {
    const eq = s.indexOf('=', i);
    if (eq < 0) break;
    const name = s.slice(i, eq).trim();
    let value: string;
    if (s.charCodeAt(eq + 1) === 34) {
      const close = s.indexOf('"', eq + 2);
      const end = close < 0 ? n : close;
      value = s.slice(eq + 2, end);
      const comma = s.indexOf(',', end);
      i = comma < 0 ? n : comma + 1;
    } else {
      const comma = s.indexOf(',', eq + 1);
      const end = comma < 0 ? n : comma;
      value = s.slice(eq + 1, end).trim();
      i = end + 1;
    }
    if (name) out[name] = value;
  }
  return out;
}

/**
 * Resolves a playlist URI against its playlist's URL with string operations only: WHATWG `new URL()` would
 * re-encode characters and break signed CDN tokens (STYLE.md rule 13).
 */
export function resolveUri(base: string, ref: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(ref)) return ref;
  const scheme = /^([a-z][a-z0-9+.-]*:)\/\/[^/?#]*/i.exec(base);
  if (!scheme) return ref;
  if (ref.startsWith('//')) return scheme[1] + ref;
  const origin = scheme[0];
  if (ref.startsWith('/')) return origin + ref;
  const basePath = base.slice(origin.length).replace(/[?#].*$/, '');
  const dir = basePath.slice(0, basePath.lastIndexOf('/') + 1) || '/';
  if (ref.startsWith('?')) return origin + basePath + ref;
  const q = ref.search(/[?#]/);
  const refPath = q < 0 ? ref : ref.slice(0, q);
  const rest = q < 0 ? '' : ref.slice(q);
  if (!refPath.includes('./')) return origin + dir + ref;
  const parts = (dir + refPath).split('/');
  const stack: string[] = [];
  for (const p of parts) {
    if (p === '..') { if (stack.length > 1) stack.pop(); } else if (p !== '.') stack.push(p);
  }
  if (refPath.endsWith('/.') || refPath.endsWith('/..') || refPath === '.' || refPath === '..') stack.push('');
  return origin + stack.join('/') + rest;
}

type Line = { text: string; no: number };

// Bounds of the numbers the proxy computes with (issue 19 point 3): beyond them a value is garbage, read as 0 / absent,
// so that no later arithmetic loops, overflows a Date or loses integer precision.
const MAX_SEGMENT_SECONDS = 86_400;
const MAX_PDT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A decimal-integer (RFC 8216 §4.2) in [0, max]; 0 for anything else (negative, garbage, too large). */
function count(v: string, max: number): number {
  const t = v.trim();
  if (!/^\d{1,16}$/.test(t)) return 0;
  const n = Number(t);
  return n <= max ? n : 0;
}

/** Splits into trimmed non-empty lines; tolerates CRLF and a BOM. */
function* lines(text: string): Generator<Line> {
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let no = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    no++;
    const t = text.slice(start, end).trim();
    if (t) yield { text: t, no };
    start = end + 1;
  }
}

function splitTag(t: string, no: number): RawTag {
  const c = t.indexOf(':');
  return c < 0 ? { name: t.slice(1), value: '', line: no, text: t } : { name: t.slice(1, c), value: t.slice(c + 1), line: no, text: t };
}

/** Tells multivariant from media text without a full parse. */
export function playlistKind(text: string): 'media' | 'multivariant' | undefined {
  if (!text.trimStart().replace(/^\uFEFF/, '').startsWith('#EXTM3U')) return undefined;
  if (text.includes('#EXT-X-STREAM-INF') || text.includes('#EXT-X-I-FRAME-STREAM-INF')) return 'multivariant';
  return 'media';
}

function notHls(text: string): ScanError | undefined {
  if (!text.trim()) return { code: 'EMPTY', message: 'playlist body is empty', line: 0 };
  if (!text.trimStart().replace(/^\uFEFF/, '').startsWith('#EXTM3U')) return { code: 'NOT_HLS', message: 'first line is not #EXTM3U', line: 1 };
  return undefined;
}

/**
 * A VOD: a playlist that will not change, by EXT-X-ENDLIST or EXT-X-PLAYLIST-TYPE:VOD (RFC 8216 4.3.3.5), with or
 * without the other. The playlist says it, not the ad-insertion configuration's type (issue 26).
 */
export function isVodPlaylist(pl: Pick<MediaPlaylist, 'endList' | 'playlistType'>): boolean {
  return pl.endList || pl.playlistType === 'VOD';
}

/** Scans a media playlist. Cue tags, DATERANGE and unknown tags are attached to the next segment. */
export function scanMediaPlaylist(text: string): ScanResult<MediaPlaylist> {
  const bad = notHls(text);
  if (bad) return { error: bad };
  const pl: MediaPlaylist = {
    kind: 'media', targetDuration: 0, mediaSequence: 0, discontinuitySequence: 0, endList: false,
    independentSegments: false, headerTags: [], header: [], segments: [], trailingTags: [], trailingLines: [], hasTargetDuration: false,
  };
  let pending: RawTag[] = [];
  let segLines: RawTag[] = [];
  let extinf = '';
  let keyTags: RawTag[] | undefined;
  let ownKey = false;
  let ownMap = false;
  let duration = -1;
  let title = '';
  let byteRange: string | undefined;
  let discontinuity = false;
  let gap = false;
  let pdt: string | undefined;
  let lastPdtMs: number | undefined;
  let key: KeyInfo | undefined;
  let map: MapInfo | undefined;
  let seq = 0;
  let dseq = 0;
  let first = true;
  for (const { text: t, no } of lines(text)) {
    if (first) { first = false; continue; }
    if (t.charCodeAt(0) !== 35) {
      // URI line
      if (duration < 0) continue; // a URI without EXTINF is not a segment (the checker reports it)
      if (!pl.segments.length) { seq = pl.mediaSequence; dseq = pl.discontinuitySequence; }
      if (discontinuity) dseq++; // the tag counts for its own segment, as in hls.js (RFC 8216 §6.2.2)
      let pdtMs: number | undefined;
      if (pdt !== undefined) { const ms = Date.parse(pdt); if (ms >= 0 && ms <= MAX_PDT_MS) pdtMs = ms; }
      else if (lastPdtMs !== undefined && !discontinuity) pdtMs = lastPdtMs;
      const seg: MediaSegment = { uri: t, duration, title, mediaSequence: seq++, discontinuitySequence: dseq, discontinuity, tags: pending,
        lines: segLines, extinf, ownKey, ownMap, gap, line: no };
      if (keyTags) seg.keyTags = keyTags;
      if (byteRange !== undefined) seg.byteRange = byteRange;
      if (pdt !== undefined) seg.programDateTime = pdt;
      if (pdtMs !== undefined) seg.pdtMs = pdtMs;
      if (key) seg.key = key;
      if (map) seg.map = map;
      pl.segments.push(seg);
      lastPdtMs = pdtMs === undefined ? undefined : pdtMs + duration * 1000;
      pending = [];
      segLines = [];
      duration = -1; title = ''; byteRange = undefined; discontinuity = false; gap = false; pdt = undefined; ownKey = false; ownMap = false;
      continue;
    }
    if (!t.startsWith('#EXT')) continue; // comment
    const tag = splitTag(t, no);
    // Playlist-level tags go to pl.header, the rest to the lines of the segment they precede (one switch, no lookup).
    let lines = segLines;
    switch (tag.name) {
      case 'EXTINF': {
        const c = tag.value.indexOf(',');
        const written = c < 0 ? tag.value : tag.value.slice(0, c);
        const d = Number.parseFloat(written);
        duration = d >= 0 && d <= MAX_SEGMENT_SECONDS ? d : 0;
        // Kept as written only when it says exactly that number (garbage and out-of-range values are written anew).
        extinf = duration === d && Number(written) === d ? tag.value : '';
        title = c < 0 ? '' : tag.value.slice(c + 1);
        break;
      }
      case 'EXT-X-TARGETDURATION': pl.targetDuration = count(tag.value, MAX_SEGMENT_SECONDS); pl.hasTargetDuration = true; lines = pl.header; break;
      case 'EXT-X-MEDIA-SEQUENCE': pl.mediaSequence = count(tag.value, Number.MAX_SAFE_INTEGER / 2); lines = pl.header; break;
      case 'EXT-X-DISCONTINUITY-SEQUENCE': pl.discontinuitySequence = count(tag.value, Number.MAX_SAFE_INTEGER / 2); lines = pl.header; break;
      case 'EXT-X-PLAYLIST-TYPE': pl.playlistType = tag.value; lines = pl.header; break;
      case 'EXT-X-VERSION': pl.version = Number.parseInt(tag.value, 10) || undefined; lines = pl.header; break;
      case 'EXT-X-ENDLIST': pl.endList = true; lines = pl.header; break;
      case 'EXT-X-INDEPENDENT-SEGMENTS': pl.independentSegments = true; lines = pl.header; break;
      case 'EXT-X-DISCONTINUITY': discontinuity = true; break;
      case 'EXT-X-GAP': gap = true; break;
      case 'EXT-X-BYTERANGE': byteRange = tag.value; break;
      case 'EXT-X-PROGRAM-DATE-TIME': pdt = tag.value; break;
      case 'EXT-X-KEY': {
        const attrs = parseAttributes(tag.value);
        key = attrs.METHOD === 'NONE' ? undefined : { method: attrs.METHOD ?? 'NONE', attrs, ...(attrs.URI !== undefined ? { uri: attrs.URI } : {}) };
        // Several KEY tags in a row are one set (one per KEYFORMAT); a KEY after a segment starts a new set.
        keyTags = key === undefined ? undefined : ownKey && keyTags ? [...keyTags, tag] : [tag];
        ownKey = true;
        break;
      }
      case 'EXT-X-MAP': {
        ownMap = true;
        const attrs = parseAttributes(tag.value);
        map = attrs.URI === undefined ? undefined : { uri: attrs.URI, ...(attrs.BYTERANGE ? { byteRange: attrs.BYTERANGE } : {}) };
        break;
      }
      case 'EXT-X-START': case 'EXT-X-SERVER-CONTROL': case 'EXT-X-PART-INF': case 'EXT-X-I-FRAMES-ONLY':
        pl.headerTags.push(tag); lines = pl.header; break;
      case 'EXT-X-DEFINE': case 'EXT-X-ALLOW-CACHE': pending.push(tag); lines = pl.header; break;
      case 'EXT-X-STREAM-INF': case 'EXT-X-MEDIA': case 'EXT-X-I-FRAME-STREAM-INF':
        return { error: { code: 'NOT_HLS', message: `${tag.name} in a media playlist: this is a multivariant playlist`, line: no } };
      default: pending.push(tag);
    }
    lines.push(tag);
  }
  pl.trailingTags = pending;
  pl.trailingLines = segLines;
  return { playlist: pl };
}


/** Scans a multivariant playlist: variants, renditions, I-frame variants, session data/keys. */
export function scanMultivariantPlaylist(text: string): ScanResult<MultivariantPlaylist> {
  const bad = notHls(text);
  if (bad) return { error: bad };
  const pl: MultivariantPlaylist = { kind: 'multivariant', variants: [], renditions: [], iframeVariants: [], sessionData: [], sessionKeys: [], otherTags: [] };
  let streamInf: Record<string, string> | undefined;
  let first = true;
  for (const { text: t, no } of lines(text)) {
    if (first) { first = false; continue; }
    if (t.charCodeAt(0) !== 35) {
      if (streamInf) pl.variants.push(variantOf(streamInf, t, no));
      streamInf = undefined;
      continue;
    }
    if (!t.startsWith('#EXT')) continue;
    const tag = splitTag(t, no);
    switch (tag.name) {
      case 'EXT-X-STREAM-INF': streamInf = parseAttributes(tag.value); break;
      case 'EXT-X-I-FRAME-STREAM-INF': {
        const attrs = parseAttributes(tag.value);
        if (attrs.URI !== undefined) pl.iframeVariants.push(variantOf(attrs, attrs.URI, no));
        break;
      }
      case 'EXT-X-MEDIA': {
        const a = parseAttributes(tag.value);
        const r: Rendition = { type: a.TYPE ?? '', groupId: a['GROUP-ID'] ?? '', name: a.NAME ?? '', attrs: a, line: no };
        if (a.LANGUAGE !== undefined) r.language = a.LANGUAGE;
        if (a.URI !== undefined) r.uri = a.URI;
        pl.renditions.push(r);
        break;
      }
      case 'EXT-X-SESSION-DATA': pl.sessionData.push(tag); break;
      case 'EXT-X-SESSION-KEY': pl.sessionKeys.push(tag); break;
      case 'EXT-X-VERSION': pl.version = Number.parseInt(tag.value, 10) || undefined; break;
      case 'EXTINF': case 'EXT-X-TARGETDURATION':
        return { error: { code: 'NOT_HLS', message: `${tag.name} in a multivariant playlist: this is a media playlist`, line: no } };
      default: pl.otherTags.push(tag);
    }
  }
  return { playlist: pl };
}

function variantOf(attrs: Record<string, string>, uri: string, line: number): Variant {
  const v: Variant = { uri, attrs, bandwidth: Number.parseInt(attrs.BANDWIDTH ?? '0', 10) || 0, line };
  if (attrs.RESOLUTION !== undefined) v.resolution = attrs.RESOLUTION;
  return v;
}

/** Either kind, decided by the tags present. */
export function scanPlaylist(text: string): ScanResult<MediaPlaylist | MultivariantPlaylist> {
  return playlistKind(text) === 'multivariant' ? scanMultivariantPlaylist(text) : scanMediaPlaylist(text);
}
