// Issue 28: a live session track sums its breaks once they are long behind the window (sumPast), as the proxy's hot
// path does on each reload. Over a sliding window and generated breaks (apart, back to back, overlapping), every
// reload's playlist is the one stitched with every break, and once the window has left them all, all are summed.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stitchMediaPlaylist, type StitchAvail } from '../../../ssai/stitch/manifest-rewriter.js';
import { forgetPast, pastOf, sumPast, type PastHolder } from '../../../ssai/serve/past-breaks.js';
import { scanMediaPlaylist } from '../../../media/playlist-scanner.js';

const ORIGIN = 'https://origin.example.com/live/v0.m3u8';
const SLOT = 2;

/** The origin's live window of `length` 2 s segments from `first`, a discontinuity on each of `discs`. */
function windowText(first: number, length: number, discs: ReadonlySet<number>): string {
  const lines = ['#EXTM3U', '#EXT-X-TARGETDURATION:2', `#EXT-X-MEDIA-SEQUENCE:${first}`];
  for (let s = first; s < first + length; s++) {
    if (discs.has(s) && s !== first) lines.push('#EXT-X-DISCONTINUITY');
    lines.push('#EXTINF:2,', `seg${s}.ts`);
  }
  return lines.join('\n') + '\n';
}

type GenBreak = { gap: number; slots: number; ads: number[][]; mapped: boolean; absorbEnd: boolean };
const breakArb: fc.Arbitrary<GenBreak> = fc.record({
  gap: fc.integer({ min: -1, max: 5 }), slots: fc.integer({ min: 1, max: 5 }),
  ads: fc.array(fc.array(fc.constantFrom(1, 1.5, 2, 2.5, 4), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 }),
  mapped: fc.boolean(), absorbEnd: fc.boolean(),
});

function layOut(gen: GenBreak[], from: number): StitchAvail[] {
  let at = from;
  return gen.map((g, i) => {
    const start = Math.max(from, at + g.gap); // gap -1: overlapping the break before (two cues of one break, decided twice)
    const end = start + g.slots;
    at = end;
    return {
      id: `b${i}`, startSegmentIndex: start, endSegmentIndex: end, duration: g.slots * SLOT, slotDuration: SLOT,
      ads: g.ads.map((segs, k) => ({
        id: `b${i}-${k}`, duration: segs.reduce((t, d) => t + d, 0),
        segments: segs.map((d, s) => ({ uri: `https://ads.example.com/${i}/${k}/${s}.ts`, duration: d })),
        ...(g.mapped ? { mapUri: `https://ads.example.com/${i}/${k}/init.mp4` } : {}),
      })),
      ...(g.absorbEnd ? { absorbedDiscontinuities: [end] } : {}),
    };
  });
}

describe('a live track sums its long-gone breaks (issue 28)', () => {
  it('stitches every reload as with every break, and sums them all once the window has left them', () => {
    fc.assert(fc.property(fc.array(breakArb, { minLength: 1, maxLength: 6 }), fc.integer({ min: 3, max: 8 }), (gen, length) => {
      const breaks = layOut(gen, 110);
      const discs = new Set(breaks.flatMap((b) => b.absorbedDiscontinuities ?? []));
      const lastEnd = Math.max(...breaks.map((b) => b.endSegmentIndex!));
      const holder: PastHolder = {};
      const opts = { originUrl: ORIGIN, trackKind: 'video' as const, targetDurationFloor: 2 };
      for (let w = 100; w <= lastEnd + 6; w++) {
        const pl = scanMediaPlaylist(windowText(w, length, discs)).playlist!;
        // the breaks decided by now: those whose start the window has reached
        const decided = breaks.filter((b) => b.startSegmentIndex <= w + length - 1);
        let past = pastOf(holder, 0, 2);
        let placed = decided.filter((b) => !past?.ids.has(b.id));
        if (past && placed.some((b) => b.startSegmentIndex <= past!.lastEnd)) {
          forgetPast(holder, 0);
          past = undefined;
          placed = decided;
        }
        const gone = placed.filter((b) => b.endSegmentIndex! + 3 <= w);
        const text = stitchMediaPlaylist(pl, { ...opts, avails: placed, ...(past ? { before: past.before } : {}) }).text;
        expect(text).toBe(stitchMediaPlaylist(pl, { ...opts, avails: decided }).text);
        sumPast(holder, 0, 2, gone, placed.filter((b) => !gone.includes(b)), { trackKind: 'video' });
      }
      expect(pastOf(holder, 0, 2)?.ids.size).toBe(breaks.length);
    }), { numRuns: 300 });
  });

  it('keeps no sum for another target duration', () => {
    const holder: PastHolder = {};
    const [b] = layOut([{ gap: 0, slots: 2, ads: [[2, 2, 2]], mapped: false, absorbEnd: false }], 10);
    sumPast(holder, 1, 2, [b!], [], { trackKind: 'audio' });
    expect(pastOf(holder, 1, 2)?.before).toEqual({ mediaSequence: 1, discontinuitySequence: 2, absorbed: [], targetDuration: 2, mapped: false });
    expect(pastOf(holder, 1, 4)).toBeUndefined();
    expect(pastOf(holder, 0, 2)).toBeUndefined();
  });
});
