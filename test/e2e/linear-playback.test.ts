// Issue 15 "What done means", end to end: two tiny VODs encoded, a playlist of both with an ad position, a virtual
// channel with listings over the next minutes on the real clock, played through its SSAI playback URL in hls.js in
// Chromium across an item change and an ad break, decoded with ffmpeg; sequence numbers monotonic over reloads; a
// second engine process over the same store answers the same playlist.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VastServer } from '../../fixtures/vast-server.js';
import { brokerPart } from '../../wiring/broker.part.js';
import { foundationPart } from '../../wiring/foundation.part.js';
import { linearPart } from '../../wiring/linear.part.js';
import { createSsaiPart } from '../../wiring/ssai.part.js';
import { vodPart } from '../../wiring/vod.part.js';
import { scanMediaPlaylist, scanMultivariantPlaylist, type MediaSegment } from '../../media/playlist-scanner.js';
import { encodedVod, type BrokerHarness } from '../api/broker/broker-helpers.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestEngine } from '../helpers/engine.js';
import { absoluteSegments, decodeSpans } from '../helpers/hls-decode.js';
import { CHROMIUM, CHROMIUM_ARGS, hasChromium } from '../helpers/hls-player.js';
import { SHARED_CREATIVES } from '../ssai/setup.js';

const PAGE = `<!doctype html><html><body><video id="v" muted playsinline></video><script src="/hls.js"></script><script>
window.result = { levels: 0, errors: [], fatal: null, playedTo: 0, frags: [], buffered: {} };
const v = document.getElementById('v');
// What the player did, when (ms since load): the first 150 events (how it started) and the latest 150 (where it stopped).
window.result.log = [];
const note = (what) => { window.result.log.push(Math.round(performance.now()) + ' ' + what); if (window.result.log.length > 300) window.result.log.splice(150, 1); };
// Generous load timeouts: on a loaded machine a fragment can take many seconds (the defaults end in fragLoadTimeOut).
const slow = { default: { maxTimeToFirstByteMs: 60000, maxLoadTimeMs: 120000, timeoutRetry: { maxNumRetry: 4, retryDelayMs: 0, maxRetryDelayMs: 0 }, errorRetry: { maxNumRetry: 6, retryDelayMs: 1000, maxRetryDelayMs: 8000 } } };
// A minute behind the live edge (the window holds 160 s): the player reaches a break and an item change through media
// already listed, instead of at the pace the window grows (a CI run on a busy machine took past the 240 s deadline).
// Otherwise hls.js's defaults (maxBufferHole 0.1 s): the joins must leave no hole to jump.
// hls.js's own lines of the controllers that create SourceBuffers and start the audio rendition, into the page's log:
// a try that falls short then says which side waited (stop 52: a fragment parsed and no SourceBuffer created).
const said = (level) => (...args) => { const line = args.map(String).join(' '); if (/audio-stream|buffer-controller|audio-track/.test(line)) note(level + ' ' + line.slice(0, 300)); };
const hls = new Hls({ fragLoadPolicy: slow, playlistLoadPolicy: slow, liveSyncDuration: 60, liveMaxLatencyDuration: 120,
  debug: { log: said('log'), info: said('info'), warn: said('warn'), error: said('error'), debug: () => {} } });
hls.on(Hls.Events.MANIFEST_PARSED, (_e, d) => { window.result.levels = d.levels.length; v.play().catch((e) => window.result.errors.push(String(e))); });
hls.on(Hls.Events.ERROR, (_e, d) => {
  if (window.result.errors.length < 40) window.result.errors.push(d.details + '@' + v.currentTime.toFixed(3));
  if (d.fatal) window.result.fatal = d.details;
});
// Buffered ranges per SourceBuffer: a gap between two ranges is a hole the player stalls at (or seeks over).
const ranges = (tr) => Array.from({ length: tr.length }, (_, i) => [tr.start(i), tr.end(i)]);
hls.on(Hls.Events.BUFFER_APPENDED, (_e, d) => {
  for (const [type, tr] of Object.entries(d.timeRanges || {})) if (tr) window.result.buffered[type] = ranges(tr);
});
hls.on(Hls.Events.FRAG_LOADED, (_e, d) => {
  if (d.frag.type !== 'main') return;
  window.result.frags.push({ sn: d.frag.sn, cc: d.frag.cc, start: d.frag.start, end: d.frag.start + d.frag.duration, ad: d.frag.url.includes('/v1/segment/'), url: d.frag.url });
});
v.addEventListener('timeupdate', () => { window.result.playedTo = v.currentTime; });
for (const ev of ['MEDIA_ATTACHING', 'MEDIA_ATTACHED', 'MANIFEST_PARSED', 'LEVEL_LOADED', 'AUDIO_TRACKS_UPDATED', 'AUDIO_TRACK_LOADING', 'AUDIO_TRACK_LOADED', 'FRAG_LOADING', 'FRAG_LOADED', 'FRAG_PARSED', 'FRAG_BUFFERED', 'BUFFER_CODECS', 'BUFFER_CREATED', 'ERROR']) {
  hls.on(Hls.Events[ev], (_e, d) => note(ev + (d.frag ? ' sn ' + d.frag.sn + ' cc ' + d.frag.cc + ' start ' + d.frag.start.toFixed(2) : '') + (d.details && typeof d.details === 'string' ? ' ' + d.details : '') + (d.details && d.details.live !== undefined ? ' live ' + d.details.startSN + '-' + d.details.endSN + ' cc ' + d.details.startCC + '-' + d.details.endCC + ' edge ' + d.details.edge.toFixed(1) : '')));
}
setInterval(() => note('video t ' + v.currentTime.toFixed(2) + ' ready ' + v.readyState + ' paused ' + v.paused + ' buffered ' + ranges(v.buffered).map((r) => r.map((x) => x.toFixed(1)).join('-')).join(',')), 2000);
hls.loadSource(new URLSearchParams(location.search).get('src'));
hls.attachMedia(v);
</script></body></html>`;

const WINDOW = '40';

interface Frag { sn: number; cc: number; start: number; end: number; ad: boolean; url: string }
interface Result { levels: number; errors: string[]; fatal: string | null; playedTo: number; frags: Frag[]; buffered: Record<string, Array<[number, number]>>; log: string[] }

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('a virtual channel with ads, end to end', () => {
  let h: BrokerHarness;
  let vast: VastServer;
  let work: string;
  let page: http.Server;
  let pageBase: string;
  let playback: string;
  let linearPath: string;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'linear-e2e-'));
    vast = await VastServer.start();
    const dataDir = path.join(work, 'data');
    fs.mkdirSync(path.join(dataDir, 'media'), { recursive: true });
    fs.mkdirSync(SHARED_CREATIVES, { recursive: true });
    fs.symlinkSync(SHARED_CREATIVES, path.join(dataDir, 'media', 'creatives'));
    // A long window: Chromium on a loaded 2-core machine falls far behind the edge, and must not slide out of it.
    const engine = await startTestEngine({ dataDir, env: { LINEAR_WINDOW_SEGMENTS: WINDOW }, parts: [foundationPart, vodPart, createSsaiPart({ creativeWaitMs: 120_000, ...(process.env.SSAI_TEST_CUT === '0' ? { cutBeforeUndecidedBreaks: false } : {}) }), brokerPart, linearPart] });
    const admin = { Authorization: (await engine.login()).IdToken };
    const keyUrl = (await engine.api('POST', '/broker/api-keys', { headers: admin, body: { name: 'e2e', active: true } })).body.url as string;
    const key = { 'X-Api-Key': (await engine.api('GET', `/broker/api-keys/${keyUrl.split('/').pop()}`, { headers: admin })).body.data.value as string };
    h = { engine, admin, key } as unknown as BrokerHarness;

    const a = await encodedVod(h, 8, work, 'a');
    // Whole 4 s segments only (as in long VODs), so the proxy's slot length (the window's median segment) is stable.
    const b = await encodedVod(h, 8, work, 'b');
    const playlist = (await engine.api('POST', '/broker/playlists', { headers: admin, body: {
      name: 'a, ad, b', sources: [{ guid: a, type: 'source', ads: [{ start: 4, guid: b, substitute: 0 }] }, { guid: b, type: 'source' }],
    } })).body.guid as string;
    const adinsert = (await engine.api('POST', '/broker/adinserts', { headers: admin, body: {
      name: 'linear ads', type: 'live', ad_server: `${vast.url}/vast3?sid=[session.id]`, source_url: `${engine.ctx.config.publicUrl}/linear/`,
    } })).body.guid as string;
    const channel = (await engine.api('POST', '/broker/channels', { headers: admin, body: {
      name: 'Films with ads', description: 'e2e', active: 1, type: 'virtual', hasAds: 1, adinsert,
    } })).body.guid as string;
    // Started 5 minutes ago (the window holds no slate), for 15 minutes: a 24 s loop (a 4 s, the 8 s break, a 4 s,
    // b 8 s) with a break every 24 s.
    const start = Math.floor(Date.now() / 1000) - 300;
    const put = await engine.api('POST', '/broker/listings/multiple', { headers: admin, body: { channel, start, end: start + 1200, listings: [{ start, end: start + 1200, title: 'films', playlist }] } });
    expect(put.status).toBe(200);
    playback = (await engine.api('GET', `/broker/channels/${channel}`, { headers: admin })).body.data.playbackUrl as string;
    expect(playback).toContain(`/v1/master/${adinsert}/${channel}/`);
    linearPath = `/linear/${playback.split(`/v1/master/${adinsert}/`)[1]!.replace('master.m3u8', 'v0.m3u8')}`;

    // The first break waits while the worker prepares the ad for the channel's ladder; wait for it once here.
    const master = await (await fetch(playback)).text();
    const media = new URL(scanMultivariantPlaylist(master).playlist!.variants[0]!.uri, playback).href;
    const deadline = Date.now() + 150_000;
    for (;;) {
      const text = await (await fetch(media)).text();
      if (text.includes('/v1/segment/')) break;
      if (Date.now() > deadline) throw new Error(`no stitched break: ${text}`);
      await new Promise((r) => setTimeout(r, 1000));
    }

    const hlsJs = await readFile(path.resolve('node_modules/hls.js/dist/hls.min.js'));
    page = http.createServer((req, res) => {
      if (req.url?.startsWith('/hls.js')) return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(hlsJs);
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    });
    await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
    pageBase = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
  }, 400_000);

  afterAll(async () => {
    if (child?.pid && child.exitCode === null) child.kill('SIGTERM');
    await new Promise<void>((r) => (page ? page.close(() => r()) : r()));
    await h?.engine.close();
    await vast?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  // Stop 38 saw these runs never start playing (the first fragment loaded, nothing buffered, the renderer at 100% CPU):
  // the channel's discontinuity sequence, counted from 1970, was ~224 million, and hls.js 1.7 walks an array indexed by
  // it on every playlist load (5 s each). Numbers now count from the channel's origin (packager/linear/timeline.ts).
  // Retried once against a loaded machine; a regression in what the channel serves fails both tries.
  it('plays in hls.js through an item change and an ad break', { retry: 1, timeout: 300_000 }, async (ctx) => {
    if (!(await hasChromium())) { ctx.skip(`Chromium is not installed at ${CHROMIUM}: playback is not checked`); return; }
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    let result: Result;
    let waitedAdEnd: number | undefined;
    try {
      const tab = await browser.newPage();
      await tab.goto(`${pageBase}/?src=${encodeURIComponent(playback)}`);
      // Done 1 s after the end of the first break whose ads content follows, with at least three items (cc values)
      // loaded. The wait answers that break's end: the player loads ahead (a break every 24 s, its buffer 30 s), so
      // the ads loaded last are usually of a break not played yet, and waiting past them could wait for good.
      waitedAdEnd = await tab.waitForFunction(() => {
        const r = (window as unknown as { result: Result }).result;
        if (r.fatal !== null) return -1;
        const endOfBreak = new Map<string, number>();
        for (const f of r.frags) {
          if (!f.ad) continue;
          const id = f.url.split('/v1/segment/')[1]?.split('/')[2] ?? '';
          endOfBreak.set(id, Math.max(endOfBreak.get(id) ?? 0, f.end));
        }
        if (!endOfBreak.size) return false;
        const end = Math.min(...endOfBreak.values());
        return new Set(r.frags.map((f) => f.cc)).size >= 3 && r.frags.some((f) => !f.ad && f.start >= end - 0.2) && r.playedTo > end + 1 && end;
      }, undefined, { timeout: 240_000, polling: 500 }).then((handle) => handle.jsonValue() as Promise<number>, () => undefined);
      result = await tab.evaluate(() => (window as unknown as { result: Result }).result);
    } finally {
      await browser.close();
    }
    const summary = JSON.stringify(result);
    expect(result.fatal, summary).toBeNull();
    expect(result.levels).toBe(1);
    const loadedAds = result.frags.filter((f) => f.ad);
    expect(loadedAds.length, summary).toBeGreaterThan(0);
    const adEnd = waitedAdEnd !== undefined && waitedAdEnd > 0 ? waitedAdEnd : Math.max(...loadedAds.map((f) => f.end));
    // the ads played through: those that end by adEnd (not a next break loaded ahead)
    const ads = loadedAds.filter((f) => f.end <= adEnd + 0.01);
    const adStart = Math.min(...ads.map((f) => f.start));
    expect(result.playedTo, summary).toBeGreaterThan(adEnd + 1);
    // content of both VODs played (an item change), and content came before and after the ad
    const content = result.frags.filter((f) => !f.ad);
    expect(new Set(content.map((f) => f.url.split('/vod/')[1]?.split('/')[0])).size, summary).toBeGreaterThanOrEqual(2);
    expect(content.some((f) => f.end <= adStart + 0.2) || result.frags[0]!.ad, summary).toBe(true);
    expect(content.some((f) => f.start >= adEnd - 0.2), summary).toBe(true);
    // No hole at the joins: no gap between a SourceBuffer's ranges beyond two AAC frames (Chromium joins smaller ones),
    // and hls.js never jumped one or nudged playback. A bare bufferStalledError is a starved buffer on a loaded machine.
    const holes = Object.entries(result.buffered).flatMap(([type, r]) => r.slice(1).map(([start], i) => ({ type, from: r[i]![1], to: start })))
      .filter((h) => h.to - h.from > 0.04);
    expect(holes, summary).toEqual([]);
    expect(result.errors.filter((e) => /^buffer(SeekOverHole|NudgeOnStall)/.test(e)), summary).toEqual([]);
  });

  it('plays in hls.js through several breaks, each announced ahead, with no fatal error (issue 26)', { retry: 1, timeout: 450_000 }, async (ctx) => {
    if (!(await hasChromium())) { ctx.skip(`Chromium is not installed at ${CHROMIUM}: playback is not checked`); return; }
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    let result: Result;
    const breakOf = (f: Frag) => decodeURIComponent(f.url.split('/v1/segment/')[1]?.split('/')[2] ?? '');
    // Chromium's view of the requests (a try that stalled loaded and parsed its first fragment but never created a
    // SourceBuffer): those still open at the end, and those that failed, logged when a try falls short.
    const opened = Date.now();
    const openRequests = new Map<object, string>();
    let stillOpen: string[] = [];
    const failedRequests: string[] = [];
    try {
      const tab = await browser.newPage();
      tab.on('request', (r) => { openRequests.set(r, `${Date.now() - opened} ms ${r.method()} ${r.url()}`); });
      tab.on('requestfinished', (r) => { openRequests.delete(r); });
      tab.on('requestfailed', (r) => {
        openRequests.delete(r);
        if (failedRequests.length < 50) failedRequests.push(`${Date.now() - opened} ms ${r.url()} ${r.failure()?.errorText ?? ''}`);
      });
      await tab.goto(`${pageBase}/?src=${encodeURIComponent(playback)}`);
      // Done once three breaks' ads are loaded and the second's played through (a break every 24 s), or on a fatal error.
      await tab.waitForFunction(() => {
        const r = (window as unknown as { result: Result }).result;
        if (r.fatal !== null) return true;
        const ads = r.frags.filter((f) => f.ad);
        const breaks = [...new Set(ads.map((f) => f.url.split('/v1/segment/')[1]?.split('/')[2]))];
        if (breaks.length < 3) return false;
        const second = ads.filter((f) => f.url.split('/v1/segment/')[1]?.split('/')[2] === breaks[1]);
        return r.playedTo > Math.max(...second.map((f) => f.end)) + 1;
      }, undefined, { timeout: 420_000, polling: 1000 }).catch(() => undefined);
      result = await tab.evaluate(() => (window as unknown as { result: Result }).result);
      stillOpen = [...openRequests.values()]; // (before the browser closes and aborts them)
    } finally {
      await browser.close();
    }
    const summary = JSON.stringify({ ...result, frags: result.frags.map((f) => `${f.sn}${f.ad ? ` ${breakOf(f)}` : ''}@${f.start.toFixed(1)}`) });
    const breaks = new Set(result.frags.filter((f) => f.ad).map(breakOf));
    // A try that falls short is retried, and a retry that passes hides its message: the CI log keeps what the player saw.
    if (result.fatal !== null || breaks.size < 3) {
      // (the player's log a line an event: one line of all of it was cut short in the CI log)
      console.log(`linear playback fell short at ${new Date().toISOString()}: ${JSON.stringify({ ...result, log: undefined, frags: result.frags.length })}\n${result.log.join('\n')}`);
      console.log(`requests still open: ${JSON.stringify(stillOpen.slice(0, 50))}; failed: ${JSON.stringify(failedRequests)}`);
    }
    expect(result.fatal, summary).toBeNull();
    expect(result.errors.filter((e) => /levelParsingError|levelLoadError|fragParsingError/.test(e)), summary).toEqual([]);
    expect(breaks.size, summary).toBeGreaterThanOrEqual(3);
    // A number loaded twice named the same media both times (hls.js reloads a fragment only on a level switch or error).
    const bySn = new Map<number, string>();
    for (const f of result.frags) {
      const known = bySn.get(f.sn);
      if (known !== undefined) expect(f.url.replace(/\/v1\/segment\/[^/]+\/[^/]+\//, ''), summary).toBe(known);
      bySn.set(f.sn, f.url.replace(/\/v1\/segment\/[^/]+\/[^/]+\//, ''));
    }
  });

  it('keeps sequence numbers monotonic over reloads and decodes the stitched timeline with ffmpeg', async () => {
    const master = await (await fetch(playback)).text();
    const pl = scanMultivariantPlaylist(master).playlist!;
    // the video and the audio rendition side by side, as a player reloads them
    await Promise.all([pl.variants[0]!.uri, pl.renditions.find((r) => r.type === 'AUDIO')!.uri!].map(async (uri) => {
      const url = new URL(uri, playback).href;
      const bySequence = new Map<number, MediaSegment>();
      let last = -1;
      let lastDisc = -1;
      const until = Date.now() + 24_000;
      while (Date.now() < until) {
        const media = scanMediaPlaylist(await (await fetch(url)).text()).playlist!;
        expect(media.mediaSequence).toBeGreaterThanOrEqual(last);
        expect(media.discontinuitySequence).toBeGreaterThanOrEqual(lastDisc);
        last = media.mediaSequence;
        lastDisc = media.discontinuitySequence;
        for (const s of absoluteSegments(media.segments, url)) {
          const known = bySequence.get(s.mediaSequence);
          if (known) expect(known.discontinuitySequence, `segment ${s.mediaSequence} changed between reloads`).toBe(s.discontinuitySequence);
          else bySequence.set(s.mediaSequence, s);
        }
        await new Promise((r) => setTimeout(r, 2000));
      }
      const segments = [...bySequence.values()].sort((x, y) => x.mediaSequence - y.mediaSequence);
      expect(segments.map((s, i) => s.mediaSequence - i)).toEqual(segments.map(() => segments[0]!.mediaSequence));
      expect(segments.some((s) => s.uri.includes('/v1/segment/'))).toBe(true);
      const decoded = await decodeSpans(segments, work, `timeline-${path.basename(uri)}`);
      expect(decoded.spans).toBeGreaterThanOrEqual(4);
      expect(decoded.errors).toBe('');
    }));
  }, 120_000);

  it('answers the same linear playlist from a second engine process over the same store', async () => {
    const port = await freePort();
    child = spawn(process.execPath, [path.resolve('bin/engine.js'), 'start'], {
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: h.engine.dataDir, PUBLIC_URL: h.engine.ctx.config.publicUrl,
        ENGINE_ROLES: 'packager', LINEAR_WINDOW_SEGMENTS: WINDOW, ENGINE_ADMIN_EMAIL: ADMIN_EMAIL, ENGINE_ADMIN_PASSWORD: ADMIN_PASSWORD, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const other = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 60_000;
    while (!(await fetch(`${other}${linearPath}`).then((r) => r.ok, () => false))) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error('the second engine did not answer');
      await new Promise((r) => setTimeout(r, 250));
    }
    let compared = 0;
    for (let attempt = 0; attempt < 20 && compared < 3; attempt++) {
      const one = await (await fetch(`${h.engine.url}${linearPath}`)).text();
      const two = await (await fetch(`${other}${linearPath}`)).text();
      const again = await (await fetch(`${h.engine.url}${linearPath}`)).text();
      if (one !== again) continue; // a window boundary passed between the requests
      expect(two).toBe(one);
      compared++;
      await new Promise((r) => setTimeout(r, 1500));
    }
    expect(compared).toBe(3);
  }, 120_000);
});
