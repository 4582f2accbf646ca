// Issue 28: a long live session's breaks wholly before the window are summed once (breaksBefore) instead of planned
// on every stitch. The sum must number the playlist exactly as the breaks themselves would: generated live playlists,
// generated past breaks (back to back or apart, ads of any segment count and length, fMP4 or TS, absorbed origin
// discontinuities shared on their edges) and a break after them that may reach into the window.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addBreaksBefore, breaksBefore, stitchMediaPlaylist, type PlannedAd, type StitchAvail, type TrackKind } from '../../../ssai/stitch/manifest-rewriter.js';
import { scanMediaPlaylist } from '../../../media/playlist-scanner.js';
import { playlistArb, writeGenerated } from './helpers/generated-playlist.js';

const ORIGIN = 'https://origin.example.com/live/ch1/720p/index.m3u8';
const EMPTY_VTT = '/v1/empty.vtt';

type GenBreak = { gap: number; slots: number; ads: Array<{ segments: number[]; mapped: boolean }>; absorbed: number[] };

const breakArb: fc.Arbitrary<GenBreak> = fc.record({
  gap: fc.integer({ min: 0, max: 4 }),
  slots: fc.integer({ min: 1, max: 6 }),
  ads: fc.array(fc.record({ segments: fc.array(fc.double({ min: 0.2, max: 12.4, noNaN: true }), { maxLength: 5 }), mapped: fc.boolean() }), { maxLength: 3 }),
  // offsets into the break's span, its end (the first content segment after) included
  absorbed: fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 3 }),
});

/** The generated breaks laid out from `from` on, each `gap` slots after the one before; slot length `slot`. */
function layOut(gen: GenBreak[], from: number, slot: number, id: string): StitchAvail[] {
  let at = from;
  return gen.map((g, i) => {
    const start = at + g.gap;
    const end = start + g.slots;
    at = end;
    const ads: PlannedAd[] = g.ads.map((a, k) => ({
      id: `${id}${i}-${k}`, duration: a.segments.reduce((t, d) => t + d, 0) || slot,
      segments: a.segments.map((d, s) => ({ uri: `https://ads.example.com/${id}${i}/${k}/${s}.${a.mapped ? 'm4s' : 'ts'}`, duration: d })),
      ...(a.mapped ? { mapUri: `https://ads.example.com/${id}${i}/${k}/init.mp4` } : {}),
    }));
    const absorbed = [...new Set(g.absorbed.filter((o) => o <= g.slots).map((o) => start + o))].sort((x, y) => x - y);
    return { id: `${id}${i}`, startSegmentIndex: start, endSegmentIndex: end, duration: g.slots * slot, slotDuration: slot, ads, ...(absorbed.length ? { absorbedDiscontinuities: absorbed } : {}) };
  });
}

const span = (gen: GenBreak[]): number => gen.reduce((t, g) => t + g.gap + g.slots, 0);

describe('breaks wholly before a live window, summed (issue 28)', () => {
  it('number a stitched playlist exactly as the breaks themselves', () => {
    fc.assert(fc.property(
      playlistArb.map((g) => ({ ...g, vod: false, mediaSequence: g.mediaSequence + 200 })),
      fc.array(breakArb, { minLength: 1, maxLength: 5 }), fc.array(breakArb, { maxLength: 2 }),
      fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 8 }), fc.constantFrom<TrackKind>('video', 'audio', 'subtitles'),
      (g, pastGen, laterGen, lead, slot, trackKind) => {
        const pl = scanMediaPlaylist(writeGenerated(g)).playlist!;
        const W = pl.segments[0]!.mediaSequence;
        // the past breaks end at least one slot before the window; the later ones start after the last past end and
        // may reach into the window or lie in it
        const past = layOut(pastGen, W - lead - span(pastGen), slot, 'p');
        const lastEnd = past[past.length - 1]!.endSegmentIndex!;
        const later = layOut(laterGen, lastEnd + 1, slot, 'l');
        const opts = { originUrl: ORIGIN, trackKind, emptySubtitleUri: EMPTY_VTT, targetDurationFloor: pl.targetDuration };
        const whole = stitchMediaPlaylist(pl, { ...opts, avails: [...past, ...later] });
        const summed = stitchMediaPlaylist(pl, { ...opts, avails: later, before: breaksBefore(past, opts, pl.targetDuration || 6) });
        expect(summed.text).toBe(whole.text);
        expect(summed.tail).toEqual(whole.tail);
        expect(summed.observed).toEqual(whole.observed.filter((o) => o.availId.startsWith('l')));
        // summed in two steps (a session's past grows a break at a time; a step ends before the next starts), the same
        const cut = past.findIndex((a, i) => i > 0 && a.startSegmentIndex > past[i - 1]!.endSegmentIndex!);
        if (cut < 0) return;
        const twoSteps = addBreaksBefore(breaksBefore(past.slice(0, cut), opts, pl.targetDuration || 6), breaksBefore(past.slice(cut), opts, pl.targetDuration || 6));
        expect(stitchMediaPlaylist(pl, { ...opts, avails: later, before: twoSteps }).text).toBe(whole.text);
      },
    ), { numRuns: 400 });
  });

  it('counts a break ending where the next starts once: one discontinuity, their shared absorbed tag once', () => {
    const pl = scanMediaPlaylist(['#EXTM3U', '#EXT-X-TARGETDURATION:2', '#EXT-X-MEDIA-SEQUENCE:100', '#EXTINF:2,', 'a.ts', '#EXTINF:2,', 'b.ts', ''].join('\n')).playlist!;
    const ad = (id: string): PlannedAd => ({ id, duration: 4, segments: [{ uri: `${id}-0.ts`, duration: 2 }, { uri: `${id}-1.ts`, duration: 2 }, { uri: `${id}-2.ts`, duration: 2 }] });
    const first: StitchAvail = { id: 'x', startSegmentIndex: 90, endSegmentIndex: 92, duration: 4, slotDuration: 2, ads: [ad('x')], absorbedDiscontinuities: [92] };
    const second: StitchAvail = { id: 'y', startSegmentIndex: 92, endSegmentIndex: 94, duration: 4, slotDuration: 2, ads: [ad('y')], absorbedDiscontinuities: [92] };
    const sum = breaksBefore([first, second], { trackKind: 'video' }, 2);
    // three ad segments in two slots, twice; a discontinuity before each ad and one after the second break only
    expect(sum).toEqual({ mediaSequence: 2, discontinuitySequence: 3, absorbed: [92], targetDuration: 2, mapped: false });
    const opts = { originUrl: ORIGIN, trackKind: 'video' as const };
    expect(stitchMediaPlaylist(pl, { ...opts, avails: [], before: sum }).text).toBe(stitchMediaPlaylist(pl, { ...opts, avails: [first, second] }).text);
    expect(stitchMediaPlaylist(pl, { ...opts, avails: [], before: sum }).text).toContain('#EXT-X-MEDIA-SEQUENCE:102\n#EXT-X-DISCONTINUITY-SEQUENCE:2');
  });
});
