// RFC 8216 conformance checks for media playlists, alone and across two successive reloads of a live window.
// Used by tests of the proxy and by `engine check-playlist URL` (issue 5 point 5).
import { parseAttributes, scanMediaPlaylist, type MediaPlaylist, type MediaSegment } from '../../media/playlist-scanner.js';

export type FindingRule =
  | 'NOT_HLS' | 'MISSING_EXTM3U' | 'MISSING_TARGETDURATION' | 'SEGMENT_OVER_TARGET' | 'EXTINF_WITHOUT_URI' | 'URI_WITHOUT_EXTINF'
  | 'DATERANGE_WITHOUT_PDT' | 'DATERANGE_INCOMPLETE' | 'NO_SEGMENTS' | 'TS_SEGMENT_UNDER_MAP' | 'SEGMENT_WITHOUT_AUDIO'
  | 'MEDIA_SEQUENCE_DECREASED' | 'MEDIA_SEQUENCE_MISMATCH' | 'DISCONTINUITY_SEQUENCE_DECREASED' | 'DISCONTINUITY_SEQUENCE_MISMATCH' | 'DISCONTINUITY_NOT_BUMPED'
  | 'TARGETDURATION_CHANGED' | 'ENDLIST_REMOVED' | 'ENDED_PLAYLIST_CHANGED' | 'EVENT_SEGMENTS_REMOVED' | 'SEGMENT_CHANGED'
  | 'HOLD_BACK_TOO_SMALL' | 'PART_HOLD_BACK_TOO_SMALL'
  | 'INTERSTITIAL_ID_DUPLICATE' | 'INTERSTITIAL_WITHOUT_ASSET' | 'INTERSTITIAL_BAD_DATE' | 'INTERSTITIAL_OUTSIDE_PLAYLIST';
export type Finding = { rule: FindingRule; severity: 'error' | 'warning'; message: string; line: number };

const err = (rule: FindingRule, message: string, line = 0): Finding => ({ rule, severity: 'error', message, line });

/** Checks one media playlist text on its own. */
export function checkMediaPlaylist(text: string): Finding[] {
  const findings: Finding[] = [];
  const first = text.replace(/^\uFEFF/, '').split('\n', 1)[0]?.trim();
  if (first !== '#EXTM3U') findings.push(err('MISSING_EXTM3U', 'the first line must be #EXTM3U (RFC 8216 §4.3.1.1)', 1));
  const { playlist, error } = scanMediaPlaylist(text);
  if (!playlist) {
    if (error.code !== 'NOT_HLS' || first === '#EXTM3U') findings.push(err('NOT_HLS', error.message, error.line));
    return findings;
  }
  // Line-level pass: the scanner skips what it cannot attach, so pairing of EXTINF and URI is checked here.
  let pendingInf = 0;
  text.split('\n').forEach((raw, i) => {
    const l = raw.trim();
    if (!l || (l.startsWith('#') && !l.startsWith('#EXT'))) return;
    if (l.startsWith('#EXTINF')) {
      if (pendingInf) findings.push(err('EXTINF_WITHOUT_URI', 'EXTINF is not followed by a URI line (RFC 8216 §4.3.2.1)', pendingInf));
      pendingInf = i + 1;
    } else if (!l.startsWith('#')) {
      if (!pendingInf) findings.push(err('URI_WITHOUT_EXTINF', 'a media segment URI must follow an EXTINF tag', i + 1));
      pendingInf = 0;
    }
  });
  if (pendingInf) findings.push(err('EXTINF_WITHOUT_URI', 'EXTINF is not followed by a URI line (RFC 8216 §4.3.2.1)', pendingInf));
  if (!playlist.hasTargetDuration) findings.push(err('MISSING_TARGETDURATION', 'EXT-X-TARGETDURATION is required (RFC 8216 §4.3.3.1)', 1));
  else {
    for (const s of playlist.segments) {
      if (Math.round(s.duration) > playlist.targetDuration) {
        findings.push(err('SEGMENT_OVER_TARGET', `segment of ${s.duration}s rounds above the target duration ${playlist.targetDuration}s (RFC 8216 §4.3.3.1)`, s.line - 1));
      }
    }
  }
  // LL-HLS (RFC 8216bis §4.4.3.8): players "fix" a short hold-back by holding back further (issue 26 §2).
  const control = playlist.headerTags.find((t) => t.name === 'EXT-X-SERVER-CONTROL');
  if (control && playlist.hasTargetDuration) {
    const a = parseAttributes(control.value);
    const holdBack = Number(a['HOLD-BACK']);
    if (a['HOLD-BACK'] !== undefined && holdBack < 3 * playlist.targetDuration) {
      findings.push(err('HOLD_BACK_TOO_SMALL', `HOLD-BACK=${a['HOLD-BACK']} is below three target durations (${3 * playlist.targetDuration}) (RFC 8216bis §4.4.3.8)`, control.line));
    }
    const partTarget = Number(parseAttributes(playlist.headerTags.find((t) => t.name === 'EXT-X-PART-INF')?.value ?? '')['PART-TARGET']);
    if (a['PART-HOLD-BACK'] !== undefined && partTarget > 0 && Number(a['PART-HOLD-BACK']) < 2 * partTarget) {
      findings.push(err('PART_HOLD_BACK_TOO_SMALL', `PART-HOLD-BACK=${a['PART-HOLD-BACK']} is below two part targets (${2 * partTarget}) (RFC 8216bis §4.4.3.8)`, control.line));
    }
  }
  for (const s of playlist.segments) {
    // HLS cannot unset a map: a TS segment after any EXT-X-MAP is parsed with that init segment (issue 19 point 1).
    if (s.map && /\.ts$/i.test(s.uri.split(/[?#]/, 1)[0] ?? '')) {
      findings.push(err('TS_SEGMENT_UNDER_MAP', `MPEG-TS segment ${s.uri} under EXT-X-MAP ${s.map.uri}: players parse it with that fMP4 init segment (RFC 8216 §4.3.2.5)`, s.line));
    }
  }
  if (!playlist.segments.length && !playlist.endList) findings.push({ rule: 'NO_SEGMENTS', severity: 'warning', message: 'a live playlist without segments', line: 0 });
  const hasPdt = playlist.segments.some((s) => s.programDateTime !== undefined);
  const interstitials: Array<{ a: Record<string, string>; line: number }> = [];
  for (const s of playlist.segments) {
    for (const t of s.tags) {
      if (t.name !== 'EXT-X-DATERANGE') continue;
      if (!hasPdt) findings.push(err('DATERANGE_WITHOUT_PDT', 'a playlist with EXT-X-DATERANGE must carry EXT-X-PROGRAM-DATE-TIME (RFC 8216 §4.3.2.7)', t.line));
      const a = parseAttributes(t.value);
      if (!a.ID || !a['START-DATE']) findings.push(err('DATERANGE_INCOMPLETE', 'EXT-X-DATERANGE needs ID and START-DATE', t.line));
      if (a.CLASS === INTERSTITIAL_CLASS) interstitials.push({ a, line: t.line });
    }
  }
  findings.push(...checkInterstitials(playlist, interstitials));
  return findings;
}

const INTERSTITIAL_CLASS = 'com.apple.hls.interstitial';

/**
 * HLS Interstitials (RFC 8216bis appendix D, issue 30): each id once, exactly one of X-ASSET-URI and X-ASSET-LIST, a
 * START-DATE that is a date; one outside the playlist's dates (before its first segment or after its end) is a
 * warning: a live break whose start slid out stays announced while the player may be in it, one ahead is announced early.
 */
function checkInterstitials(playlist: MediaPlaylist, found: Array<{ a: Record<string, string>; line: number }>): Finding[] {
  const out: Finding[] = [];
  const ids = new Set<string>();
  const dated = playlist.segments.filter((s) => s.pdtMs !== undefined);
  const first = dated[0]?.pdtMs;
  const lastSeg = dated[dated.length - 1];
  const end = lastSeg?.pdtMs === undefined ? undefined : lastSeg.pdtMs + lastSeg.duration * 1000;
  for (const { a, line } of found) {
    const id = a.ID ?? '';
    if (ids.has(id)) out.push(err('INTERSTITIAL_ID_DUPLICATE', `interstitial ID "${id}" appears twice: a player takes both for one break (RFC 8216bis §4.4.5.1)`, line));
    ids.add(id);
    const assets = (a['X-ASSET-URI'] !== undefined ? 1 : 0) + (a['X-ASSET-LIST'] !== undefined ? 1 : 0);
    if (assets !== 1) out.push(err('INTERSTITIAL_WITHOUT_ASSET', `interstitial "${id}" needs exactly one of X-ASSET-URI and X-ASSET-LIST (RFC 8216bis appendix D.2), has ${assets}`, line));
    const start = Date.parse(a['START-DATE'] ?? '');
    if (Number.isNaN(start)) { out.push(err('INTERSTITIAL_BAD_DATE', `interstitial "${id}" has no valid START-DATE`, line)); continue; }
    if (a.CUE && /\b(PRE|POST)\b/.test(a.CUE)) continue; // played before or after the whole presentation
    if (first !== undefined && end !== undefined && (start < first || start > end)) {
      out.push({ rule: 'INTERSTITIAL_OUTSIDE_PLAYLIST', severity: 'warning', message: `interstitial "${id}" starts at ${a['START-DATE']}, outside the playlist's dates`, line });
    }
  }
  return out;
}

const keyOf = (s: MediaSegment): string => `${s.uri} ${s.byteRange ?? ''}`;

/** Checks what RFC 8216 §6.2.2 requires between two successive reloads of the same media playlist. */
export function checkReload(prev: MediaPlaylist, cur: MediaPlaylist): Finding[] {
  const findings: Finding[] = [];
  if (cur.mediaSequence < prev.mediaSequence) {
    findings.push(err('MEDIA_SEQUENCE_DECREASED', `EXT-X-MEDIA-SEQUENCE went from ${prev.mediaSequence} to ${cur.mediaSequence}`));
  }
  if (cur.discontinuitySequence < prev.discontinuitySequence) {
    findings.push(err('DISCONTINUITY_SEQUENCE_DECREASED', `EXT-X-DISCONTINUITY-SEQUENCE went from ${prev.discontinuitySequence} to ${cur.discontinuitySequence}`));
  }
  const slidOut = prev.segments.filter((s) => s.mediaSequence < cur.mediaSequence);
  if (slidOut.length && slidOut.length < prev.segments.length) {
    const expected = prev.discontinuitySequence + slidOut.filter((s) => s.discontinuity).length;
    if (cur.discontinuitySequence !== expected) {
      findings.push(err('DISCONTINUITY_NOT_BUMPED', `EXT-X-DISCONTINUITY-SEQUENCE is ${cur.discontinuitySequence}, expected ${expected} after ${slidOut.length} segments slid out (RFC 8216 §6.2.2)`));
    }
  }
  if (cur.targetDuration !== prev.targetDuration) {
    findings.push(err('TARGETDURATION_CHANGED', `EXT-X-TARGETDURATION changed from ${prev.targetDuration} to ${cur.targetDuration} (RFC 8216 §6.2.1)`));
  }
  if (prev.endList && !cur.endList) findings.push(err('ENDLIST_REMOVED', 'EXT-X-ENDLIST disappeared on reload'));
  const prevBySeq = new Map(prev.segments.map((s) => [s.mediaSequence, s]));
  const prevByKey = new Map(prev.segments.map((s) => [keyOf(s), s]));
  for (const s of cur.segments) {
    const before = prevByKey.get(keyOf(s));
    if (before && before.mediaSequence !== s.mediaSequence) {
      findings.push(err('MEDIA_SEQUENCE_MISMATCH', `${s.uri} had media sequence ${before.mediaSequence}, now ${s.mediaSequence}`, s.line));
    }
    if (before && before.discontinuitySequence !== s.discontinuitySequence) {
      findings.push(err('DISCONTINUITY_SEQUENCE_MISMATCH', `${s.uri} had discontinuity sequence ${before.discontinuitySequence}, now ${s.discontinuitySequence}: a DISCONTINUITY slid out without a sequence bump, or the reverse`, s.line));
    }
    const sameSeq = prevBySeq.get(s.mediaSequence);
    if (sameSeq && keyOf(sameSeq) !== keyOf(s)) {
      findings.push(err('SEGMENT_CHANGED', `media sequence ${s.mediaSequence} was ${sameSeq.uri}, now ${s.uri}`, s.line));
    }
  }
  if (prev.endList && (cur.segments.length !== prev.segments.length || cur.mediaSequence !== prev.mediaSequence)) {
    findings.push(err('ENDED_PLAYLIST_CHANGED', 'a playlist with EXT-X-ENDLIST must not change'));
  }
  if (prev.playlistType === 'EVENT' && cur.mediaSequence !== prev.mediaSequence) {
    findings.push(err('EVENT_SEGMENTS_REMOVED', 'an EVENT playlist must not remove segments'));
  }
  return findings;
}

/** Both checks on texts: the current playlist alone, and against the previous reload when given. */
export function checkPlaylist(text: string, previousText?: string): Finding[] {
  const findings = checkMediaPlaylist(text);
  if (previousText === undefined) return findings;
  const prev = scanMediaPlaylist(previousText).playlist;
  const cur = scanMediaPlaylist(text).playlist;
  return prev && cur ? [...findings, ...checkReload(prev, cur)] : findings;
}
