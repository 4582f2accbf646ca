// Issue 33, live: a stitched live DASH stream (ffmpeg's dash muxer with a sliding window, an SCTE-35 splice_insert in
// its MPD) played in dash.js in Chromium through a break: the player reloads the viewer's MPD (its Location), switches
// into the ad Periods and out to the content after the break, decodes frames all along, with no fatal error; the ads'
// beacons fire once for the viewer.
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASH_LIVE_MPD_PATH, DashLiveOrigin, type DashLiveBreaks } from '../../fixtures/dash-live-origin.js';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { startSsai, type SsaiHarness } from '../ssai/setup.js';
import { CHROMIUM, CHROMIUM_ARGS, hasChromium } from '../helpers/hls-player.js';

/** One break of 10 s at 24 s of the origin's Period, announced 18 s ahead (2013 XML scheme): ads a and b fill it. */
const BREAK: DashLiveBreaks = { firstAtSec: 24, everySec: 10_000, durationSec: AD_SECONDS.a + AD_SECONDS.b, announceSec: 18, scheme: 'xml' };
const BREAK_ID = 'scte-1000';
const RESUME = BREAK.firstAtSec + BREAK.durationSec;

/** The page records the player's Period switches, samples of the playhead (its Period, frames decoded) and errors. */
const PAGE = `<!doctype html><html><body><video id="v" muted playsinline></video><script src="/dash.js"></script><script>
const q = new URLSearchParams(location.search);
window.result = { samples: [], periods: [], errors: [], fatal: null };
const v = document.getElementById('v');
const player = dashjs.MediaPlayer().create();
const E = dashjs.MediaPlayer.events;
player.on(E.PERIOD_SWITCH_COMPLETED, (e) => window.result.periods.push({ id: e.toStreamInfo.id, start: e.toStreamInfo.start, at: v.currentTime }));
player.on(E.ERROR, (e) => { const what = JSON.stringify(e.error || e).slice(0, 300); window.result.errors.push(what); window.result.fatal = what; });
player.on(E.PLAYBACK_ERROR, (e) => { window.result.errors.push('playback ' + JSON.stringify(e.error || e).slice(0, 300)); });
setInterval(() => {
  const s = player.getActiveStream && player.getActiveStream();
  window.result.samples.push({ t: v.currentTime, period: s ? s.getStreamInfo().id : null, frames: v.getVideoPlaybackQuality().totalVideoFrames });
}, 250);
player.initialize(v, q.get('src'), true);
</script></body></html>`;

interface PlayResult { samples: Array<{ t: number; period: string | null; frames: number }>; periods: Array<{ id: string; start: number; at: number }>; errors: string[]; fatal: string | null }

describe('stitched live DASH in dash.js', () => {
  let h: SsaiHarness;
  let origin: DashLiveOrigin;
  let guid: string;
  let page: http.Server | undefined;
  let pageBase = '';

  beforeAll(async () => {
    if (!(await hasChromium())) return;
    [origin, h] = await Promise.all([DashLiveOrigin.start({ windowSegments: 8, breaks: BREAK }), startSsai()]);
    guid = await h.configure('/vast4', { type: 'broker', source: `${origin.url}/` });
    const dashJs = await readFile(path.resolve('node_modules/dashjs/dist/modern/umd/dash.all.min.js'));
    page = http.createServer((req, res) => {
      if (req.url?.startsWith('/dash.js')) return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(dashJs);
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    });
    await new Promise<void>((r) => page!.listen(0, '127.0.0.1', r));
    pageBase = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    // the creatives are prepared for the content's shape once, before the player asks (a first session does it)
    await origin.waitFor((m) => m.includes('<Event '), 30_000);
    const warm = await h.get(`/v1/dash/${guid}/${DASH_LIVE_MPD_PATH}`);
    expect(warm.status, warm.text).toBe(200);
  }, 240_000);

  afterAll(async () => {
    await h?.close();
    await origin?.close();
    await new Promise<void>((r) => (page ? page.close(() => r()) : r()));
  });

  it('plays through a live break: the content, the ad Periods, the content after the break, frames decoded all along', async (ctx) => {
    if (!(await hasChromium())) { ctx.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): DASH playback is not checked`); return; }
    const src = `${h.engine.url}/v1/dash/${guid}/${DASH_LIVE_MPD_PATH}`;
    const impressions = { a: h.vast.beaconCount('impression', 'a'), b: h.vast.beaconCount('impression', 'b') };
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    let result: PlayResult;
    try {
      const tab = await browser.newPage();
      await tab.goto(`${pageBase}/?${new URLSearchParams({ src })}`);
      // until the playhead is 3 s into the content after the break (live: the player follows the wall clock)
      await tab.waitForFunction((end) => {
        const r = (window as unknown as { result: PlayResult }).result;
        return r.fatal !== null || r.samples.some((s) => s.t > end);
      }, RESUME + 3, { timeout: 90_000, polling: 250 }).catch(() => undefined);
      result = await tab.evaluate(() => (window as unknown as { result: PlayResult }).result);
    } finally {
      await browser.close();
    }
    const summary = JSON.stringify({ ...result, samples: result.samples.filter((_, i) => i % 8 === 0) });
    expect(result.fatal, summary).toBeNull();
    // the player went from the content into the ads, then to the content after the break, at their starts
    const ids = result.periods.map((p) => p.id);
    expect(ids.filter((id) => id.startsWith(BREAK_ID) || id.startsWith('content-')), summary)
      .toEqual(expect.arrayContaining([`${BREAK_ID}-0`, `${BREAK_ID}-1`, `content-${BREAK_ID}`]));
    expect(ids.indexOf(`content-${BREAK_ID}`), summary).toBeGreaterThan(ids.indexOf(`${BREAK_ID}-1`));
    expect(result.periods.find((p) => p.id === `content-${BREAK_ID}`)!.start, summary).toBeCloseTo(RESUME, 3);
    // the playhead went on without a skip (a player that cannot follow the content Period's window jumps ahead)
    const playing = result.samples.filter((x) => x.frames > 0);
    const jumps = playing.slice(1).filter((x, i) => x.t - playing[i]!.t > 1.5);
    expect(jumps, summary).toEqual([]);
    // frames decoded inside the ads and after the break
    const between = (from: number, to: number) => result.samples.filter((s) => s.t > from && s.t < to);
    for (const [from, to] of [[BREAK.firstAtSec + 0.5, RESUME - 0.5], [RESUME + 0.5, RESUME + 3]] as const) {
      const seen = between(from, to);
      expect(seen.length, `${from}–${to} ${summary}`).toBeGreaterThan(2);
      expect(seen.at(-1)!.frames - seen[0]!.frames, `${from}–${to} ${summary}`).toBeGreaterThan(15);
    }
    await h.engine.ctx.services.ssai!.beacons.idle();
    expect(h.vast.beaconCount('impression', 'a') - impressions.a).toBe(1);
    expect(h.vast.beaconCount('impression', 'b') - impressions.b).toBe(1);
  }, 150_000);
});
