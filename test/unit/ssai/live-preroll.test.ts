// Issue 31 item 4, the pure rules: where a stitched session's live pre-roll goes in its first live playlist, how long
// it may be, when a viewer gets none, the cue breaks it leaves to their content, and the guided interstitial's text.
import { describe, expect, it } from 'vitest';
import { scanMediaPlaylist, type MediaPlaylist } from '../../../media/playlist-scanner.js';
import { DEFAULT_LIVE_PREROLL_SECONDS, livePrerollOf, outsidePreroll, prerollPlace } from '../../../ssai/decide/live-preroll.js';
import type { Avail } from '../../../ssai/parse/cue-finder.js';
import { prerollInterstitial, prerollStartMs, withPrerollInterstitial } from '../../../ssai/stitch/preroll-interstitial.js';

const EPOCH = Date.parse('2026-01-05T00:00:00Z');

/** A live window of `seconds`-long segments numbered from `first`, dated from EPOCH by their number. */
function window(first: number, count: number, seconds = 2, header: string[] = []): MediaPlaylist {
  const lines = ['#EXTM3U', `#EXT-X-TARGETDURATION:${Math.round(seconds)}`, ...header, `#EXT-X-MEDIA-SEQUENCE:${first}`];
  for (let k = first; k < first + count; k++) {
    lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(EPOCH + k * seconds * 1000).toISOString()}`, `#EXTINF:${seconds},`, `s${k}.ts`);
  }
  return scanMediaPlaylist(lines.join('\n') + '\n').playlist!;
}

const brk = (start: number, segments: number | undefined): Avail => ({
  id: `b${start}`, startSegmentIndex: start, startVisible: true, ...(segments !== undefined ? { endSegmentIndex: start + segments } : {}),
  duration: (segments ?? 3) * 2, durationFromCue: true, open: segments === undefined, kind: 'cue-out', slotDuration: 2, startPdtMs: EPOCH + start * 2000,
});

describe('where a live pre-roll goes', () => {
  it('starts at the segment three target durations from the end, as long as the maximum', () => {
    const place = prerollPlace(window(10, 6), [], 6);
    expect(place).toMatchObject({ avail: { id: 'preroll', startSegmentIndex: 13, duration: 6, slotDuration: 2, startPdtMs: EPOCH + 13 * 2000 } });
    expect(place && 'avail' in place ? place.avail.endSegmentIndex : 0).toBeUndefined();
  });

  it('counts segments a little short of the target as whole ones, and starts at the SERVER-CONTROL hold-back when given', () => {
    const short = window(10, 6, 5.97);
    expect(prerollPlace(short, [], 6)).toMatchObject({ avail: { startSegmentIndex: 13 } });
    expect(prerollPlace(window(10, 6, 2, ['#EXT-X-SERVER-CONTROL:HOLD-BACK=4.0']), [], 6)).toMatchObject({ avail: { startSegmentIndex: 14 } });
  });

  it('ends before a break of the window that starts after it, and gives none where too little room is left', () => {
    expect(prerollPlace(window(10, 6), [brk(17, 5)], 30)).toMatchObject({ avail: { startSegmentIndex: 13, duration: 8, endSegmentIndex: 17 } });
    expect(prerollPlace(window(10, 6), [brk(14, 5)], 30)).toMatchObject({ avail: { duration: 2, endSegmentIndex: 14 } });
  });

  it('gives none to a viewer joining during a break, closed or still open, but one after a break that ended', () => {
    expect(prerollPlace(window(10, 6), [brk(11, 5)], 6)).toEqual({ skip: 'the viewer joined during a break' });
    expect(prerollPlace(window(10, 6), [brk(12, undefined)], 6)).toEqual({ skip: 'the viewer joined during a break' });
    expect(prerollPlace(window(10, 6), [brk(13, 2)], 6)).toEqual({ skip: 'the viewer joined during a break' });
    expect(prerollPlace(window(10, 6), [brk(8, 5)], 6)).toMatchObject({ avail: { startSegmentIndex: 13 } });
  });

  it('waits for a window with segments', () => {
    expect(prerollPlace(scanMediaPlaylist('#EXTM3U\n#EXT-X-TARGETDURATION:2\n').playlist!, [], 6)).toBeUndefined();
  });

  it('takes the default maximum when the configuration gives only the ad server', () => {
    expect(livePrerollOf({})).toBeUndefined();
    expect(livePrerollOf({ livePrerollAdServer: 'https://ads.test/pre' })).toEqual({ adServer: 'https://ads.test/pre', maxSeconds: DEFAULT_LIVE_PREROLL_SECONDS });
    expect(livePrerollOf({ livePrerollAdServer: 'https://ads.test/pre', livePrerollMaxSeconds: 12 })?.maxSeconds).toBe(12);
  });
});

describe('cue breaks during a pre-roll', () => {
  const preroll = { startSegmentIndex: 13, endSegmentIndex: 16, startPdtMs: EPOCH + 13 * 2000, slotDuration: 2 };
  it('leaves a break beginning during the pre-roll to its content and keeps the others', () => {
    const kept = outsidePreroll([brk(12, 1), brk(14, 5), brk(16, 5)], preroll);
    expect(kept.map((a) => a.id)).toEqual(['b12', 'b16']);
  });
  it('compares by sequence where the break has no date, and keeps all after a pre-roll without ads', () => {
    const undated = { ...brk(15, 5), startPdtMs: undefined } as Avail;
    expect(outsidePreroll([undated], { ...preroll, startPdtMs: undefined })).toEqual([]);
    expect(outsidePreroll([brk(14, 5)], { ...preroll, endSegmentIndex: 13 })).toHaveLength(1);
  });
});

describe('the guided pre-roll interstitial', () => {
  it('keeps one START-DATE for a day of windows and writes no resume offset', () => {
    expect(prerollStartMs(EPOCH + 3_600_000)).toBe(EPOCH);
    expect(prerollStartMs(EPOCH + 86_399_000)).toBe(EPOCH);
    const line = prerollInterstitial('preroll', EPOCH, 'assets/preroll.json');
    expect(line).toBe('#EXT-X-DATERANGE:ID="preroll",CLASS="com.apple.hls.interstitial",START-DATE="2026-01-05T00:00:00.000Z",CUE="PRE,ONCE",X-ASSET-LIST="assets/preroll.json",X-RESTRICT="SKIP,JUMP"');
  });
  it('goes before the first segment\'s date and the other interstitials', () => {
    const text = '#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PROGRAM-DATE-TIME:2026-01-05T00:00:00.000Z\n#EXT-X-DATERANGE:ID="break-1"\n#EXTINF:2,\ns.ts\n';
    expect(withPrerollInterstitial(text, 'PRE').split('\n').slice(2, 4)).toEqual(['PRE', '#EXT-X-PROGRAM-DATE-TIME:2026-01-05T00:00:00.000Z']);
  });
});
