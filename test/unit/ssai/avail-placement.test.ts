import { describe, expect, it } from 'vitest';
import type { AvailRecord } from '../../../ssai/decide/avail-record.js';
import type { CreativePlan } from '../../../ssai/stitch/creative-plan.js';
import { placeAvail } from '../../../ssai/serve/avail-placement.js';
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
});
