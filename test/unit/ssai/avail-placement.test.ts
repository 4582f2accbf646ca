import { describe, expect, it } from 'vitest';
import type { AvailRecord } from '../../../ssai/decide/avail-record.js';
import type { CreativePlan } from '../../../ssai/stitch/creative-plan.js';
import { placeAvail, placeAvailNow, PLAN_NOT_HERE } from '../../../ssai/serve/avail-placement.js';
import type { VariantEntry } from '../../../ssai/stitch/manifest-rewriter.js';
import { scanMediaPlaylist } from '../../../media/playlist-scanner.js';

const record: AvailRecord = { id: 'a', index: 0, startSegmentIndex: 1, endSegmentIndex: 3, duration: 4, slotDuration: 2, ads: [{ adId: 'x', creativeId: 'c', duration: 4, creativeKey: 'k', tracking: { impression: [], start: [], firstQuartile: [], midpoint: [], thirdQuartile: [], complete: [], error: [] } }], skipped: [] };
const video: VariantEntry = { n: 0, kind: 'video', uri: 'http://o/v.m3u8', bandwidth: 500_000, resolution: '640x360' };
const plan = (mapped: boolean): CreativePlan => ({ key: 'k', duration: 4, video: [{ bandwidth: 500_000, width: 640, height: 360, segments: [{ uri: `http://m/0.${mapped ? 'm4s' : 'ts'}`, duration: 2 }, { uri: `http://m/1.${mapped ? 'm4s' : 'ts'}`, duration: 2 }], ...(mapped ? { mapUri: 'http://m/init.mp4' } : {}) }] });
const ts = scanMediaPlaylist('#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\na.ts\n#EXTINF:2,\nb.ts\n#EXTINF:2,\nc.ts\n#EXTINF:2,\nd.ts\n').playlist!;
const fmp4 = scanMediaPlaylist('#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:2,\na.m4s\n#EXTINF:2,\nb.m4s\n#EXTINF:2,\nc.m4s\n#EXTINF:2,\nd.m4s\n').playlist!;

describe('placing an avail on a track', () => {
  it('places ads of the content container, and never an fMP4 ad in TS content or a TS ad in fMP4 content', async () => {
    const planner = (mapped: boolean) => ({ plan: async () => plan(mapped) });
    expect((await placeAvail(planner(false), record, ts, video, undefined))?.ads[0]?.segments).toHaveLength(2);
    expect((await placeAvail(planner(true), record, fmp4, video, undefined))?.ads[0]?.mapUri).toBe('http://m/init.mp4');
    expect(await placeAvail(planner(true), record, ts, video, undefined)).toBeUndefined();
    expect(await placeAvail(planner(false), record, fmp4, video, undefined)).toBeUndefined();
  });

  it('places without a wait what the plans held here allow, the same as placeAvail, and says when a plan is not held', async () => {
    const pdt = scanMediaPlaylist('#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:00.000Z\n#EXTINF:2,\na.ts\n#EXTINF:2,\nb.ts\n#EXTINF:2,\nc.ts\n#EXTINF:2,\nd.ts\n').playlist!;
    const timed: AvailRecord = { ...record, startPdtMs: Date.parse('2026-01-01T00:00:02.000Z') };
    for (const [r, pl] of [[record, ts], [timed, pdt]] as const) {
      const now = placeAvailNow(() => plan(false), r, pl, video, [2], 1);
      expect(now).not.toBe(PLAN_NOT_HERE);
      expect(now).toEqual(await placeAvail({ plan: async () => plan(false) }, r, pl, video, [2], 1));
    }
    // by date: the segment that starts at the break's date, whatever the stored index said
    expect((placeAvailNow(() => plan(false), { ...timed, startSegmentIndex: 0, endSegmentIndex: 2 }, pdt, video, undefined) as { startSegmentIndex: number }).startSegmentIndex).toBe(1);
    // a plan not held here: placeAvail (which asks the store) decides; one the store lost plays the content
    expect(placeAvailNow(() => undefined, record, ts, video, undefined)).toBe(PLAN_NOT_HERE);
    expect(await placeAvail({ plan: async () => undefined }, record, ts, video, undefined)).toBeUndefined();
    // no ads: nothing to place, plans or not
    expect(placeAvailNow(() => undefined, { ...record, ads: [] }, ts, video, undefined)).toBeUndefined();
  });
});
