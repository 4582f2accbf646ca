import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { segmentUris, startSsai, variantUrls, type SsaiHarness } from './setup.js';

const EVENTS = ['impression', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete'];

describe('server-side beacons', () => {
  let h: SsaiHarness;

  beforeAll(async () => {
    h = await startSsai({ origin: { cueForm: 'scte35' } });
  });
  afterAll(async () => h?.close());

  it('fires every VAST event exactly once per session and ad, however often segments are fetched, retrying failures', async () => {
    const guid = await h.configure('/vast4');
    h.origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
    h.vast.beaconFailures = 2; // the first two beacons answer 500 and are retried
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8`);
    const videos = variantUrls(master.text).filter((u) => !master.text.includes(`URI="${u}"`));
    const audio = variantUrls(master.text).filter((u) => master.text.includes(`URI="${u}"`));
    const ads: string[] = [];
    for (const v of [...videos, ...audio]) ads.push(...segmentUris((await h.get(v)).text).filter((u) => u.startsWith('/v1/segment/')));
    expect(ads.length).toBeGreaterThan(5);
    const started = Date.now();
    for (let round = 0; round < 2; round++) {
      for (const ad of ads) {
        const r = await h.get(ad);
        expect(r.status).toBe(302);
      }
    }
    expect(Date.now() - started).toBeLessThan(5000); // redirects never wait for beacons
    await h.engine.ctx.services.ssai!.beacons.idle();
    for (const ad of ['a', 'b']) for (const event of EVENTS) expect(h.vast.beaconCount(event, ad), `${event} of ${ad}`).toBe(1);
    const tracking = JSON.parse((await h.get(`/v1/tracking/${guid}/${videos[0]!.split('/')[4]}`)).text);
    const events = tracking.avails[0].ads[0].trackingEvents.map((e: { event: string }) => e.event);
    expect(events).toEqual(EVENTS);
  });

  it('answers 404 for an ad segment the session does not have', async () => {
    const guid = await h.configure('/vast3');
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8`);
    const sid = variantUrls(master.text)[0]!.split('/')[4];
    const r = await h.get(`/v1/segment/${guid}/${sid}/nope/0/0/0`);
    expect(r.status).toBe(404);
    expect(JSON.parse(r.text).code).toBe('SEGMENT_NOT_FOUND');
  });

  it('starts an explicit session with player parameters and answers its manifest and tracking URLs', async () => {
    const guid = await h.configure('/vast3?g=[player_params.genre]');
    const r = await h.get(`/v1/session/${guid}/live/master.m3u8`, { method: 'POST', body: JSON.stringify({ adsParams: { genre: 'drama' } }), headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(200);
    const body = JSON.parse(r.text);
    expect(body.manifestUrl).toMatch(new RegExp(`^/v1/master/${guid}/live/master\\.m3u8\\?sessionId=`));
    expect(body.trackingUrl).toMatch(new RegExp(`^/v1/tracking/${guid}/`));
    h.origin.position = (CLIP_SEGMENTS * 3 + BREAK_START + 6) * SEGMENT_SECONDS;
    const master = await h.get(body.manifestUrl);
    const sid = body.trackingUrl.split('/').pop();
    const v = variantUrls(master.text).find((u) => !master.text.includes(`URI="${u}"`))!;
    expect(v).toContain(sid);
    await h.get(v);
    expect(h.vast.requests.at(-1)!.query.get('g')).toBe('drama');
    const tracking = JSON.parse((await h.get(body.trackingUrl)).text);
    expect(tracking.avails.length).toBeGreaterThan(0);
  });
});
