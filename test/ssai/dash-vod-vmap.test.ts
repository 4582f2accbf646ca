// Issue 33: a VOD DASH origin (the engine's own encode) through the proxy with a VMAP ad server: each viewer's MPD
// has the pre-, mid- and post-rolls as Periods mirroring the content's AdaptationSets, the content kept whole and split
// at the breaks with its media time, the ad Periods decodable, beacons fired once, the tracking JSON listing the breaks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASH_CLIP_SECONDS, DASH_MPD_PATH, DashOrigin } from '../../fixtures/dash-origin.js';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { readTestMpd, undecodedPeriods, type TestMpd, type TestPeriod } from '../helpers/dash-mpd.js';
import { closeDashSuite, startDashSuite, type DashSuite } from './dash-setup.js';
import type { SsaiHarness } from './setup.js';

const isAd = (p: TestPeriod): boolean => p.id.startsWith('vmap-');
const sidOf = (text: string): string => /\/v1\/segment\/[^/]+\/([^/]+)\//.exec(text)![1]!;

describe('DASH VOD with VMAP breaks through the proxy', () => {
  let h: SsaiHarness;
  let origin: DashOrigin;
  let guid: string;
  let mpdUrl: string;
  let first: { text: string; mpd: TestMpd };

  let s: DashSuite<DashOrigin> | undefined;

  beforeAll(async () => {
    // the fixture's VMAP: pre-roll (ad a), mid-roll at 00:00:08 (a), one at 75 % (a, b), post-roll (b)
    ({ h, origin, guid } = s = await startDashSuite(DashOrigin.start(), '/vmap'));
    mpdUrl = `${h.engine.url}/v1/dash/${guid}/${DASH_MPD_PATH}`;
    const res = await h.get(mpdUrl);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/dash+xml');
    first = { text: res.text, mpd: readTestMpd(res.text, mpdUrl) };
  }, 240_000);

  afterAll(() => closeDashSuite(s));

  it('inserts every VMAP break as ad Periods and keeps the whole content, split at the breaks', () => {
    const { mpd } = first;
    expect(mpd.type).toBe('static');
    expect(mpd.periods.map((p) => p.id)).toEqual(['vmap-preroll-0', 'content-0', 'vmap-midroll-1-0', 'content-1', 'vmap-midroll-2-0', 'vmap-midroll-2-1', 'content-2', 'vmap-postroll-0']);
    // Periods follow each other without a gap; the presentation lasts as long as the content and the ads
    let at = 0;
    for (const p of mpd.periods) {
      expect(p.start, p.id).toBeCloseTo(at, 3);
      at += p.duration;
    }
    const ads = mpd.periods.filter(isAd).map((p) => p.duration);
    expect(ads).toEqual([AD_SECONDS.a, AD_SECONDS.a, AD_SECONDS.a, AD_SECONDS.b, AD_SECONDS.b]);
    expect(mpd.duration).toBeCloseTo(DASH_CLIP_SECONDS + ads.reduce((s, d) => s + d, 0), 3);
    // each content Period starts where the content left: its presentationTimeOffset is the media time of its start
    let content = 0;
    for (const p of mpd.periods.filter((x) => !isAd(x))) {
      expect(p.baseUrl).toBe(`${origin.url}/vod/cmaf/`);
      for (const set of p.sets) for (const rep of set.representations) {
        if (!rep.segments.length) continue; // the sidecar WebVTT
        expect(rep.presentationTimeOffset / rep.timescale, `${p.id} ${rep.id}`).toBeCloseTo(content, 3);
        expect(Math.abs(rep.segments[0]!.t / rep.timescale - content), `${p.id} ${rep.id}`).toBeLessThan(0.1);
      }
      content += p.duration;
    }
    expect(content).toBeCloseTo(DASH_CLIP_SECONDS, 3);
    // every content segment is listed once, in the Period of its time
    const video0 = mpd.periods.filter((x) => !isAd(x)).flatMap((p) => p.sets[0]!.representations[0]!.segments.map((s) => s.url));
    expect(video0).toEqual(Array.from({ length: DASH_CLIP_SECONDS / 2 }, (_, i) => `${origin.url}/vod/cmaf/chunk_0_${String(i + 1).padStart(5, '0')}.m4s`));
  });

  it('mirrors the content\'s AdaptationSets in each ad Period: kinds, languages, codecs and sizes', () => {
    const content = first.mpd.periods.find((p) => p.id === 'content-0')!;
    for (const p of first.mpd.periods.filter(isAd)) {
      expect(p.sets.map((s) => [s.id, s.contentType, s.lang]), p.id).toEqual(content.sets.map((s) => [s.id, s.contentType, s.lang]));
      const [video, audio, text] = p.sets;
      expect(video!.representations.map((r) => [r.id, r.codecs, r.width, r.height]), p.id)
        .toEqual(content.sets[0]!.representations.map((r) => [r.id, r.codecs, r.width, r.height]));
      expect(audio!.representations.map((r) => r.codecs)).toEqual(['mp4a.40.2']);
      expect(text!.mimeType).toBe('text/vtt');
      // the ad's media segments are addressed through the engine's segment route (beacons), its init on the media store
      for (const rep of [...video!.representations, ...audio!.representations]) {
        expect(rep.segments.every((s) => s.url.startsWith(`${h.engine.url}/v1/segment/${guid}/`)), p.id).toBe(true);
        expect(rep.init, p.id).toMatch(/\/media\/creatives\/.*\/init_\d+\.mp4$/);
        const seconds = rep.segments.reduce((s, x) => s + x.d, 0) / rep.timescale;
        expect(Math.abs(seconds - p.duration), `${p.id} ${rep.id}`).toBeLessThan(0.05);
      }
    }
  });

  it('gives ad Periods ffmpeg decodes whole: every Representation, its audio as well', async () => {
    expect(await undecodedPeriods(first.mpd.periods.filter(isAd), 30)).toEqual([]);
  }, 120_000);

  it('decides once per viewer: the same session\'s MPD again has the same ads, another viewer\'s has its own session', async () => {
    const sid = sidOf(first.text);
    const again = await h.get(`${mpdUrl}?sessionId=${sid}`);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    const vmapAsked = h.vast.requests.filter((r) => r.path === '/vmap').length;
    const other = await h.get(mpdUrl);
    expect(sidOf(other.text)).not.toBe(sid);
    expect(h.vast.requests.filter((r) => r.path === '/vmap').length).toBe(vmapAsked + 1);
  });

  it('fires a break\'s beacons once from its video segments, whatever the renditions fetched', async () => {
    const res = await h.get(mpdUrl);
    const mpd = readTestMpd(res.text, mpdUrl);
    const mid = mpd.periods.find((p) => p.id === 'vmap-midroll-1-0')!;
    const before = { impression: h.vast.beaconCount('impression', 'a'), complete: h.vast.beaconCount('complete', 'a') };
    for (const rep of mid.sets[0]!.representations) {
      for (const s of rep.segments) {
        const got = await h.get(s.url);
        expect(got.status).toBe(302);
        expect(got.headers.get('location')).toMatch(/\/media\/creatives\/.*\/seg_\d+\.m4s$/);
      }
    }
    await h.engine.ctx.services.ssai!.beacons.idle();
    expect(h.vast.beaconCount('impression', 'a') - before.impression).toBe(1);
    expect(h.vast.beaconCount('complete', 'a') - before.complete).toBe(1);
  });

  it('lists the DASH session\'s breaks in its tracking JSON at their place on the stitched timeline', async () => {
    const sid = sidOf(first.text);
    const tracking = JSON.parse((await h.get(`/v1/tracking/${guid}/${sid}`)).text) as { avails: Array<{ availId: string; timelineOffsetSeconds: number; ads: unknown[] }> };
    const adStarts = new Map<string, number>();
    for (const p of first.mpd.periods.filter(isAd)) {
      const id = p.id.replace(/-\d+$/, '');
      if (!adStarts.has(id)) adStarts.set(id, p.start);
    }
    expect(tracking.avails.map((a) => [a.availId, a.timelineOffsetSeconds, a.ads.length]))
      .toEqual([...adStarts.entries()].map(([id, start]) => [id, start, id === 'vmap-midroll-2' ? 2 : 1]));
  });

  it('opens a DASH session through the session route and the master route of an .mpd', async () => {
    const made = await h.get(`/v1/session/${guid}/${DASH_MPD_PATH}`, { method: 'POST', body: '{"adsParams":{"k":"v"}}' });
    expect(made.status).toBe(200);
    const { manifestUrl, trackingUrl } = JSON.parse(made.text) as { manifestUrl: string; trackingUrl: string };
    expect(manifestUrl).toMatch(new RegExp(`^/v1/dash/${guid}/${DASH_MPD_PATH}\\?sessionId=`));
    const sid = manifestUrl.split('sessionId=')[1]!;
    const mpd = await h.get(manifestUrl);
    expect(mpd.status).toBe(200);
    expect(sidOf(mpd.text)).toBe(sid);
    expect(trackingUrl).toBe(`/v1/tracking/${guid}/${sid}`);
    const viaMaster = await h.get(`/v1/master/${guid}/${DASH_MPD_PATH}`);
    expect(viaMaster.status).toBe(200);
    expect(viaMaster.text).toContain('<Period id="vmap-preroll-0"');
  });

  it('fills the viewer\'s user agent and address into the ad server URL, as for HLS', async () => {
    const tagged = await h.configure('/vmap?ua=[session.user_agent]&ip=[session.client_ip]&k=[player_params.k]', { type: 'broker', source: `${origin.url}/` });
    const before = h.vast.requests.length;
    const res = await h.get(`/v1/dash/${tagged}/${DASH_MPD_PATH}?ads.k=v1`, { headers: { 'user-agent': 'dash-viewer/1.0' } });
    expect(res.status).toBe(200);
    const asked = h.vast.requests.slice(before).find((r) => r.path === '/vmap')!;
    expect(asked.query.get('ua')).toBe('dash-viewer/1.0');
    expect(asked.query.get('ip')).toBe('127.0.0.1');
    expect(asked.query.get('k')).toBe('v1');
  });

  it('answers a coded 502 for a live (dynamic) MPD of a form not stitched and for an origin that is not an MPD', async () => {
    // live addressing by SegmentTemplate@duration (the wall clock's segments) without the availabilityStartTime to count them from
    origin.overrides.set('/vod/live.mpd', '<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic"><Period id="0" start="PT0S">'
      + '<AdaptationSet contentType="video"><Representation id="v" bandwidth="1" mimeType="video/mp4"><SegmentTemplate duration="2" media="$Number$.m4s"/></Representation></AdaptationSet></Period></MPD>');
    origin.overrides.set('/vod/hls.mpd', '#EXTM3U\n#EXT-X-ENDLIST\n');
    const live = await h.get(`/v1/dash/${guid}/vod/live.mpd`);
    expect(live.status).toBe(502);
    expect(JSON.parse(live.text)).toMatchObject({ code: 'DASH_MPD_UNSUPPORTED', description: expect.stringContaining('dynamic') });
    const notMpd = await h.get(`/v1/dash/${guid}/vod/hls.mpd`);
    expect(notMpd.status).toBe(502);
    expect(JSON.parse(notMpd.text)).toMatchObject({ code: 'ORIGIN_NOT_DASH' });
  });
});
