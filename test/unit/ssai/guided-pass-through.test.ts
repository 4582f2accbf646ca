// Issue 30 through generated playlists: a guided media playlist is the origin's as the proxy passes it on, with an
// interstitial per break and program date-times only where the origin dates nothing. Over TS and fMP4, byte ranges,
// keys, maps, LL-HLS parts, gaps and discontinuities, dated whole, partly or not at all: the same segments and
// numbers, the origin's own dates kept, every segment dated, and no check-playlist error the origin did not have.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanMediaPlaylist } from '../../../media/playlist-scanner.js';
import { checkMediaPlaylist } from '../../../ssai/check/playlist-checker.js';
import { findAvails } from '../../../ssai/parse/cue-finder.js';
import { relativeAssetListUri } from '../../../ssai/serve/asset-routes.js';
import { stitchMediaPlaylist } from '../../../ssai/stitch/manifest-rewriter.js';
import { guidedMediaPlaylist, hasOwnDates, INTERSTITIAL_CLASS, interstitialBreaks, segmentDates, VOD_DATE_BASE_MS } from '../../../ssai/stitch/interstitials.js';
import { playlistArb, writeGenerated } from './helpers/generated-playlist.js';
import { parsePlaylist, type ParsedPlaylist } from './helpers/parsed-playlist.js';

const ORIGIN = 'https://origin.example.com/live/ch1/720p/index.m3u8?token=eyJ.abc%2Fdef';
const NOW_MS = Date.UTC(2026, 10, 28, 9, 0, 0);

type Cue = { at: number; length: number; dates: 'own' | 'none' | 'partial' };
const cueArb: fc.Arbitrary<Cue> = fc.record({ at: fc.nat(16), length: fc.integer({ min: 1, max: 5 }), dates: fc.constantFrom<Cue['dates']>('own', 'none', 'partial') });

/** The generated playlist with a CUE-OUT before segment `at` and a CUE-IN `length` segments on, dated as asked. */
function withCue(text: string, cue: Cue): string {
  let lines = text.split('\n');
  if (cue.dates === 'none') lines = lines.filter((l) => !l.startsWith('#EXT-X-PROGRAM-DATE-TIME'));
  if (cue.dates === 'partial') lines.splice(lines.findIndex((l) => l.startsWith('#EXT-X-PROGRAM-DATE-TIME')), 1);
  const extinfs = lines.flatMap((l, i) => (l.startsWith('#EXTINF:') ? [i] : []));
  const start = extinfs[cue.at];
  if (start === undefined) return lines.join('\n');
  const breakSegments = extinfs.slice(cue.at, cue.at + cue.length).map((i) => Number(lines[i]!.slice(8).split(',')[0]));
  const end = extinfs[cue.at + cue.length];
  if (end !== undefined) lines.splice(end, 0, '#EXT-X-CUE-IN');
  lines.splice(start, 0, `#EXT-X-CUE-OUT:DURATION=${breakSegments.reduce((t, d) => t + d, 0).toFixed(3)}`);
  return lines.join('\n');
}

/** The parsed playlist without what a guided playlist adds: interstitial date ranges, and dates where asked. */
function withoutGuidedAdditions(p: ParsedPlaylist, dropDates: boolean): ParsedPlaylist {
  const ranges = (p.dateRanges as Array<Record<string, unknown>> | undefined)?.filter((r) => r.class !== INTERSTITIAL_CLASS);
  const out: ParsedPlaylist = { ...p, dateRanges: ranges ?? [] };
  if (dropDates) {
    delete out.dateTimeString;
    delete out.dateTimeObject;
    out.segments = p.segments.map(({ dateTimeString: _s, dateTimeObject: _o, programDateTime: _p, ...rest }) => rest);
  }
  return out;
}

function guided(text: string): { out: string; passThrough: string; breaks: number; everyDated: boolean } {
  const pl = scanMediaPlaylist(text).playlist!;
  const passThrough = stitchMediaPlaylist(pl, { originUrl: ORIGIN, avails: [], trackKind: 'video' }).text;
  const own = hasOwnDates(pl);
  const total = pl.segments.reduce((t, s) => t + s.duration, 0);
  const firstSegmentMs = own ? undefined : pl.endList ? VOD_DATE_BASE_MS : NOW_MS - total * 1000;
  const breaks = interstitialBreaks(pl, findAvails(pl).avails, segmentDates(pl, firstSegmentMs));
  const out = guidedMediaPlaylist(passThrough, pl, breaks, { assetListUri: relativeAssetListUri, ...(firstSegmentMs !== undefined ? { firstSegmentMs } : {}) });
  return { out, passThrough, breaks: breaks.length, everyDated: pl.segments.every((seg) => seg.pdtMs !== undefined) };
}

const errorCodes = (text: string): string[] => [...new Set(checkMediaPlaylist(text).filter((f) => f.severity === 'error').map((f) => f.rule))];

describe('guided playlists of generated origins (issue 30)', () => {
  it('keep the origin\'s segments, numbers and dates, date every segment, and add no check-playlist error', () => {
    fc.assert(fc.property(playlistArb, cueArb, (g, cue) => {
      const text = withCue(writeGenerated(g), cue);
      const { out, passThrough, breaks, everyDated } = guided(text);
      // the same meaning as the pass-through, the interstitials and added dates aside (the dates are checked below)
      expect(withoutGuidedAdditions(parsePlaylist(out), !everyDated)).toEqual(withoutGuidedAdditions(parsePlaylist(passThrough), !everyDated));
      // a break on a listed segment is announced
      if (cue.at < g.segments.length) expect(breaks).toBeGreaterThan(0);
      expect(out.split('\n').filter((l) => l.includes(INTERSTITIAL_CLASS))).toHaveLength(breaks);
      // every segment is dated, and a segment the origin dated keeps its date
      const before = scanMediaPlaylist(text).playlist!.segments;
      const after = scanMediaPlaylist(out).playlist!.segments;
      expect(after.map((s) => s.mediaSequence)).toEqual(before.map((s) => s.mediaSequence));
      after.forEach((s, i) => {
        expect(s.pdtMs, `segment ${i} dated`).toBeDefined();
        if (before[i]!.pdtMs !== undefined) expect(s.pdtMs, `segment ${i} keeps the origin's date`).toBe(before[i]!.pdtMs);
      });
      const added = errorCodes(out).filter((c) => !errorCodes(text).includes(c));
      expect(added, out).toEqual([]);
    }), { numRuns: 300 });
  });
});
