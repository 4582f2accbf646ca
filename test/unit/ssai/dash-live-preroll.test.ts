// The pure rules of a live DASH viewer's pre-roll (ssai/serve/dash-live.ts): where it goes on the origin Period's
// timeline, how far behind the edge players start, which later breaks it leaves to its ads, how much content it replaces.
import { describe, expect, it } from 'vitest';
import { DOMParser } from '@xmldom/xmldom';
import { livePlace, livePrerollAvail, outsideLivePreroll, presentationDelayOf } from '../../../ssai/serve/dash-live.js';
import type { AvailRecord } from '../../../ssai/decide/avail-record.js';
import type { Avail } from '../../../ssai/parse/cue-finder.js';

/** a window of 2 s segments from 20 s to 36 s: the edge at 36 s */
const starts = Array.from({ length: 8 }, (_, k) => ({ start: 20 + 2 * k, duration: 2 }));
const cue = (at: number, duration: number): Avail => ({ id: `scte-${at}`, startSegmentIndex: 0, startVisible: true, duration, durationFromCue: true, open: false, kind: 'daterange', slotDuration: 2, contentOffsetSeconds: at });
const mpd = (attrs: string) => ({ mpd: new DOMParser().parseFromString(`<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" ${attrs}/>`, 'text/xml').documentElement! });

describe('live DASH pre-roll placement', () => {
  it('starts at the first segment at or after the edge less the delay, as long as the maximum', () => {
    expect(livePrerollAvail(starts, 36, 6, [], 30, 2)).toMatchObject({ avail: { id: 'preroll', contentOffsetSeconds: 30, duration: 30 } });
    // a delay between segment starts: the next start (the player plays less than a segment of content first)
    expect(livePrerollAvail(starts, 36, 5, [], 30, 2)).toMatchObject({ avail: { contentOffsetSeconds: 32 } });
    // a delay longer than the window: its first segment
    expect(livePrerollAvail(starts, 36, 60, [], 30, 2)).toMatchObject({ avail: { contentOffsetSeconds: 20 } });
  });

  it('ends where a later break of the window starts, and gives none to a viewer joining inside a break or just before one', () => {
    expect(livePrerollAvail(starts, 36, 6, [cue(40, 10)], 30, 2)).toMatchObject({ avail: { contentOffsetSeconds: 30, duration: 10 } });
    expect(livePrerollAvail(starts, 36, 6, [cue(26, 10)], 30, 2)).toEqual({ skip: 'the viewer joined during a break' });
    expect(livePrerollAvail(starts, 36, 6, [cue(30.5, 10)], 30, 2)).toEqual({ skip: 'a break starts where the viewer joined' });
    expect(livePrerollAvail([], 36, 6, [], 30, 2)).toBeUndefined();
  });

  it('keeps the origin\'s suggestedPresentationDelay, else announces three segments', () => {
    expect(presentationDelayOf(mpd('suggestedPresentationDelay="PT4.5S"'), 2)).toEqual({ seconds: 4.5, announce: false });
    expect(presentationDelayOf(mpd(''), 2)).toEqual({ seconds: 6, announce: true });
  });

  it('replaces as much content as its ads last, and leaves the breaks beginning under them to the ads', () => {
    const record = (ads: number[]): AvailRecord => ({
      id: 'preroll', index: 0, startSegmentIndex: 0, endSegmentIndex: 0, duration: 30, slotDuration: 2, contentOffsetSeconds: 30, skipped: [],
      ads: ads.map((duration, k) => ({ adId: `a${k}`, creativeId: `c${k}`, duration, creativeKey: `k${k}` })),
    });
    expect(livePlace(record([6.02, 4]))).toEqual({ at: 30, resume: 40.02 });
    expect(livePlace(record([]))).toBeUndefined();
    const later = [cue(34, 4), cue(40.02, 6), cue(50, 6)];
    expect(outsideLivePreroll(later, record([6.02, 4])).map((a) => a.id)).toEqual(['scte-40.02', 'scte-50']);
    expect(outsideLivePreroll(later, undefined)).toBe(later);
  });
});
