// Issue 33: a multi-Period VOD origin through the proxy. The engine's own encode served as two Periods (0–8 s and
// 8–16 s, each with its own BaseURL, presentationTimeOffset and startNumber; the second without the small video rung):
// VMAP breaks at the Periods' start, at their boundary, inside the second and after it, and an SCTE-35 cue whose break
// spans the boundary. The viewer's MPD has the Periods expected, check-playlist finds no error in it, ffmpeg decodes
// the ad Periods.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPlaylistUrl } from '../../ssai/check/check-url.js';
import { DashOrigin } from '../../fixtures/dash-origin.js';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { readTestMpd, undecodedPeriods, type TestPeriod } from '../helpers/dash-mpd.js';
import { spliceEventStream, twoPeriods } from '../helpers/dash-two-periods.js';
import { startSsai, type SsaiHarness } from './setup.js';

const isAd = (p: TestPeriod): boolean => !p.id.startsWith('content-');

describe('DASH VOD of several Periods through the proxy', () => {
  let h: SsaiHarness;
  let origin: DashOrigin;

  beforeAll(async () => {
    origin = await DashOrigin.start();
    origin.overrides.set('/vod/two-periods.mpd', await twoPeriods(origin.dir));
    // a splice_insert for 4 s at 6 s of the first Period (its break 2 s into the second), one at 4 s of the second (12 s)
    origin.overrides.set('/vod/two-periods-cue.mpd', await twoPeriods(origin.dir, [spliceEventStream(301, 6000), spliceEventStream(302, 4000)]));
    h = await startSsai();
  }, 240_000);

  afterAll(async () => {
    await h?.close();
    await origin?.close();
  });

  it('places VMAP breaks across the Periods, each ad Period mirroring the Period it interrupts, and check-playlist finds no error', async () => {
    // the fixture's VMAP: pre-roll (a), mid-roll at 8 s, the Periods' boundary (a), at 75 % = 12 s (a, b), post-roll (b)
    const guid = await h.configure('/vmap', { type: 'broker', source: `${origin.url}/` });
    const url = `${h.engine.url}/v1/dash/${guid}/vod/two-periods.mpd`;
    const res = await h.get(url);
    expect(res.status, res.text).toBe(200);
    const mpd = readTestMpd(res.text, url);
    const { a, b } = AD_SECONDS;
    expect(mpd.periods.map((p) => [p.id, p.start, p.duration])).toEqual([
      ['vmap-preroll-0', 0, a], ['content-0', a, 8], ['vmap-midroll-1-0', a + 8, a], ['content-1', 2 * a + 8, 4],
      ['vmap-midroll-2-0', 2 * a + 12, a], ['vmap-midroll-2-1', 3 * a + 12, b], ['content-2', 3 * a + b + 12, 4], ['vmap-postroll-0', 3 * a + b + 16, b],
    ]);
    // the content Periods keep each origin Period's media time and numbers, under its BaseURL
    const video = (id: string) => mpd.periods.find((p) => p.id === id)!.sets.find((s) => s.contentType === 'video')!;
    expect(mpd.periods.filter((p) => !isAd(p)).map((p) => p.baseUrl)).toEqual(Array(3).fill(`${origin.url}/vod/cmaf/`));
    for (const [id, at, rungs] of [['content-0', 0, 2], ['content-1', 8, 1], ['content-2', 12, 1]] as const) {
      const set = video(id);
      expect(set.representations.length, id).toBe(rungs);
      const rep = set.representations[0]!;
      expect(rep.presentationTimeOffset / rep.timescale, id).toBe(at);
      expect(rep.segments[0]!.url, id).toBe(`${origin.url}/vod/cmaf/chunk_0_${String(at / 2 + 1).padStart(5, '0')}.m4s`);
    }
    // the pre-roll mirrors the first Period (two rungs), the breaks from 8 s on the second (one)
    expect(mpd.periods.filter(isAd).map((p) => [p.id, p.sets.find((s) => s.contentType === 'video')!.representations.length]))
      .toEqual([['vmap-preroll-0', 2], ['vmap-midroll-1-0', 1], ['vmap-midroll-2-0', 1], ['vmap-midroll-2-1', 1], ['vmap-postroll-0', 1]]);
    const sid = /\/v1\/segment\/[^/]+\/([^/]+)\//.exec(res.text)![1]!;
    const findings = await checkPlaylistUrl(`${url}?sessionId=${sid}`, 0);
    expect(findings, res.text).toEqual([]);
    expect(await undecodedPeriods(mpd.periods.filter((p) => p.id === 'vmap-preroll-0' || p.id === 'vmap-midroll-1-0'), 30)).toEqual([]);
  }, 180_000);

  it('replaces the content under each Period\'s cues, a break across the Periods\' boundary resuming the second at its end', async () => {
    // vast4: ads a (6 s) and b (4 s); the 4 s break takes b
    const guid = await h.configure('/vast4', { type: 'broker', source: `${origin.url}/` });
    const url = `${h.engine.url}/v1/dash/${guid}/vod/two-periods-cue.mpd`;
    const res = await h.get(url);
    expect(res.status, res.text).toBe(200);
    const mpd = readTestMpd(res.text, url);
    expect(mpd.periods.map((p) => [p.id, p.start, p.duration])).toEqual([['content-0', 0, 6], ['scte-301-0', 6, 4], ['content-1', 10, 2], ['scte-302-0', 12, 4]]);
    // the first break's ads mirror the first Period (it starts there), the second's the second; the second Period
    // resumes at 10 s, 2 s into it
    expect(mpd.periods.filter(isAd).map((p) => p.sets.find((s) => s.contentType === 'video')!.representations.length)).toEqual([2, 1]);
    const resumed = mpd.periods[2]!.sets.find((s) => s.contentType === 'video')!.representations[0]!;
    expect([resumed.presentationTimeOffset / resumed.timescale, resumed.startNumber]).toEqual([10, 6]);
    const sid = /\/v1\/segment\/[^/]+\/([^/]+)\//.exec(res.text)![1]!;
    expect(await checkPlaylistUrl(`${url}?sessionId=${sid}`, 0), res.text).toEqual([]);
    expect(await undecodedPeriods(mpd.periods.filter(isAd), 30)).toEqual([]);
  }, 180_000);
});
