// Issue 33 item 4: a stitched VOD DASH stream (the engine's own DASH encode, VMAP breaks) played in dash.js and in
// Shaka Player in Chromium through a mid-roll: the ad Period's frames decoded and shown, the content resumed at its
// media time where the ad Period ends (no hole in the buffer, the playhead through), no fatal error, the ad's beacons
// fired once for the viewer. And an origin of two Periods (the encode split at 8 s, the second Period with its own
// BaseURL, presentationTimeOffset, numbers and one video rung fewer): dash.js through a mid-roll on the boundary,
// Shaka through a cue's break that spans it, the second Period resumed 2 s into its media time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASH_MPD_PATH, DashOrigin } from '../../fixtures/dash-origin.js';
import { startSsai, type SsaiHarness } from '../ssai/setup.js';
import { CHROMIUM, CHROMIUM_ARGS, hasChromium, servePage } from '../helpers/hls-player.js';
import { readTestMpd, type TestMpd } from '../helpers/dash-mpd.js';
import { spliceEventStream, twoPeriods } from '../helpers/dash-two-periods.js';

/** What both pages record: samples of the playhead (time, the player's Period, frames decoded), errors, buffer. */
const COMMON = `
const q = new URLSearchParams(location.search);
window.result = { samples: [], periods: [], errors: [], fatal: null, buffered: [] };
const v = document.getElementById('v');
v.addEventListener('playing', () => { v.playbackRate = Number(q.get('rate') ?? 1); });
const sample = (period) => {
  const quality = v.getVideoPlaybackQuality();
  window.result.samples.push({ t: v.currentTime, period, frames: quality.totalVideoFrames, width: v.videoWidth });
  const b = [];
  for (let i = 0; i < v.buffered.length; i++) b.push([v.buffered.start(i), v.buffered.end(i)]);
  window.result.buffered = b;
};`;

const DASHJS_PAGE = `<!doctype html><html><body><video id="v" muted playsinline></video><script src="/dash.js"></script><script>${COMMON}
const player = dashjs.MediaPlayer().create();
const E = dashjs.MediaPlayer.events;
player.on(E.PERIOD_SWITCH_COMPLETED, (e) => window.result.periods.push({ id: e.toStreamInfo.id, start: e.toStreamInfo.start, at: v.currentTime }));
player.on(E.ERROR, (e) => { const what = JSON.stringify(e.error || e).slice(0, 300); window.result.errors.push(what); window.result.fatal = what; });
player.on(E.PLAYBACK_ERROR, (e) => { window.result.errors.push('playback ' + JSON.stringify(e.error || e).slice(0, 300)); });
setInterval(() => { const s = player.getActiveStream && player.getActiveStream(); sample(s ? s.getStreamInfo().id : null); }, 200);
player.initialize(v, q.get('src'), true, Number(q.get('start') ?? 0));
</script></body></html>`;

const SHAKA_PAGE = `<!doctype html><html><body><video id="v" muted playsinline></video><script src="/shaka.js"></script><script>${COMMON}
shaka.polyfill.installAll();
const player = new shaka.Player();
player.addEventListener('error', (e) => {
  const what = JSON.stringify({ code: e.detail.code, severity: e.detail.severity, data: e.detail.data }).slice(0, 300);
  window.result.errors.push(what);
  if (e.detail.severity === shaka.util.Error.Severity.CRITICAL) window.result.fatal = what;
});
setInterval(() => sample(null), 200);
player.attach(v).then(() => player.load(q.get('src'), Number(q.get('start') ?? 0))).then(() => v.play()).catch((e) => {
  const what = 'load ' + JSON.stringify({ code: e.code, data: e.data }).slice(0, 300);
  window.result.errors.push(what);
  window.result.fatal = what;
});
</script></body></html>`;

interface Sample { t: number; period: string | null; frames: number; width: number }
interface PlayResult { samples: Sample[]; periods: Array<{ id: string; start: number; at: number }>; errors: string[]; fatal: string | null; buffered: Array<[number, number]> }

describe('stitched DASH VOD in real players', () => {
  let h: SsaiHarness;
  let origin: DashOrigin;
  let guid: string;
  /** the mid-roll alone (VMAP ?breaks=): a player buffering ahead reaches no other break of ad a */
  let midGuid: string;
  /** on the two-Period origin (midGuid's mid-roll is at 8 s, their boundary): a cue's 4 s break from 6 s, across it */
  let spanningGuid: string;
  let page: Awaited<ReturnType<typeof servePage>> | undefined;
  let pageBase = '';

  beforeAll(async () => {
    origin = await DashOrigin.start();
    h = await startSsai();
    guid = await h.configure('/vmap', { type: 'broker', source: `${origin.url}/` });
    midGuid = await h.configure('/vmap?breaks=midroll-1', { type: 'broker', source: `${origin.url}/` });
    page = await servePage((pathname) => (pathname.startsWith('/shaka') ? SHAKA_PAGE : DASHJS_PAGE));
    pageBase = page.base;
    // the creatives are prepared for the content's shape once, before a player asks (a first session does it)
    expect((await h.get(`/v1/dash/${guid}/${DASH_MPD_PATH}`)).text).toContain('/v1/segment/');
    origin.overrides.set('/vod/two-periods.mpd', await twoPeriods(origin.dir));
    origin.overrides.set('/vod/two-periods-cue.mpd', await twoPeriods(origin.dir, [spliceEventStream(301, 6000)]));
    spanningGuid = await h.configure('/vast4', { type: 'broker', source: `${origin.url}/` });
    // and for the second Period's shape (one rung fewer), and for the cue's ad
    expect((await h.get(`/v1/dash/${midGuid}/vod/two-periods.mpd`)).text).toContain('/v1/segment/');
    expect((await h.get(`/v1/dash/${spanningGuid}/vod/two-periods-cue.mpd`)).text).toContain('/v1/segment/');
  }, 240_000);

  afterAll(async () => {
    await h?.close();
    await origin?.close();
    await page?.close();
  });

  /** Plays the session's MPD from `start` until the playhead is `until` (or a fatal error, or the timeout). */
  async function play(which: 'dashjs' | 'shaka', src: string, start: number, until: number): Promise<PlayResult> {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const tab = await browser.newPage();
      await tab.goto(`${pageBase}/${which === 'shaka' ? 'shaka' : 'dashjs'}?${new URLSearchParams({ src, start: String(start), rate: '2' })}`);
      await tab.waitForFunction((end) => {
        const r = (window as unknown as { result: PlayResult }).result;
        return r.fatal !== null || r.samples.some((s) => s.t > end);
      }, until, { timeout: 60_000, polling: 250 }).catch(() => undefined);
      return await tab.evaluate(() => (window as unknown as { result: PlayResult }).result);
    } finally {
      await browser.close();
    }
  }

  /** A viewer's own MPD (its session made by this request) and where its first mid-roll sits on the timeline. */
  async function session(of = guid, mpdPath = DASH_MPD_PATH, adPeriod = 'vmap-midroll-1-0'): Promise<{ src: string; mpd: TestMpd; ad: { start: number; end: number }; resumed: { id: string; start: number } }> {
    const src = `${h.engine.url}/v1/dash/${of}/${mpdPath}`;
    const first = await h.get(src);
    const sid = /\/v1\/segment\/[^/]+\/([^/]+)\//.exec(first.text)![1]!;
    const own = `${src}?sessionId=${sid}`;
    const mpd = readTestMpd(first.text, own);
    const i = mpd.periods.findIndex((p) => p.id === adPeriod);
    expect(i, first.text).toBeGreaterThan(0);
    const ad = mpd.periods[i]!;
    const next = mpd.periods[i + 1]!;
    return { src: own, mpd, ad: { start: ad.start, end: ad.start + ad.duration }, resumed: { id: next.id, start: next.start } };
  }

  /** Through the mid-roll: frames decoded inside the ad Period, the content after it buffered from its start and played. */
  function expectThroughTheBreak(result: PlayResult, ad: { start: number; end: number }, resumedAt: number): void {
    const summary = JSON.stringify({ ...result, samples: result.samples.filter((_, i) => i % 4 === 0) });
    expect(result.fatal, summary).toBeNull();
    const inAd = result.samples.filter((s) => s.t > ad.start + 0.5 && s.t < ad.end - 0.5);
    expect(inAd.length, summary).toBeGreaterThan(2);
    // the ad's frames: decoded while the playhead crossed the ad Period
    expect(inAd.at(-1)!.frames - inAd[0]!.frames, summary).toBeGreaterThan(30);
    // the content resumed where the ad Period ends, at the media time of the break: one buffered range across the join
    // (content placed at another media time would leave a hole, or a stall there), and the playhead went on past it
    expect(result.samples.some((s) => s.t > resumedAt + 1.5), summary).toBe(true);
    expect(result.buffered.some(([from, to]) => from <= ad.start + 0.2 && to >= resumedAt + 1.5), summary).toBe(true);
  }

  it('plays through a mid-roll in dash.js: the ad Period, then the content Period from the break\'s media time', async (ctx) => {
    if (!(await hasChromium())) { ctx.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): DASH playback is not checked`); return; }
    const s = await session(midGuid);
    const impressions = h.vast.beaconCount('impression', 'a');
    const completes = h.vast.beaconCount('complete', 'a');
    const result = await play('dashjs', s.src, s.ad.start - 2, s.resumed.start + 2);
    expectThroughTheBreak(result, s.ad, s.resumed.start);
    const summary = JSON.stringify(result.periods);
    // dash.js switched into the ad Period and out to the next content Period, which starts where the ad ends
    const ids = result.periods.map((p) => p.id);
    expect(ids, summary).toContain('vmap-midroll-1-0');
    expect(ids.indexOf(s.resumed.id), summary).toBeGreaterThan(ids.indexOf('vmap-midroll-1-0'));
    expect(result.periods.find((p) => p.id === s.resumed.id)!.start, summary).toBeCloseTo(s.ad.end, 3);
    await h.engine.ctx.services.ssai!.beacons.idle();
    expect(h.vast.beaconCount('impression', 'a') - impressions).toBe(1);
    expect(h.vast.beaconCount('complete', 'a') - completes).toBe(1);
  }, 90_000);

  it('plays through a mid-roll in Shaka Player: the ad Period, then the content from the break\'s media time', async (ctx) => {
    if (!(await hasChromium())) { ctx.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): DASH playback is not checked`); return; }
    const s = await session(midGuid);
    const impressions = h.vast.beaconCount('impression', 'a');
    const completes = h.vast.beaconCount('complete', 'a');
    const result = await play('shaka', s.src, s.ad.start - 2, s.resumed.start + 2);
    expectThroughTheBreak(result, s.ad, s.resumed.start);
    await h.engine.ctx.services.ssai!.beacons.idle();
    expect(h.vast.beaconCount('impression', 'a') - impressions).toBe(1);
    expect(h.vast.beaconCount('complete', 'a') - completes).toBe(1);
  }, 90_000);

  it('plays the pre-roll in dash.js before the content, then the content from its start', async (ctx) => {
    if (!(await hasChromium())) { ctx.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): DASH playback is not checked`); return; }
    const s = await session();
    const pre = s.mpd.periods[0]!;
    expect(pre.id).toBe('vmap-preroll-0');
    const result = await play('dashjs', s.src, 0, pre.duration + 2);
    expectThroughTheBreak(result, { start: 0, end: pre.duration }, pre.duration);
    expect(result.periods.map((p) => p.id).slice(0, 2), JSON.stringify(result.periods)).toEqual(['vmap-preroll-0', 'content-0']);
  }, 90_000);

  it('plays a two-Period origin in dash.js through the mid-roll on the Periods\' boundary, into the second Period', async (ctx) => {
    if (!(await hasChromium())) { ctx.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): DASH playback is not checked`); return; }
    const s = await session(midGuid, 'vod/two-periods.mpd');
    // the second origin Period resumes at its own media time (8 s) with its own rungs, after the ad
    const resumed = s.mpd.periods.find((p) => p.id === s.resumed.id)!;
    const video = resumed.sets.find((set) => set.contentType === 'video')!.representations[0]!;
    expect([s.resumed.id, video.presentationTimeOffset / video.timescale, s.ad.start]).toEqual(['content-1', 8, 8]);
    const result = await play('dashjs', s.src, s.ad.start - 2, s.resumed.start + 2);
    expectThroughTheBreak(result, s.ad, s.resumed.start);
    const ids = result.periods.map((p) => p.id);
    expect(ids.indexOf('content-1'), JSON.stringify(result.periods)).toBeGreaterThan(ids.indexOf('vmap-midroll-1-0'));
  }, 90_000);

  it('plays a two-Period origin in Shaka Player through a cue\'s break across the boundary, the second Period resumed 2 s in', async (ctx) => {
    if (!(await hasChromium())) { ctx.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): DASH playback is not checked`); return; }
    const s = await session(spanningGuid, 'vod/two-periods-cue.mpd', 'scte-301-0');
    const resumed = s.mpd.periods.find((p) => p.id === s.resumed.id)!;
    const video = resumed.sets.find((set) => set.contentType === 'video')!.representations[0]!;
    expect([s.ad.start, s.ad.end, video.presentationTimeOffset / video.timescale]).toEqual([6, 10, 10]);
    const result = await play('shaka', s.src, s.ad.start - 2, s.resumed.start + 2);
    expectThroughTheBreak(result, s.ad, s.resumed.start);
  }, 90_000);
});
