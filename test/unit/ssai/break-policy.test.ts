// Issue 31 points 1 and 2, the pure rules: the personalization threshold, where a break starts against the viewer's
// live edge, avail suppression by mode and fill policy, and the rest of a break a PARTIAL_AVAIL viewer gets.
import { describe, expect, it } from 'vitest';
import type { AvailSuppression } from '../../../kernel/seams/adinserts.js';
import { scanMediaPlaylist, type MediaPlaylist } from '../../../media/playlist-scanner.js';
import { liveEdgeOf, personalised, restOfBreak, secondsBeforeWindowEnd, startAfterEdgeMs, suppressionOf } from '../../../ssai/decide/break-policy.js';
import type { Avail } from '../../../ssai/parse/cue-finder.js';

const EPOCH = Date.parse('2026-01-05T00:00:00Z');

/** A live window of 2 s segments numbered from `first`, dated from EPOCH by their number (or undated). */
function window(first: number, count: number, dated = true): MediaPlaylist {
  const lines = ['#EXTM3U', '#EXT-X-TARGETDURATION:2', `#EXT-X-MEDIA-SEQUENCE:${first}`];
  for (let k = first; k < first + count; k++) {
    if (dated) lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(EPOCH + k * 2000).toISOString()}`);
    lines.push('#EXTINF:2.000,', `s${k}.ts`);
  }
  return scanMediaPlaylist(lines.join('\n') + '\n').playlist!;
}

const brk = (start: number, duration: number, extra: Partial<Avail> = {}): Avail => ({
  id: `b${start}`, startSegmentIndex: start, startVisible: true, endSegmentIndex: start + duration / 2, duration, durationFromCue: true, open: false,
  kind: 'cue-out', slotDuration: 2, startPdtMs: EPOCH + start * 2000, ...extra,
});

const mode = (m: AvailSuppression['mode'], valueSeconds: number, fillPolicy: AvailSuppression['fillPolicy'] = 'FULL_AVAIL_ONLY'): AvailSuppression => ({ mode: m, valueSeconds, fillPolicy });

describe('personalization threshold', () => {
  it('leaves a 60 s break with 20 s of ads unpersonalised under a 30 s threshold, personalised under 45 s', () => {
    expect(personalised(60, 20, 30)).toBe(false);
    expect(personalised(60, 20, 45)).toBe(true);
  });
  it('personalises whatever is left without a threshold, and exactly at it', () => {
    expect(personalised(60, 0, undefined)).toBe(true);
    expect(personalised(60, 30, 30)).toBe(true);
    expect(personalised(60, 0, 0)).toBe(false);
  });
});

describe('where a break starts against the viewer\'s live edge', () => {
  it('counts by program date-time where the playlist has it', () => {
    const first = window(100, 10); // ends at segment 110, EPOCH + 220 s
    const edge = liveEdgeOf(first, 5_000);
    expect(edge).toEqual({ wallMs: 5_000, pdtMs: EPOCH + 220_000 });
    // a break at segment 105 started 10 s behind that edge, one at 112 starts 4 s after it
    const later = window(104, 10);
    expect(startAfterEdgeMs(brk(105, 10), later, 999_999, edge)).toBe(-10_000);
    expect(startAfterEdgeMs(brk(112, 10), later, 999_999, edge)).toBe(4_000);
  });

  it('counts back from the end of the window by the wall clock where it has no dates', () => {
    const pl = window(100, 10, false);
    const edge = liveEdgeOf(pl, 50_000);
    expect(edge).toEqual({ wallMs: 50_000 });
    const a = brk(106, 10, { startPdtMs: undefined });
    expect(secondsBeforeWindowEnd(a, pl)).toBe(8);
    expect(startAfterEdgeMs(a, pl, 50_000, edge)).toBe(-8_000);
    // read 6 s later, the same window moved by three segments
    expect(startAfterEdgeMs(a, window(103, 10, false), 56_000, edge)).toBe(-8_000);
    // a break announced ahead: two slots past the window's end
    expect(secondsBeforeWindowEnd(brk(112, 10), pl)).toBe(-4);
    // a break whose start slid out of the window: its slots before the window count
    expect(secondsBeforeWindowEnd(brk(98, 10), pl)).toBe(24);
  });
});

describe('avail suppression', () => {
  it('fills every break when OFF or absent', () => {
    expect(suppressionOf(undefined, -5_000, 10, false)).toEqual({ fill: 'all' });
    expect(suppressionOf(mode('OFF', 0), -5_000, 10, false)).toEqual({ fill: 'all' });
  });

  it('BEHIND_LIVE_EDGE: no break on or behind the edge minus the value, whole breaks after; the fill policy does not apply', () => {
    for (const policy of ['FULL_AVAIL_ONLY', 'PARTIAL_AVAIL'] as const) {
      expect(suppressionOf(mode('BEHIND_LIVE_EDGE', 0, policy), -4_000, 10, false).fill).toBe('none'); // joined mid-break
      expect(suppressionOf(mode('BEHIND_LIVE_EDGE', 0, policy), 0, 10, false).fill).toBe('none'); // on the edge
      expect(suppressionOf(mode('BEHIND_LIVE_EDGE', 0, policy), 2_000, 10, false).fill).toBe('all');
      expect(suppressionOf(mode('BEHIND_LIVE_EDGE', 30, policy), -20_000, 10, false).fill).toBe('all'); // within 30 s behind
      expect(suppressionOf(mode('BEHIND_LIVE_EDGE', 30, policy), -30_000, 10, false).fill).toBe('none');
    }
  });

  it('AFTER_LIVE_EDGE with FULL_AVAIL_ONLY: no break starting before the edge plus the value, whole or not', () => {
    const s = mode('AFTER_LIVE_EDGE', 0);
    expect(suppressionOf(s, -4_000, 10, false).fill).toBe('none'); // joined mid-break
    expect(suppressionOf(s, -60_000, 10, false).fill).toBe('none'); // over before the edge
    expect(suppressionOf(s, 0, 10, false).fill).toBe('all');
    expect(suppressionOf(mode('AFTER_LIVE_EDGE', 20), 10_000, 30, false).fill).toBe('none'); // within the value
    expect(suppressionOf(mode('AFTER_LIVE_EDGE', 20), 20_000, 30, false).fill).toBe('all');
  });

  it('AFTER_LIVE_EDGE with PARTIAL_AVAIL: the rest of a break still running at the edge plus the value', () => {
    const s = mode('AFTER_LIVE_EDGE', 0, 'PARTIAL_AVAIL');
    expect(suppressionOf(s, -4_000, 10, false)).toEqual({ fill: 'rest', skipSeconds: 4 });
    expect(suppressionOf(s, -12_000, 10, false).fill).toBe('none'); // over before the edge
    expect(suppressionOf(s, -12_000, 10, true)).toEqual({ fill: 'rest', skipSeconds: 12 }); // open: runs on
    expect(suppressionOf(mode('AFTER_LIVE_EDGE', 20, 'PARTIAL_AVAIL'), 10_000, 30, false)).toEqual({ fill: 'rest', skipSeconds: 10 });
  });
});

describe('the rest of a break', () => {
  it('starts on the first segment at or after the moment, dated by the window, with what is left', () => {
    const pl = window(100, 10);
    const rest = restOfBreak(brk(104, 10), 3, pl, 2)!;
    expect(rest).toMatchObject({ id: 'b104', startSegmentIndex: 106, duration: 6, startPdtMs: EPOCH + 106 * 2000, endSegmentIndex: 109, startVisible: false });
    expect(restOfBreak(brk(104, 10), 4, pl, 2)!.startSegmentIndex).toBe(106);
    expect(restOfBreak(brk(104, 10), 0, pl, 2)!.startSegmentIndex).toBe(104);
  });
  it('is nothing when the break is over by then', () => {
    expect(restOfBreak(brk(104, 10), 10, window(100, 10), 2)).toBeUndefined();
  });
});
