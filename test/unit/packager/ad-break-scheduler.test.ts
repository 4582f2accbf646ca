// The cues of a dynamic ad break as the engine writes them, read back by the proxy's own cue finder.
import { describe, expect, it } from 'vitest';
import { AdBreakScheduler } from '../../../packager/ads/ad-break-scheduler.js';
import { LiveMediaPlaylist } from '../../../packager/hls/live-playlist.js';
import { findAvails } from '../../../ssai/parse/cue-finder.js';
import { scanMediaPlaylist } from '../../../media/playlist-scanner.js';

const T0 = Date.parse('2026-03-02T08:00:00Z');

/** Appends `count` 2 s segments from `from` (index) to a playlist, with the scheduler's cues. */
function grow(playlist: LiveMediaPlaylist, ads: AdBreakScheduler, from: number, count: number): void {
  for (let i = from; i < from + count; i++) {
    const { tags, start } = ads.cuesFor(T0 + i * 2000);
    playlist.append({ uri: `s${i}.ts`, duration: 2, programDateTime: start, discontinuity: false, cues: tags });
  }
}

function avails(playlist: LiveMediaPlaylist, ads: AdBreakScheduler) {
  const scanned = scanMediaPlaylist(playlist.render(ads.ranges()));
  if (!scanned.playlist) throw new Error(`the playlist does not scan: ${scanned.error.message}`);
  return findAvails(scanned.playlist).avails;
}

describe('dynamic ad break cues', () => {
  it('starts the break on the first segment boundary at or after the requested start', () => {
    const ads = new AdBreakScheduler(2);
    expect(ads.schedule({ spliceEventId: 7, startsAt: T0 + 16_500, duration: 6 }, T0 + 4000)).toBe(T0 + 18_000);
    expect(ads.schedule({ spliceEventId: 8, startsAt: T0 + 40_000, duration: 6 }, T0 + 4000)).toBe(T0 + 40_000);
    expect(() => ads.schedule({ spliceEventId: 9, startsAt: T0 + 42_000, duration: 6 }, T0 + 4000)).toThrow(/overlaps/);
  });

  it('keeps a break 15–20 s after its request when a segment boundary falls there, even before startsAt', () => {
    const ads = new AdBreakScheduler(6);
    // boundaries every 6 s from T0: after startsAt (T0+19.5 s) comes T0+24 s, 24 s after the request; T0+18 s fits
    expect(ads.schedule({ spliceEventId: 1, startsAt: T0 + 19_500, duration: 6, requestedAt: T0 }, T0)).toBe(T0 + 18_000);
    // no boundary 15–20 s after the request (T0+102.5 s … T0+107.5 s; boundaries at T0+102 s, T0+108 s): the next one
    expect(ads.schedule({ spliceEventId: 2, startsAt: T0 + 103_000, duration: 6, requestedAt: T0 + 87_500 }, T0 + 96_000)).toBe(T0 + 108_000);
  });

  it('writes CUE-OUT:<d>, CUE-OUT-CONT with the SCTE-35, then CUE-IN after the duration', () => {
    const ads = new AdBreakScheduler(2);
    ads.schedule({ spliceEventId: 7, startsAt: T0 + 4000, duration: 5 }, T0);
    const tags = [0, 1, 2, 3, 4, 5].map((i) => ads.cuesFor(T0 + i * 2000).tags.map((t) => `${t.tagName}${t.value !== undefined ? `:${t.value}` : ''}`));
    expect(tags[0]).toEqual([]);
    expect(tags[1]).toEqual([]);
    expect(tags[2]).toEqual(['EXT-X-CUE-OUT:5']);
    expect(tags[3]?.[0]).toMatch(/^EXT-X-CUE-OUT-CONT:ElapsedTime=2\.000,Duration=5,SCTE35=\S+$/);
    expect(tags[4]?.[0]).toMatch(/^EXT-X-CUE-OUT-CONT:ElapsedTime=4\.000/);
    expect(tags[5]).toEqual(['EXT-X-CUE-IN']);
  });

  it('is one avail for the proxy: found ahead past the window, then at its segment, with the SCTE-35 event id both times', () => {
    const ads = new AdBreakScheduler(2);
    const playlist = new LiveMediaPlaylist(10, 2);
    grow(playlist, ads, 0, 3);
    ads.schedule({ spliceEventId: 4242, startsAt: T0 + 16_000, duration: 6 }, T0 + 6000);
    expect(playlist.render(ads.ranges())).toContain('#EXT-X-DATERANGE:ID="splice-4242",START-DATE="2026-03-02T08:00:16.000Z",PLANNED-DURATION=6,SCTE35-OUT=0x');
    // Announced ahead: the proxy places it past the window's end where it will start (segment 8 at T0+16 s), decided
    // early under the id it keeps when it starts.
    expect(avails(playlist, ads)).toMatchObject([{ id: 'scte-4242', startSegmentIndex: 8, startPdtMs: T0 + 16_000, duration: 6, open: true }]);
    grow(playlist, ads, 3, 7); // up to the segment at 18 s: the break started at 16 s
    const [avail, ...rest] = avails(playlist, ads);
    expect(rest).toEqual([]);
    expect(avail).toMatchObject({ id: 'scte-4242', startSegmentIndex: 8, duration: 6, startPdtMs: T0 + 16_000 });
  });
});
