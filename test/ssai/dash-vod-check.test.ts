// Issue 33: `engine check-playlist` on the proxy's own stitched DASH VOD MPD (the VMAP setup of dash-vod-vmap.test.ts:
// pre-roll, two mid-rolls, post-roll) finds no error, segment availability included (each Representation's init,
// first and last segment of every Period fetched, ad segments through the beacon route's redirect without firing
// a beacon); and an MPD whose segments are missing is reported.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPlaylistUrl } from '../../ssai/check/check-url.js';
import { DASH_MPD_PATH, DashOrigin } from '../../fixtures/dash-origin.js';
import { readTestMpd } from '../helpers/dash-mpd.js';
import { closeDashSuite, startDashSuite, type DashSuite } from './dash-setup.js';
import type { SsaiHarness } from './setup.js';

describe('engine check-playlist on a DASH MPD', () => {
  let s: DashSuite<DashOrigin> | undefined;
  let h: SsaiHarness;
  let origin: DashOrigin;
  let guid: string;

  beforeAll(async () => void ({ h, origin, guid } = s = await startDashSuite(DashOrigin.start(), '/vmap')), 240_000);
  afterAll(() => closeDashSuite(s));

  it('finds no error in the proxy\'s stitched MPD and fetches its segments without firing beacons', async () => {
    const res = await h.get(`/v1/dash/${guid}/${DASH_MPD_PATH}`);
    expect(res.status, res.text).toBe(200);
    const sid = /\/v1\/segment\/[^/]+\/([^/]+)\//.exec(res.text)![1]!;
    const url = `${h.engine.url}/v1/dash/${guid}/${DASH_MPD_PATH}?sessionId=${sid}`;
    origin.requests.clear();
    const segmentRequests = h.vast.requests.length;
    const impressions = h.vast.beaconCount('impression', 'a');
    const findings = await checkPlaylistUrl(url, 0);
    expect(findings.filter((f) => f.severity === 'error'), res.text).toEqual([]);
    expect(findings).toEqual([]);
    // the content's first and last segments of each content Period were asked of the origin, and the sidecar text
    expect(origin.requests.get('/vod/cmaf/chunk_0_00001.m4s')).toBe(1);
    expect(origin.requests.get('/vod/cmaf/chunk_0_00008.m4s')).toBe(1);
    expect(origin.requests.get('/vod/cmaf/init_2.m4s')).toBe(1);
    expect(origin.requests.get('/vod/cmaf/subs_en.vtt')).toBe(1);
    await h.engine.ctx.services.ssai!.beacons.idle();
    expect(h.vast.beaconCount('impression', 'a')).toBe(impressions);
    expect(h.vast.requests.length).toBe(segmentRequests);
  }, 60_000);

  it('writes a session id of XML\'s and templates\' special characters into the shared MPD text escaped', async () => {
    const url = `${h.engine.url}/v1/dash/${guid}/${DASH_MPD_PATH}?sessionId=${encodeURIComponent('v&"$1')}`;
    const res = await h.get(url);
    expect(res.status).toBe(200);
    const mpd = readTestMpd(res.text, url);
    const ad = mpd.periods.find((p) => p.id === 'vmap-preroll-0')!;
    expect(ad.sets[0]!.representations[0]!.segments[0]!.url).toBe(`${h.engine.url}/v1/segment/${guid}/v&%22$1/vmap-preroll/0/0/0.m4s`);
    expect((await checkPlaylistUrl(url, 0)).filter((f) => f.rule !== 'MPD_SEGMENT_UNAVAILABLE')).toEqual([]);
  }, 60_000);

  it('reports the segments an MPD names and its server does not have', async () => {
    const origin0 = `${origin.url}/vod/cmaf/manifest.mpd`;
    const text = await (await fetch(origin0)).text();
    origin.overrides.set('/vod/cmaf/renamed.mpd', text.replaceAll('chunk_$RepresentationID$', 'gone_$RepresentationID$'));
    const findings = await checkPlaylistUrl(`${origin.url}/vod/cmaf/renamed.mpd`, 0);
    const missing = findings.filter((f) => f.rule === 'MPD_SEGMENT_UNAVAILABLE');
    // first and last media segment of each of the three segmented Representations; init segments and the WebVTT are there
    expect(missing.map((f) => /the (\w+) media segment of Representation "(\w+)"/.exec(f.message)?.slice(1, 3))).toEqual([
      ['first', '0'], ['last', '0'], ['first', '1'], ['last', '1'], ['first', '2'], ['last', '2'],
    ]);
    expect(missing[0]!.message).toContain(`${origin.url}/vod/cmaf/gone_0_00001.m4s): HTTP 404`);
    expect(findings.length).toBe(missing.length);
    expect(await checkPlaylistUrl(origin0, 0)).toEqual([]);
  }, 60_000);
});
