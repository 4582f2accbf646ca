// Issue 26 §2 "What done means": a low-latency origin made by the test (real fMP4 cut into 0.5 s parts, blocking
// reloads held until the part exists, a CUE-OUT break every 30 s) played through the proxy in hls.js with
// `lowLatencyMode: true` through a stitched break: no fatal error, parts played before the break, the ads loaded as
// whole segments, playback past the break's end, and the origin saw blocking requests with _HLS_msn (sent on by the proxy).
// Guided (issue 30): the same low-latency stream with the break as an HLS Interstitial, its two ads played in turn.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LL_BREAK_AT, LL_BREAK_SEGMENTS, LL_LOOP_SEGMENTS, LL_SEGMENT_SECONDS, LlOriginServer } from '../../fixtures/ll-origin-server.js';
import { VastServer } from '../../fixtures/vast-server.js';
import { scanMultivariantPlaylist } from '../../media/playlist-scanner.js';
import type { TestEngine } from '../helpers/engine.js';
import { CHROMIUM, CHROMIUM_ARGS, hasChromium, servePage } from '../helpers/hls-player.js';
import { startEngineWith } from '../ssai/setup.js';

const PAGE = `<!doctype html><html><body><video id="v" muted playsinline></video><script src="/hls.js"></script><script>
window.result = { errors: [], fatal: null, playedTo: 0, frags: [], parts: 0, reloads: [], events: [] };
const v = document.getElementById('v');
const hls = new Hls({ lowLatencyMode: true });
hls.on(Hls.Events.MANIFEST_PARSED, () => { v.play().catch((e) => window.result.errors.push(String(e))); });
hls.on(Hls.Events.ERROR, (_e, d) => {
  const what = [d.details, d.response ? d.response.code : '', d.error ? d.error.message : '', d.frag ? d.frag.url : ''].join(' ');
  if (window.result.errors.length < 40) window.result.errors.push(what);
  if (d.fatal) window.result.fatal = what;
});
hls.on(Hls.Events.LEVEL_LOADING, (_e, d) => { if (window.result.reloads.length < 400) window.result.reloads.push(d.url); });
hls.on(Hls.Events.FRAG_LOADED, (_e, d) => {
  if (d.frag.type !== 'main') return;
  if (d.part) window.result.parts++;
  const at = d.part || d.frag;
  if (window.result.frags.length < 500) window.result.frags.push({ sn: d.frag.sn, start: at.start, end: at.start + at.duration, ad: d.frag.url.includes('/v1/segment/'), part: !!d.part });
});
// guided sessions: the interstitial events, with the primary's playhead when each came
const note = (name, extra) => { if (window.result.events.length < 200) window.result.events.push({ name, primary: hls.interstitialsManager ? hls.interstitialsManager.primary.currentTime : v.currentTime, ...(extra || {}) }); };
hls.on(Hls.Events.INTERSTITIAL_STARTED, (_e, d) => note('started', { id: d.event.identifier }));
hls.on(Hls.Events.INTERSTITIAL_ASSET_STARTED, (_e, d) => note('asset-started', { index: d.assetListIndex }));
hls.on(Hls.Events.INTERSTITIAL_ASSET_ERROR, (_e, d) => note('asset-error', { error: String(d.error && d.error.message) }));
hls.on(Hls.Events.INTERSTITIAL_ENDED, (_e, d) => note('ended', { id: d.event.identifier }));
hls.on(Hls.Events.INTERSTITIALS_PRIMARY_RESUMED, () => note('resumed'));
v.addEventListener('timeupdate', () => { window.result.playedTo = hls.interstitialsManager ? hls.interstitialsManager.primary.currentTime : v.currentTime; });
hls.loadSource(new URLSearchParams(location.search).get('src'));
hls.attachMedia(v);
</script></body></html>`;

interface Frag { sn: number; start: number; end: number; ad: boolean; part: boolean }

/** The end of the first break hls.js loaded: the last ad fragment of the first run of ads, in sequence order. */
function firstBreakEnd(frags: Frag[]): number | undefined {
  const sorted = [...frags].sort((a, b) => a.sn - b.sn || a.start - b.start);
  const first = sorted.findIndex((f) => f.ad);
  if (first < 0) return undefined;
  let end = sorted[first]!.end;
  for (let i = first + 1; i < sorted.length && sorted[i]!.ad; i++) end = sorted[i]!.end;
  return end;
}
interface GuidedEvent { name: string; primary: number; id?: string; index?: number; error?: string }
interface Result { errors: string[]; fatal: string | null; playedTo: number; frags: Frag[]; parts: number; reloads: string[]; events: GuidedEvent[] }

async function until(what: string, ok: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.runIf(await hasChromium())('LL-HLS through the SSAI proxy in hls.js low-latency mode', () => {
  let origin: LlOriginServer;
  let vast: VastServer;
  let engine: TestEngine;
  let guid = '';
  let page: Awaited<ReturnType<typeof servePage>> | undefined;
  let pageBase = '';

  beforeAll(async () => {
    [origin, vast] = await Promise.all([LlOriginServer.start(), VastServer.start()]);
    engine = await startEngineWith();
    const auth = { Authorization: (await engine.login()).IdToken };
    const created = await engine.api('POST', '/broker/adinserts', {
      headers: auth, body: { name: 'll', type: 'live', ad_server: `${vast.url}/vast4?sid=[session.id]`, source_url: `${origin.url}/` },
    });
    guid = created.body.guid as string;
    page = await servePage(() => PAGE);
    pageBase = page.base;
    // Prepares the creatives for this content once, with a break in the window, so no player request waits on the encoder.
    origin.seek((LL_BREAK_AT + 3) * LL_SEGMENT_SECONDS);
    const master = await (await fetch(`${engine.url}/v1/master/${guid}/ll/master.m3u8`)).text();
    const media = `${engine.url}${scanMultivariantPlaylist(master).playlist!.variants[0]!.uri}`;
    await until('the warm-up break to be stitched', async () => (await (await fetch(media)).text()).includes('/v1/segment/'), 240_000);
  }, 300_000);

  afterAll(async () => {
    await page?.close();
    await engine?.close();
    await Promise.all([origin?.close(), vast?.close()]);
  });

  it('plays parts, then the stitched break as whole segments, then content again, with blocking reloads reaching the origin', async () => {
    // The live edge four segments before the next loop's break: the player starts on parts and meets the cue live.
    const breakMsn = LL_LOOP_SEGMENTS + LL_BREAK_AT;
    origin.seek((breakMsn - 4) * LL_SEGMENT_SECONDS);
    const blockingBefore = origin.count('_HLS_msn=');
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    let result: Result;
    try {
      const tab = await browser.newPage();
      await tab.goto(`${pageBase}/?src=${encodeURIComponent(`${engine.url}/v1/master/${guid}/ll/master.m3u8`)}`);
      const read = (): Promise<Result> => tab.evaluate(() => (window as unknown as { result: Result }).result);
      // Until the player is a few seconds past the last ad fragment it loaded (or fails).
      await until('playback past the break', async () => {
        const r = await read();
        if (r.fatal) return true;
        const end = firstBreakEnd(r.frags);
        return end !== undefined && r.frags.some((f) => !f.ad && f.start >= end - 0.1) && r.playedTo > end + 2;
      }, 150_000).catch(() => undefined);
      result = await read();
    } finally {
      await browser.close();
    }
    const summary = JSON.stringify({ fatal: result.fatal, errors: result.errors.slice(0, 10), playedTo: result.playedTo, parts: result.parts, frags: result.frags.filter((f) => !f.part || f.ad).slice(-20) });
    expect(result.fatal, summary).toBeNull();
    expect(result.parts, `hls.js loaded parts: ${summary}`).toBeGreaterThan(0);
    const adEnd = firstBreakEnd(result.frags);
    expect(adEnd, `hls.js loaded ads: ${summary}`).toBeDefined();
    // Ads come as whole segments, never as parts.
    expect(result.frags.filter((f) => f.ad && f.part), summary).toEqual([]);
    expect(result.playedTo, summary).toBeGreaterThan(adEnd! + 2);
    expect(result.frags.some((f) => !f.ad && f.start >= adEnd! - 0.1), summary).toBe(true);
    // The player's blocking reloads went to the proxy with directives, and the proxy sent them on to the origin.
    expect(result.reloads.some((u) => u.includes('/v1/manifest/') && u.includes('_HLS_msn=')), summary).toBe(true);
    expect(origin.count('_HLS_msn=') - blockingBefore).toBeGreaterThan(0);
    expect(origin.requests.some((u) => u.includes('_HLS_skip'))).toBe(false);
  }, 200_000);
  it('plays a guided LL-HLS stream: parts, the interstitial of the break with its two ads, then the primary again past the break', async () => {
    const breakMsn = 2 * LL_LOOP_SEGMENTS + LL_BREAK_AT;
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    let result: Result;
    try {
      const tab = await browser.newPage();
      // The edge four segments before a break once the browser is up. A player that joins later meets the next
      // break, 30 s on: the wait is for the first interstitial the player resumes from, whichever it is.
      origin.seek((breakMsn - 4) * LL_SEGMENT_SECONDS);
      await tab.goto(`${pageBase}/?src=${encodeURIComponent(`${engine.url}/v1/master/${guid}/ll/master.m3u8?ads.mode=guided`)}`);
      const read = (): Promise<Result> => tab.evaluate(() => (window as unknown as { result: Result }).result);
      await until('playback past a guided break', async () => {
        const r = await read();
        if (r.fatal) return true;
        const resumed = r.events.find((e) => e.name === 'resumed' && r.events.some((s) => s.name === 'started'));
        return resumed !== undefined && r.playedTo > resumed.primary + 2;
      }, 150_000).catch(() => undefined);
      result = await read();
    } finally {
      await browser.close();
    }
    const summary = JSON.stringify({ fatal: result.fatal, errors: result.errors.slice(0, 10), playedTo: result.playedTo, parts: result.parts, events: result.events });
    expect(result.fatal, summary).toBeNull();
    expect(result.parts, `hls.js loaded parts: ${summary}`).toBeGreaterThan(0);
    expect(result.events.filter((e) => e.name === 'asset-error'), summary).toEqual([]);
    const started = result.events.find((e) => e.name === 'started');
    expect(started, summary).toBeDefined();
    const firstPass = result.events.slice(result.events.indexOf(started!));
    const resumedAt = firstPass.findIndex((e) => e.name === 'resumed');
    expect(resumedAt, summary).toBeGreaterThan(0);
    // vast4 fills the break with two ads, a then b, and the content's own break is skipped (live resume offset)
    expect(firstPass.slice(0, resumedAt).filter((e) => e.name === 'asset-started').map((e) => e.index), summary).toEqual([0, 1]);
    expect(firstPass[resumedAt]!.primary - started!.primary, summary).toBeGreaterThan(LL_BREAK_SEGMENTS * LL_SEGMENT_SECONDS - 1.5);
    // no ad came as a content part: the primary's fragments are the origin's
    expect(result.frags.filter((f) => f.ad), summary).toEqual([]);
    expect(result.playedTo, summary).toBeGreaterThan(firstPass[resumedAt]!.primary + 2);
  }, 200_000);
});
