// Issue 30 point 5: guided streams (HLS Interstitials) played in hls.js 1.7 in Chromium, for a muxed MPEG-TS origin
// and a demuxed fMP4 origin, VOD and live: hls.js's interstitial events show each break's assets started and ended,
// the primary content resumed where it should, no fatal error; and the assets' segments fired the viewer's beacons.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_SECONDS, BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS, type OriginLayout } from '../../fixtures/origin-server.js';
import { startSsai, type SsaiHarness } from '../ssai/setup.js';
import { CHROMIUM, CHROMIUM_ARGS, hasChromium, servePage } from '../helpers/hls-player.js';
import { absoluteSegments, decodeSpans } from '../helpers/hls-decode.js';
import { scanMediaPlaylist, scanMultivariantPlaylist } from '../../media/playlist-scanner.js';
import { INTERSTITIAL_CLASS } from '../../ssai/stitch/interstitials.js';

/** The player page: hls.js with its interstitial events recorded (time: the primary's playhead when each came). */
const PAGE = `<!doctype html><html><body><video id="v" muted playsinline></video><script src="/hls.js"></script><script>
const q = new URLSearchParams(location.search);
window.result = { levelLoads: 0, errors: [], fatal: null, events: [], primaryTimes: [] };
const v = document.getElementById('v');
const hls = new Hls({ startPosition: Number(q.get('start') ?? -1) });
const note = (name, extra) => window.result.events.push({ name, primary: hls.interstitialsManager ? hls.interstitialsManager.primary.currentTime : v.currentTime, ...(extra || {}) });
hls.on(Hls.Events.MANIFEST_PARSED, () => { v.play().catch((e) => window.result.errors.push(String(e))); });
hls.on(Hls.Events.LEVEL_LOADED, () => { window.result.levelLoads++; });
hls.on(Hls.Events.ERROR, (_e, d) => {
  const what = [d.details, d.response ? d.response.code : '', d.error ? d.error.message : '', d.url || ''].join(' ');
  if (window.result.errors.length < 40) window.result.errors.push(what);
  if (d.fatal) window.result.fatal = what;
});
hls.on(Hls.Events.ASSET_LIST_LOADED, (_e, d) => note('asset-list', { assets: d.assetListResponse.ASSETS.length }));
hls.on(Hls.Events.INTERSTITIAL_STARTED, (_e, d) => note('started', { id: d.event.identifier }));
hls.on(Hls.Events.INTERSTITIAL_ASSET_STARTED, (_e, d) => note('asset-started', { index: d.assetListIndex }));
hls.on(Hls.Events.INTERSTITIAL_ASSET_ENDED, (_e, d) => note('asset-ended', { index: d.assetListIndex }));
hls.on(Hls.Events.INTERSTITIAL_ASSET_ERROR, (_e, d) => note('asset-error', { error: String(d.error && d.error.message) }));
hls.on(Hls.Events.INTERSTITIAL_ENDED, (_e, d) => note('ended', { id: d.event.identifier }));
hls.on(Hls.Events.INTERSTITIALS_PRIMARY_RESUMED, () => note('resumed'));
setInterval(() => { if (hls.interstitialsManager) window.result.primaryTimes.push(hls.interstitialsManager.primary.currentTime); }, 250);
v.addEventListener('playing', () => { v.playbackRate = Number(q.get('rate') ?? 1); });
hls.loadSource(q.get('src'));
hls.attachMedia(v);
</script></body></html>`;

interface GuidedEvent { name: string; primary: number; id?: string; index?: number; assets?: number; error?: string }
interface GuidedResult { levelLoads: number; errors: string[]; fatal: string | null; events: GuidedEvent[]; primaryTimes: number[] }

describe.each<OriginLayout>(['muxed-ts', 'demuxed-fmp4'])('guided playback in hls.js, %s origin', (layout) => {
  let h: SsaiHarness;
  let liveGuid: string;
  let vodGuid: string;
  let page: Awaited<ReturnType<typeof servePage>> | undefined;
  let pageBase = '';

  beforeAll(async () => {
    h = await startSsai({ origin: { layout } });
    // vast4: ads a (6 s) and b (4 s) fill the whole 10 s break
    liveGuid = await h.configure('/vast4?sid=[session.id]');
    vodGuid = await h.configure('/vast4?sid=[session.id]', { type: 'broker' });
    page = await servePage(() => PAGE);
    pageBase = page.base;
    // The creatives are prepared for the content ladder once, before any player asks (a stitched VOD session does it).
    const master = await h.get(`/v1/master/${vodGuid}/vod/master.m3u8`);
    const first = master.text.split('\n').find((l) => l.startsWith('/v1/manifest/'))!;
    expect((await h.get(first)).text).toContain('/v1/segment/');
  }, 240_000);

  afterAll(async () => {
    await h?.close();
    await page?.close();
  });

  /** Plays until the primary resumed after the first interstitial and played on a second (or a fatal error). */
  async function play(src: string, opts: { start?: number; rate?: number; timeoutMs: number; onFirstLevel?: () => void }): Promise<GuidedResult> {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const tab = await browser.newPage();
      const q = new URLSearchParams({ src, ...(opts.start !== undefined ? { start: String(opts.start) } : {}), ...(opts.rate ? { rate: String(opts.rate) } : {}) });
      await tab.goto(`${pageBase}/?${q}`);
      if (opts.onFirstLevel) {
        await tab.waitForFunction(() => (window as unknown as { result: GuidedResult }).result.levelLoads > 0, undefined, { timeout: opts.timeoutMs, polling: 50 });
        opts.onFirstLevel();
      }
      await tab.waitForFunction(() => {
        const r = (window as unknown as { result: GuidedResult }).result;
        if (r.fatal !== null) return true;
        const resumed = r.events.find((e) => e.name === 'resumed');
        return resumed !== undefined && r.primaryTimes.some((t) => t > resumed.primary + 1);
      }, undefined, { timeout: opts.timeoutMs, polling: 250 }).catch(() => undefined);
      return await tab.evaluate(() => (window as unknown as { result: GuidedResult }).result);
    } finally {
      await browser.close();
    }
  }

  /**
   * Both ads of the first break started in order, the break ended and the primary resumed, no fatal error. (hls.js
   * does not always signal the end of an asset followed by another: INTERSTITIAL_ASSET_ENDED of the first ad was
   * missing in one run; the break's INTERSTITIAL_ENDED is what tells that it played to its end.)
   */
  function expectThroughTheBreak(result: GuidedResult): GuidedEvent {
    const summary = JSON.stringify({ ...result, primaryTimes: result.primaryTimes.filter((_, i) => i % 8 === 0) });
    expect(result.fatal, summary).toBeNull();
    const names = result.events.map((e) => e.name);
    expect(names.filter((n) => n === 'asset-error'), summary).toEqual([]);
    const started = result.events.find((e) => e.name === 'started');
    expect(started, summary).toBeDefined();
    // The first pass through the break: its assets in order, then the break's end and the primary resumed. (hls.js
    // 1.7.4 with a demuxed fMP4 live origin stalls once inside the last asset and, after its nudge, enters the break
    // again for the last second of that asset: docs/ssai-guided.md "Known limits". The events after the first
    // resume are not checked.)
    const firstPass = result.events.slice(result.events.indexOf(started!));
    const resumedAt = firstPass.findIndex((e) => e.name === 'resumed');
    expect(resumedAt, summary).toBeGreaterThan(0);
    const ofFirst = firstPass.slice(0, resumedAt + 1);
    expect(ofFirst.filter((e) => e.name === 'asset-started').map((e) => e.index), summary).toEqual([0, 1]);
    expect(ofFirst.filter((e) => e.name === 'asset-ended').map((e) => e.index).every((i) => i === 0 || i === 1), summary).toBe(true);
    expect(ofFirst.some((e) => e.name === 'ended' && e.id === started!.id), summary).toBe(true);
    expect(result.events.find((e) => e.name === 'asset-list')?.assets, summary).toBe(2);
    return started!;
  }

  it('gives assets ffmpeg decodes whole: every rendition of every ad of a break, its audio as well', async () => {
    const master = await h.get(`/v1/master/${vodGuid}/vod/master.m3u8?ads.mode=guided`);
    const multivariant = scanMultivariantPlaylist(master.text).playlist!;
    const mediaUrl = `${h.engine.url}${multivariant.variants[0]!.uri}`;
    const media = await h.get(mediaUrl);
    const range = media.text.split('\n').find((l) => l.startsWith('#EXT-X-DATERANGE:') && l.includes(INTERSTITIAL_CLASS))!;
    const assetList = /X-ASSET-LIST="([^"]+)"/.exec(range)![1]!;
    const assets = JSON.parse((await h.get(new URL(assetList, mediaUrl).href)).text) as { ASSETS: Array<{ URI: string; DURATION: number }> };
    expect(assets.ASSETS).toHaveLength(2);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'guided-assets-'));
    try {
      for (const [i, asset] of assets.ASSETS.entries()) {
        const assetMaster = scanMultivariantPlaylist((await h.get(asset.URI)).text).playlist!;
        const playlists = [...assetMaster.variants.map((v) => v.uri), ...assetMaster.renditions.flatMap((r) => (r.uri ? [r.uri] : []))];
        expect(assetMaster.variants.length).toBeGreaterThan(0);
        // demuxed content: the ad's audio is a rendition of its own; muxed: every variant carries it
        expect(assetMaster.renditions.length).toBe(layout === 'demuxed-fmp4' ? 1 : 0);
        for (const uri of playlists) {
          const url = new URL(uri, asset.URI).href;
          const pl = scanMediaPlaylist((await h.get(url)).text).playlist!;
          const decoded = await decodeSpans(absoluteSegments(pl.segments, url), dir, `ad${i}`);
          const what = `${url}: ${JSON.stringify(decoded)}`;
          expect(decoded.errors, what).toBe('');
          expect(decoded.spans, what).toBeGreaterThan(0);
          expect(decoded.seconds, what).toBeCloseTo(asset.DURATION, 0);
          // ffmpeg decoded (nearly) all the media the playlist lists: within a frame or an audio packet per segment
          expect(Math.abs(decoded.decodedSeconds - decoded.seconds), what).toBeLessThan(0.25);
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('plays a guided VOD through its interstitial and back to the content where it left', async (ctx) => {
    if (!(await hasChromium())) { ctx.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): guided playback is not checked`); return; }
    const breakAt = BREAK_START * SEGMENT_SECONDS;
    const impressions = h.vast.beaconCount('impression', 'a');
    const result = await play(`${h.engine.url}/v1/master/${vodGuid}/vod/master.m3u8?ads.mode=guided`, { start: breakAt - 3, rate: 2, timeoutMs: 45_000 });
    const started = expectThroughTheBreak(result);
    const summary = JSON.stringify(result.events);
    expect(started.primary, summary).toBeGreaterThan(breakAt - 3.5);
    // inserted: the content goes on from the break's start (resume offset 0)
    const resumed = result.events.find((e) => e.name === 'resumed')!;
    expect(Math.abs(resumed.primary - breakAt), summary).toBeLessThan(1);
    await h.engine.ctx.services.ssai!.beacons.idle();
    expect(h.vast.beaconCount('impression', 'a') - impressions).toBe(1);
  }, 90_000);

  it('plays the VMAP pre-roll of a guided VOD before the content, then the content from its start', async (ctx) => {
    if (!(await hasChromium())) { ctx.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): guided playback is not checked`); return; }
    const vmapGuid = await h.configure('/vmap', { type: 'broker' });
    h.origin.cueForm = 'none';
    try {
      const result = await play(`${h.engine.url}/v1/master/${vmapGuid}/vod/master.m3u8?ads.mode=guided`, { start: 0, rate: 2, timeoutMs: 45_000 });
      const summary = JSON.stringify({ ...result, primaryTimes: result.primaryTimes.filter((_, i) => i % 8 === 0) });
      expect(result.fatal, summary).toBeNull();
      expect(result.events.filter((e) => e.name === 'asset-error'), summary).toEqual([]);
      // the first interstitial is the pre-roll (one ad, inline in the VMAP), played before the content moved
      const started = result.events.find((e) => e.name === 'started');
      expect(started?.primary, summary).toBeLessThan(0.5);
      const firstPass = result.events.slice(result.events.indexOf(started!));
      const resumedAt = firstPass.findIndex((e) => e.name === 'resumed');
      expect(resumedAt, summary).toBeGreaterThan(0);
      expect(firstPass.slice(0, resumedAt).filter((e) => e.name === 'asset-started').map((e) => e.index), summary).toEqual([0]);
      expect(result.events.find((e) => e.name === 'asset-list')?.assets, summary).toBe(1);
      // the content starts from its beginning after the pre-roll
      expect(firstPass[resumedAt]!.primary, summary).toBeLessThan(1);
    } finally {
      h.origin.cueForm = 'cue-out';
    }
  }, 90_000);

  it('plays a guided live stream through its interstitial, resuming after the break, while the window moves in real time', async (ctx) => {
    if (!(await hasChromium())) { ctx.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): guided playback is not checked`); return; }
    // hls.js starts about 3 target durations behind the edge: ~3 s of content, then the break. The window stays still
    // until hls.js has loaded its first media playlist, then moves in real time.
    const breakAt = (2 * CLIP_SEGMENTS + BREAK_START) * SEGMENT_SECONDS;
    h.origin.setRealTime(false);
    h.origin.position = breakAt + 3 * SEGMENT_SECONDS - 3;
    try {
      const result = await play(`${h.engine.url}/v1/master/${liveGuid}/live/master.m3u8?ads.mode=guided`, { timeoutMs: 60_000, onFirstLevel: () => h.origin.setRealTime(true) });
      expectThroughTheBreak(result);
      const started = result.events.find((e) => e.name === 'started')!;
      const resumed = result.events.find((e) => e.name === 'resumed')!;
      // live: the break's content is skipped, the primary resumes at the break's end
      expect(resumed.primary - started.primary, JSON.stringify(result.events)).toBeGreaterThan(BREAK_SECONDS - 1.5);
    } finally {
      h.origin.setRealTime(false);
    }
  }, 90_000);
});
