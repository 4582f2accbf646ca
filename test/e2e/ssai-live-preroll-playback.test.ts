// Issue 31 item 4 in a real player: a viewer joining a live stream in hls.js 1.7 (Chromium) sees the pre-roll first.
// Guided: hls.js plays the CUE="PRE" interstitial's asset list before the live content, then joins live. Stitched:
// the player starts at the pre-roll's ads (its beacons fire from the segments it fetched) and plays on into the content.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { startSsai, type SsaiHarness } from '../ssai/setup.js';
import { CHROMIUM, CHROMIUM_ARGS, hasChromium, servePage } from '../helpers/hls-player.js';

/** The player page: hls.js with its interstitial events and the segments it loaded recorded. */
const PAGE = `<!doctype html><html><body><video id="v" muted playsinline></video><script src="/hls.js"></script><script>
const q = new URLSearchParams(location.search);
window.result = { errors: [], fatal: null, events: [], frags: [], playedTo: 0, startedAt: null };
const v = document.getElementById('v');
const hls = new Hls();
const note = (name, extra) => window.result.events.push({ name, primary: hls.interstitialsManager ? hls.interstitialsManager.primary.currentTime : v.currentTime, ...(extra || {}) });
hls.on(Hls.Events.MANIFEST_PARSED, () => { v.play().catch((e) => window.result.errors.push(String(e))); });
hls.on(Hls.Events.ERROR, (_e, d) => {
  if (window.result.errors.length < 40) window.result.errors.push([d.details, d.url || ''].join(' '));
  if (d.fatal) window.result.fatal = d.details;
});
hls.on(Hls.Events.FRAG_LOADED, (_e, d) => { if (window.result.frags.length < 200) window.result.frags.push(d.frag.url); });
hls.on(Hls.Events.ASSET_LIST_LOADED, (_e, d) => note('asset-list', { assets: d.assetListResponse.ASSETS.length }));
hls.on(Hls.Events.INTERSTITIAL_STARTED, (_e, d) => note('started', { id: d.event.identifier }));
hls.on(Hls.Events.INTERSTITIAL_ASSET_STARTED, (_e, d) => note('asset-started', { index: d.assetListIndex }));
hls.on(Hls.Events.INTERSTITIAL_ENDED, (_e, d) => note('ended', { id: d.event.identifier }));
hls.on(Hls.Events.INTERSTITIALS_PRIMARY_RESUMED, () => note('resumed'));
v.addEventListener('timeupdate', () => { window.result.playedTo = v.currentTime; });
v.addEventListener('playing', () => { if (window.result.startedAt === null) window.result.startedAt = v.currentTime; });
hls.loadSource(q.get('src'));
hls.attachMedia(v);
</script></body></html>`;

interface Result { errors: string[]; fatal: string | null; events: Array<{ name: string; primary: number; id?: string; index?: number; assets?: number }>; frags: string[]; playedTo: number; startedAt: number | null }

describe('live pre-roll in hls.js', () => {
  let h: SsaiHarness;
  let page: Awaited<ReturnType<typeof servePage>> | undefined;
  let pageBase = '';

  beforeAll(async () => {
    h = await startSsai({ origin: { layout: 'muxed-ts' } });
    page = await servePage(() => PAGE);
    pageBase = page.base;
  }, 240_000);

  afterAll(async () => {
    h?.origin.setRealTime(false);
    await h?.close();
    await page?.close();
  });

  /** A configuration whose pre-roll is ad a (6 s: /vast4 gives 10 s, the maximum keeps 6). */
  async function configure(): Promise<string> {
    const created = await h.engine.api('POST', '/broker/adinserts', {
      headers: h.auth,
      body: { name: 'preroll', type: 'live', ad_server: `${h.vast.url}/empty`, source_url: `${h.origin.url}/`,
        live_preroll_ad_server: `${h.vast.url}/vast4`, live_preroll_max_seconds: 6 },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.guid as string;
  }

  /** Plays `src` until `done` holds for the page's result (or a fatal error), the window moving in real time. */
  async function play(src: string, done: (r: Result) => boolean, timeoutMs: number): Promise<Result> {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const tab = await browser.newPage();
      await tab.goto(`${pageBase}/?${new URLSearchParams({ src })}`);
      await tab.waitForFunction(`(() => { const r = window.result; return r.fatal !== null || (${done.toString()})(r); })()`, undefined, { timeout: timeoutMs, polling: 250 }).catch(() => undefined);
      return await tab.evaluate(() => (window as unknown as { result: Result }).result);
    } finally {
      await browser.close();
    }
  }

  it('plays the guided pre-roll before the live content, then joins live', async (ctx) => {
    if (!(await hasChromium())) { ctx.skip(`Chromium is not installed at ${CHROMIUM}: live pre-roll playback is not checked`); return; }
    const guid = await configure();
    h.origin.cueForm = 'none';
    h.origin.position = (10 * CLIP_SEGMENTS + BREAK_START - 1) * SEGMENT_SECONDS;
    h.origin.setRealTime(true);
    try {
      const result = await play(`${h.engine.url}/v1/master/${guid}/live/master.m3u8?ads.mode=guided`,
        (r) => { const at = r.events.findIndex((e) => e.name === 'resumed'); return at >= 0 && r.playedTo > 0 && r.events.length > at; }, 60_000);
      const summary = JSON.stringify({ ...result, frags: result.frags.length });
      expect(result.fatal, summary).toBeNull();
      const started = result.events.find((e) => e.name === 'started');
      expect(started?.id, summary).toBe('preroll');
      expect(result.events.find((e) => e.name === 'asset-list')?.assets, summary).toBe(1);
      const firstPass = result.events.slice(result.events.indexOf(started!));
      const resumedAt = firstPass.findIndex((e) => e.name === 'resumed');
      expect(resumedAt, summary).toBeGreaterThan(0);
      expect(firstPass.slice(0, resumedAt).filter((e) => e.name === 'asset-started').map((e) => e.index), summary).toEqual([0]);
      expect(firstPass.slice(0, resumedAt).some((e) => e.name === 'ended' && e.id === 'preroll'), summary).toBe(true);
      // no resume offset: the player joins live after the pre-roll, past the content that went by meanwhile
      expect(firstPass[resumedAt]!.primary - started!.primary, summary).toBeGreaterThan(4);
      await h.engine.ctx.services.ssai!.beacons.idle();
      expect(h.vast.beaconCount('impression', 'a'), summary).toBeGreaterThanOrEqual(1);
    } finally {
      h.origin.setRealTime(false);
      h.origin.cueForm = 'cue-out';
    }
  }, 90_000);

  it('starts a stitched viewer at the pre-roll\'s ads and plays on into the content', async (ctx) => {
    if (!(await hasChromium())) { ctx.skip(`Chromium is not installed at ${CHROMIUM}: live pre-roll playback is not checked`); return; }
    const guid = await configure();
    h.origin.cueForm = 'none';
    h.origin.position = (20 * CLIP_SEGMENTS + BREAK_START - 1) * SEGMENT_SECONDS;
    const impressions = h.vast.beaconCount('impression', 'a');
    h.origin.setRealTime(true);
    try {
      // until the player loaded content after the pre-roll's ads
      const result = await play(`${h.engine.url}/v1/master/${guid}/live/master.m3u8`, (r) => {
        const ad = r.frags.findIndex((u) => u.includes('/preroll/'));
        return ad >= 0 && r.frags.slice(ad).some((u) => !u.includes('/v1/segment/')) && r.startedAt !== null && r.playedTo - r.startedAt > 8;
      }, 60_000);
      const summary = JSON.stringify(result);
      expect(result.fatal, summary).toBeNull();
      // the first media segment the player loaded is the pre-roll's first
      expect(result.frags[0], summary).toMatch(/\/preroll\/0\/\d+\/0\.ts$/);
      // played through the 6 s ad and on into the content
      expect(result.playedTo - (result.startedAt ?? Infinity), summary).toBeGreaterThan(8);
      expect(result.frags.slice(result.frags.findIndex((u) => u.includes('/preroll/'))).some((u) => !u.includes('/v1/segment/')), summary).toBe(true);
      await h.engine.ctx.services.ssai!.beacons.idle();
      expect(h.vast.beaconCount('impression', 'a') - impressions, summary).toBe(1);
    } finally {
      h.origin.setRealTime(false);
      h.origin.cueForm = 'cue-out';
    }
  }, 90_000);
});
