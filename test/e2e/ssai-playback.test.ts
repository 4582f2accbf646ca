// Issue 5 and issue 19 "What done means": a stitched live stream and a stitched VOD stream, through the real engine proxy
// with the fixture origin and ad server, for a muxed MPEG-TS origin, a muxed fMP4 origin and a demuxed fMP4 origin,
// decode with ffmpeg without errors (frame count matching the duration) and play in hls.js in Chromium through the ad
// and back (currentTime passes the ad start and the ad end, no fatal hls.js error, audio buffered through the ad).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_SECONDS, BREAK_START, CLIP_SEGMENTS, LAYOUTS, SEGMENT_SECONDS, type OriginLayout } from '../../fixtures/origin-server.js';
import { scanMediaPlaylist, scanMultivariantPlaylist, type MediaSegment } from '../../media/playlist-scanner.js';
import { startSsai, type SsaiHarness } from '../ssai/setup.js';
import { CHROMIUM, CHROMIUM_ARGS, hasChromium, servePage } from '../helpers/hls-player.js';
import { absoluteSegments, decodeSpans, type Decoded } from '../helpers/hls-decode.js';


/** The player page: hls.js, plus the main-track fragments it loaded (ad ones are the /v1/segment/ URIs). */
const PAGE = `<!doctype html><html><body><video id="v" muted playsinline></video><script src="/hls.js"></script><script>
const q = new URLSearchParams(location.search);
window.result = { levels: 0, levelLoads: 0, errors: [], fatal: null, playedTo: 0, times: [], frags: [], audio: [], adAudioAppends: 0 };
const v = document.getElementById('v');
const hls = new Hls({ startPosition: Number(q.get('start') ?? -1) });
hls.on(Hls.Events.MANIFEST_PARSED, (_e, d) => { window.result.levels = d.levels.length; v.play().catch((e) => window.result.errors.push(String(e))); });
hls.on(Hls.Events.ERROR, (_e, d) => {
  const what = [d.details, d.response ? d.response.code : '', d.error ? d.error.message : '', d.frag ? d.frag.url : ''].join(' ');
  if (window.result.errors.length < 40) window.result.errors.push(what);
  if (d.fatal) window.result.fatal = what;
});
hls.on(Hls.Events.LEVEL_LOADED, () => { window.result.levelLoads++; });
hls.on(Hls.Events.FRAG_LOADED, (_e, d) => {
  if (d.frag.type !== 'main') return;
  window.result.frags.push({ sn: d.frag.sn, start: d.frag.start, end: d.frag.start + d.frag.duration, ad: d.frag.url.includes('/v1/segment/') });
});
hls.on(Hls.Events.BUFFER_APPENDED, (_e, d) => {
  // Audio reaches the buffer from ad fragments (muxed: the main fragment; demuxed: the audio track's).
  if (d.type === 'audio' || d.type === 'audiovideo') {
    if (d.frag && d.frag.url.includes('/v1/segment/')) window.result.adAudioAppends++;
    const r = d.timeRanges && (d.timeRanges.audio || d.timeRanges.audiovideo);
    if (r) { window.result.audio = []; for (let i = 0; i < r.length; i++) window.result.audio.push([r.start(i), r.end(i)]); }
  }
});
v.addEventListener('timeupdate', () => { window.result.playedTo = v.currentTime; window.result.times.push(v.currentTime); });
v.addEventListener('playing', () => { v.playbackRate = Number(q.get('rate') ?? 1); });
hls.loadSource(q.get('src'));
hls.attachMedia(v);
</script></body></html>`;

interface Frag { sn: number; start: number; end: number; ad: boolean }
interface PlaybackResult { levels: number; levelLoads: number; errors: string[]; fatal: string | null; playedTo: number; times: number[]; frags: Frag[]; audio: Array<[number, number]>; adAudioAppends: number }

/**
 * The first break's span in the main track as hls.js placed it: its first ad fragment's start, the end of the ad
 * fragments that follow it without a gap in numbers (a live origin breaks every 20 s: hls.js may load the next break
 * before the playhead has left the first).
 */
function adSpan(frags: Frag[]): { start: number; end: number } | undefined {
  const ads = [...new Map(frags.filter((f) => f.ad).map((f) => [f.sn, f])).values()].sort((a, b) => a.sn - b.sn);
  const first = ads[0];
  if (!first) return undefined;
  let last = first;
  for (const f of ads.slice(1)) if (f.sn === last.sn + 1) last = f; else break;
  return { start: first.start, end: last.end };
}


describe.each<OriginLayout>(['muxed-ts', 'muxed-fmp4', 'demuxed-fmp4'])('stitched playback end to end, %s origin', (layout) => {
  const fps = LAYOUTS[layout].fps;
  const demuxed = layout === 'demuxed-fmp4';
  let h: SsaiHarness;
  let liveGuid: string;
  let vodGuid: string;
  let page: Awaited<ReturnType<typeof servePage>> | undefined;
  let pageBase = '';
  let work = '';

  beforeAll(async () => {
    h = await startSsai({ origin: { layout } });
    // vast4: ads a (6 s) and b (4 s) fill the whole 10 s break, so the content resumes exactly at the CUE-IN.
    liveGuid = await h.configure('/vast4?sid=[session.id]');
    vodGuid = await h.configure('/vast4?sid=[session.id]', { type: 'broker' });
    work = await mkdtemp(path.join(os.tmpdir(), 'ssai-e2e-'));
    page = await servePage(() => PAGE);
    pageBase = page.base;
    // Prepares the creatives for the content ladder once (shared by the VOD and live sessions: same ladder), so no
    // player request waits on the encoder.
    const master = await h.get(`/v1/master/${vodGuid}/vod/master.m3u8`);
    const first = scanMultivariantPlaylist(master.text).playlist!.variants[0]!.uri;
    const media = await h.get(first);
    expect(media.text, 'the VOD break is stitched once the creatives are prepared').toContain('/v1/segment/');
  }, 240_000);

  afterAll(async () => {
    await h?.close();
    await page?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** A decoded track: its frames (video) or decoded seconds (audio) match its duration within one segment, audio in every span of a muxed track. */
  function expectWholeTrack(d: Decoded, kind: 'video' | 'audio', what: string): void {
    expect(d.errors, what).toBe('');
    if (kind === 'video') expect(Math.abs(d.frames - d.seconds * fps), `${what}: ${d.frames} frames for ${d.seconds} s`).toBeLessThanOrEqual(SEGMENT_SECONDS * fps);
    else expect(Math.abs(d.decodedSeconds - d.seconds), `${what}: ${d.decodedSeconds} s decoded for ${d.seconds} s`).toBeLessThanOrEqual(SEGMENT_SECONDS);
    if (!demuxed || kind === 'audio') expect(d.spansWithoutAudio, `${what}: spans without audio`).toBe(0);
  }

  /** the media playlists (video variants and audio renditions) of a stitched master */
  async function mediaUrls(guid: string, source: string): Promise<{ video: string[]; audio: string[] }> {
    const master = await h.get(`/v1/master/${guid}/${source}`);
    expect(master.status).toBe(200);
    const pl = scanMultivariantPlaylist(master.text).playlist!;
    return { video: pl.variants.map((v) => v.uri), audio: pl.renditions.filter((r) => r.type === 'AUDIO' && r.uri).map((r) => r.uri!) };
  }

  it('decodes the stitched VOD media playlists (content from the origin, ads through /v1/segment redirects) with ffmpeg', async () => {
    const { video, audio } = await mediaUrls(vodGuid, 'vod/master.m3u8');
    expect(video.length).toBe(2);
    expect(audio.length).toBe(demuxed ? 2 : 0);
    for (const u of [...video, ...audio]) {
      const text = (await h.get(u)).text;
      const pl = scanMediaPlaylist(text).playlist!;
      expect(pl.endList).toBe(true);
      const ads = pl.segments.filter((s) => s.uri.startsWith('/v1/segment/'));
      expect(ads.reduce((s, x) => s + x.duration, 0)).toBeCloseTo(BREAK_SECONDS, 0);
      expect(pl.segments.some((s) => s.uri.startsWith(h.origin.url))).toBe(true);
      const decoded = await decodeSpans(absoluteSegments(pl.segments, `${h.engine.url}${u}`), work, `vod-${u.split('/').pop()}`);
      expect(decoded.spans).toBe(4); // content, ad a, ad b, content
      expect(decoded.seconds).toBeCloseTo(CLIP_SEGMENTS * SEGMENT_SECONDS, 0); // from the first to the last segment
      expectWholeTrack(decoded, audio.includes(u) ? 'audio' : 'video', `ffmpeg on ${u}:\n${text}`);
    }
  }, 120_000);

  it('decodes a stitched live timeline (reloads of a moving window, joined) with ffmpeg', async () => {
    h.origin.setRealTime(false);
    // Window before, during and after the break of the second loop (its cue at segment CLIP_SEGMENTS + BREAK_START).
    // The window opens after the first loop's break (whose CUE-IN is at segment BREAK_START + BREAK_SEGMENTS) and
    // closes before the third loop's: it holds exactly the second loop's break.
    const start = (CLIP_SEGMENTS + BREAK_START + 1) * SEGMENT_SECONDS;
    const stop = (2 * CLIP_SEGMENTS + BREAK_START - 1) * SEGMENT_SECONDS;
    h.origin.position = start;
    const { video, audio } = await mediaUrls(liveGuid, 'live/master.m3u8');
    for (const u of demuxed ? [video[0]!, audio[0]!] : [video[0]!]) {
      const bySequence = new Map<number, MediaSegment>();
      for (let t = start; t <= stop; t += SEGMENT_SECONDS) {
        h.origin.position = t;
        const text = (await h.get(u)).text;
        const pl = scanMediaPlaylist(text).playlist!;
        for (const s of absoluteSegments(pl.segments, `${h.engine.url}${u}`)) {
          const known = bySequence.get(s.mediaSequence);
          if (known) expect(known.uri, `segment ${s.mediaSequence} changed between reloads`).toBe(s.uri);
          else bySequence.set(s.mediaSequence, s);
        }
      }
      const segments = [...bySequence.values()].sort((a, b) => a.mediaSequence - b.mediaSequence);
      const ads = segments.filter((s) => s.uri.includes('/v1/segment/'));
      expect(ads.reduce((s, x) => s + x.duration, 0)).toBeCloseTo(BREAK_SECONDS, 0);
      expect(segments[0]!.uri.startsWith(h.origin.url)).toBe(true);
      expect(segments.at(-1)!.uri.startsWith(h.origin.url)).toBe(true);
      const decoded = await decodeSpans(segments, work, `live-${u.split('/').pop()}`);
      expect(decoded.spans).toBeGreaterThanOrEqual(4);
      expect(decoded.seconds).toBeGreaterThanOrEqual(20);
      expectWholeTrack(decoded, u === audio[0] ? 'audio' : 'video', `ffmpeg on the live timeline of ${u}`);
    }
  }, 120_000);

  /** onFirstLevel runs once hls.js has loaded its first media playlist (and so chosen where it starts). */
  async function play(src: string, opts: { start?: number; rate?: number; timeoutMs: number; onFirstLevel?: () => void }): Promise<PlaybackResult> {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const tab = await browser.newPage();
      const q = new URLSearchParams({ src, ...(opts.start !== undefined ? { start: String(opts.start) } : {}), ...(opts.rate ? { rate: String(opts.rate) } : {}) });
      await tab.goto(`${pageBase}/?${q}`);
      if (opts.onFirstLevel) {
        await tab.waitForFunction(() => (window as unknown as { result: PlaybackResult }).result.levelLoads > 0, undefined, { timeout: opts.timeoutMs, polling: 50 });
        opts.onFirstLevel();
      }
      // Done when the playhead is 1 s past the end of the first break (adSpan) and a content fragment follows it.
      await tab.waitForFunction(() => {
        const r = (window as unknown as { result: PlaybackResult }).result;
        if (r.fatal !== null) return true;
        const ads = r.frags.filter((f) => f.ad).sort((a, b) => a.sn - b.sn);
        if (!ads.length) return false;
        let end = ads[0]!;
        for (const f of ads) if (f.sn === end.sn + 1) end = f; else if (f.sn > end.sn + 1) break;
        return r.frags.some((f) => !f.ad && f.start >= end.end - 0.2) && r.playedTo > end.end + 1;
      }, undefined, { timeout: opts.timeoutMs, polling: 250 }).catch(() => undefined);
      return await tab.evaluate(() => (window as unknown as { result: PlaybackResult }).result);
    } finally {
      await browser.close();
    }
  }

  function expectThroughTheAd(result: PlaybackResult): void {
    const summary = JSON.stringify({ ...result, times: result.times.filter((_, i) => i % 8 === 0) });
    expect(result.fatal, summary).toBeNull();
    expect(result.levels).toBe(2);
    const span = adSpan(result.frags);
    expect(span, `no ad fragment was loaded: ${summary}`).toBeDefined();
    expect(span!.end - span!.start).toBeGreaterThan(BREAK_SECONDS - 1);
    // The playhead was seen before the ad, inside it, and after it.
    expect(result.times.some((t) => t < span!.start), summary).toBe(true);
    expect(result.times.some((t) => t > span!.start + 0.5 && t < span!.end - 0.5), summary).toBe(true);
    expect(result.playedTo, summary).toBeGreaterThan(span!.end + 0.5);
    expect(result.frags.some((f) => !f.ad && f.start >= span!.end - 0.2), summary).toBe(true);
    // Audio came from the ad fragments and the buffered audio covers the ad span.
    expect(result.adAudioAppends, summary).toBeGreaterThan(0);
    expect(result.audio.some(([s, e]) => s <= span!.start + 0.5 && e >= span!.end - 0.5), summary).toBe(true);
  }

  it('plays the stitched VOD master in hls.js through the ad and back', async (ctx) => {
    if (!(await hasChromium())) { ctx.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): stitched playback is not checked`); return; }
    const adStart = BREAK_START * SEGMENT_SECONDS;
    const result = await play(`${h.engine.url}/v1/master/${vodGuid}/vod/master.m3u8`, { start: adStart - 3, rate: 2, timeoutMs: 30_000 });
    expectThroughTheAd(result);
  }, 60_000);

  it('plays the stitched live master in hls.js through the ad and back while the origin window moves in real time', async (ctx) => {
    if (!(await hasChromium())) { ctx.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): stitched playback is not checked`); return; }
    // hls.js starts about 3 target durations behind the edge: ~3 s of content, then the third loop's 10 s break.
    // The window stays still until hls.js has loaded its first media playlist, then moves in real time: a slow
    // Chromium start must not move the start point into the break (CI, stop 35: hls.js began at the ad's first segment).
    const breakAt = (2 * CLIP_SEGMENTS + BREAK_START) * SEGMENT_SECONDS;
    h.origin.setRealTime(false);
    h.origin.position = breakAt + 3 * SEGMENT_SECONDS - 3;
    try {
      const result = await play(`${h.engine.url}/v1/master/${liveGuid}/live/master.m3u8`, { timeoutMs: 40_000, onFirstLevel: () => h.origin.setRealTime(true) });
      expectThroughTheAd(result);
    } finally {
      h.origin.setRealTime(false);
    }
  }, 60_000);
});
