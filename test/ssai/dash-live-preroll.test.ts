// Issue 33 with issue 31 item 4: a live DASH viewer's pre-roll, through the real proxy and a live DASH origin (ffmpeg's
// dash muxer, a sliding window, no breaks). A new viewer's first MPD has the pre-roll's ads as Periods where its player
// starts (the first segment at or after the edge less the presentation delay: ffmpeg writes suggestedPresentationDelay,
// which is kept; without one the proxy announces three segments, test/unit/ssai/dash-live-preroll.test.ts), never
// longer than live_preroll_max_seconds, the content resuming where they end; asked of live_preroll_ad_server once per
// session, the same Periods on every reload; ffmpeg decodes them.
import { DOMParser } from '@xmldom/xmldom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASH_LIVE_MPD_PATH, DASH_LIVE_SEGMENT_SECONDS, DashLiveOrigin, windowOf } from '../../fixtures/dash-live-origin.js';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { readTestMpd, undecodedPeriods, type TestMpd } from '../helpers/dash-mpd.js';
import { startSsai, type SsaiHarness } from './setup.js';
import { untilAViewerHasAds } from './dash-setup.js';

describe('live pre-roll on a live DASH session', () => {
  let h: SsaiHarness;
  let origin: DashLiveOrigin;
  /** the origin's suggestedPresentationDelay (ffmpeg's dash muxer writes one), in seconds */
  let delay = 0;

  beforeAll(async () => {
    [origin, h] = await Promise.all([DashLiveOrigin.start({ windowSegments: 8 }), startSsai()]);
    const first = await origin.waitFor((m) => (windowOf(m)?.toSec ?? 0) >= 12, 90_000);
    delay = Number(/suggestedPresentationDelay="PT([\d.]+)S"/.exec(first)?.[1]);
    expect(delay).toBeGreaterThan(0);
    // the creatives are prepared to the content's shape on the first decisions: viewers are opened until one has them
    const warm = await configure('warm', 10);
    await untilAViewerHasAds(async () => (await viewer(warm)).text, (mpd) => mpd.includes('id="preroll-0"'));
  }, 300_000);

  afterAll(async () => {
    await h?.close();
    await origin?.close();
  });

  /** A live configuration whose breaks ask /vast3 and whose pre-roll asks /vast4 (ads a, 6 s, then b, 4 s), tagged. */
  async function configure(tag: string, maxSeconds?: number): Promise<string> {
    const created = await h.engine.api('POST', '/broker/adinserts', {
      headers: h.auth,
      body: {
        name: tag, type: 'live', ad_server: `${h.vast.url}/vast3?t=${tag}-breaks`, source_url: `${origin.url}/`,
        ...(maxSeconds === undefined ? {} : { live_preroll_ad_server: `${h.vast.url}/vast4?t=${tag}`, live_preroll_max_seconds: maxSeconds }),
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.guid as string;
  }
  const asked = (tag: string): number => h.vast.requests.filter((r) => r.query.get('t') === tag).length;

  /** A new viewer's first MPD, with the origin's live edge just before and just after it was asked. */
  async function viewer(guid: string): Promise<{ text: string; mpd: TestMpd; reload: string; edge: { from: number; to: number } }> {
    const before = windowOf(await (await fetch(`${origin.url}/${DASH_LIVE_MPD_PATH}`)).text())!.toSec;
    const url = `${h.engine.url}/v1/dash/${guid}/${DASH_LIVE_MPD_PATH}`;
    const res = await h.get(url);
    expect(res.status, res.text).toBe(200);
    const after = windowOf(await (await fetch(`${origin.url}/${DASH_LIVE_MPD_PATH}`)).text())!.toSec;
    const reload = new URL(/<Location>([^<]+)<\/Location>/.exec(res.text)![1]!.replace(/&amp;/g, '&'), url).href;
    return { text: res.text, mpd: readTestMpd(res.text, url), reload, edge: { from: before, to: after } };
  }
  const root = (text: string) => new DOMParser().parseFromString(text, 'text/xml').documentElement!;
  const prerollPeriods = (mpd: TestMpd) => mpd.periods.filter((p) => p.id.startsWith('preroll-'));

  it('gives a new viewer the ads where its player starts (the origin\'s presentation delay behind the edge), the content resuming at their end', async () => {
    const guid = await configure('max10', 10);
    const v = await viewer(guid);
    expect(root(v.text).getAttribute('suggestedPresentationDelay')).toBe(`PT${delay}S`);
    const ads = prerollPeriods(v.mpd);
    expect(ads.map((p) => [p.id, Math.round(p.duration)]), v.text).toEqual([['preroll-0', AD_SECONDS.a], ['preroll-1', AD_SECONDS.b]]);
    const at = ads[0]!.start;
    // the first segment start at or after the edge less the delay: the player plays at most a segment of content first
    expect(at % DASH_LIVE_SEGMENT_SECONDS).toBeCloseTo(0, 3);
    expect(at).toBeGreaterThanOrEqual(v.edge.from - delay - 1e-3);
    expect(at).toBeLessThan(v.edge.to - delay + DASH_LIVE_SEGMENT_SECONDS + 1e-3);
    // asked once, of the pre-roll's ad server (the breaks' is not asked: the origin has no cue)
    expect([asked('max10'), asked('max10-breaks')]).toEqual([1, 0]);
    // the content Period before ends where the ads start; the one after (once the edge reaches it) resumes at their end
    const i = v.mpd.periods.indexOf(ads[0]!);
    const before = v.mpd.periods[i - 1]!;
    expect(before.id).toMatch(/^content-/);
    expect(before.start + before.duration).toBeCloseTo(at, 3);
    expect(await undecodedPeriods(ads, 15)).toEqual([]); // (the origin runs at 15 fps: the creatives are prepared to it)

    // reloaded once the edge passed the ads' end: the same ad Periods, the content after them from the ads' end
    const end = ads[1]!.start + ads[1]!.duration;
    await origin.waitFor((m) => (windowOf(m)?.toSec ?? 0) >= end + DASH_LIVE_SEGMENT_SECONDS, 60_000);
    const again = await h.get(v.reload);
    expect(again.status, again.text).toBe(200);
    const reloaded = readTestMpd(again.text, v.reload);
    expect(prerollPeriods(reloaded).map((p) => [p.id, p.start, p.duration])).toEqual(ads.map((p) => [p.id, p.start, p.duration]));
    const resumed = reloaded.periods[reloaded.periods.findIndex((p) => p.id === 'preroll-1') + 1]!;
    expect(resumed.id).toMatch(/^content-/);
    expect(resumed.start).toBeCloseTo(end, 3);
    const video = resumed.sets.find((s) => s.contentType === 'video')!.representations[0]!;
    // (the origin's Period starts at 0: its media time at the resume is the resume)
    expect(video.presentationTimeOffset / video.timescale).toBeCloseTo(end, 2);
    expect(asked('max10')).toBe(1);
  }, 120_000);

  it('takes only the ads that fit live_preroll_max_seconds', async () => {
    const guid = await configure('max4', 4);
    const v = await viewer(guid);
    // ad a (6 s) does not fit 4 s; ad b (4 s) does
    expect(prerollPeriods(v.mpd).map((p) => [p.id, Math.round(p.duration)]), v.text).toEqual([['preroll-0', AD_SECONDS.b]]);
    expect(asked('max4')).toBe(1);
  }, 60_000);

  it('leaves a configuration without a pre-roll as the origin gives it: no ad Period, the origin\'s presentation delay', async () => {
    const guid = await configure('none');
    const v = await viewer(guid);
    expect(prerollPeriods(v.mpd)).toEqual([]);
    expect(root(v.text).getAttribute('suggestedPresentationDelay')).toBe(`PT${delay}S`);
    expect(asked('none-breaks')).toBe(0);
  }, 60_000);
});
