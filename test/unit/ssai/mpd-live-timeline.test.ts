// The Periods of a live viewer's MPD (liveTimeline in ssai/stitch/mpd-stitcher.ts): placed on the origin's timeline,
// whatever part of it the window holds.
import { describe, expect, it } from 'vitest';
import { readMpd, type MpdRead } from '../../../ssai/parse/mpd-reader.js';
import { liveTimeline, type DashAd, type DashBreak } from '../../../ssai/stitch/mpd-stitcher.js';

/** A live window of 2 s segments from `fromSec` to `toSec` of the Period. */
const windowOf = (fromSec: number, toSec: number): MpdRead => {
  const r = readMpd(`<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="2026-01-01T00:00:00Z"><Period id="0" start="PT0S">
<AdaptationSet contentType="video" mimeType="video/mp4"><Representation id="v" bandwidth="1"><SegmentTemplate timescale="1000" media="$Number$.m4s" startNumber="${fromSec / 2 + 1}">
<SegmentTimeline><S t="${fromSec * 1000}" d="2000" r="${(toSec - fromSec) / 2 - 1}"/></SegmentTimeline></SegmentTemplate></Representation></AdaptationSet></Period></MPD>`);
  if (!r.ok) throw new Error(r.message);
  return r.value;
};
const ad = (periodId: string, duration: number): DashAd => ({ periodId, duration, rendition: () => undefined });
const brk = (id: string, at: number, length: number, ads: number[]): DashBreak => ({ id, atSeconds: at, resumeSeconds: at + length, ads: ads.map((d, k) => ad(`${id}-${k}`, d)) });
const shape = (read: MpdRead, breaks: DashBreak[]) => liveTimeline(read, breaks).map((p) => [p.id, p.start, p.duration]);

describe('liveTimeline', () => {
  it('keeps a break ahead of the live edge out until the edge reaches it: the content Period stays open', () => {
    expect(shape(windowOf(0, 8), [brk('b', 10, 10, [6, 4])])).toEqual([['content-0', 0, undefined]]);
    expect(shape(windowOf(0, 10), [brk('b', 10, 10, [6, 4])])).toEqual([['content-0', 0, 10], ['b-0', 10, 6], ['b-1', 16, 4]]);
  });

  it('places every Period where it plays on the origin\'s timeline, and leaves out those the window has left', () => {
    const breaks = [brk('b', 10, 10, [6, 4]), brk('c', 40, 6, [6])];
    expect(shape(windowOf(8, 24), breaks)).toEqual([['content-0', 0, 10], ['b-0', 10, 6], ['b-1', 16, 4], ['content-b', 20, undefined]]);
    expect(shape(windowOf(18, 34), breaks)).toEqual([['b-1', 16, 4], ['content-b', 20, undefined]]);
    // (the content after c waits for its first segment)
    expect(shape(windowOf(30, 46), breaks)).toEqual([['content-b', 20, 20], ['c-0', 40, 6]]);
    expect(shape(windowOf(32, 48), breaks)).toEqual([['content-b', 20, 20], ['c-0', 40, 6], ['content-c', 46, undefined]]);
    expect(shape(windowOf(50, 66), breaks)).toEqual([['content-c', 46, undefined]]);
  });

  it('ends ads longer than their break where the content resumes, and plays the content through a break without ads', () => {
    expect(shape(windowOf(0, 30), [brk('b', 10, 8, [6, 4])])).toEqual([['content-0', 0, 10], ['b-0', 10, 6], ['b-1', 16, 2], ['content-b', 18, undefined]]);
    expect(shape(windowOf(0, 30), [brk('b', 10, 8, []), brk('c', 20, 4, [4])])).toEqual([['content-0', 0, 20], ['c-0', 20, 4], ['content-c', 24, undefined]]);
  });
});
