// Issue 5 and issue 19 "What done means": a stitched live stream and a stitched VOD stream, through the real engine proxy
// with the fixture origin and ad server, for a muxed MPEG-TS origin, a muxed fMP4 origin and a demuxed fMP4 origin,
// decode with ffmpeg without errors (frame count matching the duration) and play in hls.js in Chromium through the ad
// and back (currentTime passes the ad start and the ad end, no fatal hls.js error, audio buffered through the ad).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_SECONDS, BREAK_START, CLIP_SEGMENTS, LAYOUTS, SEGMENT_SECONDS, type OriginLayout } from '../../fixtures/origin-server.js';
import { probeBytes } from '../../ssai/media-probe.js';
import { scanMediaPlaylist, scanMultivariantPlaylist, type MediaSegment } from '../../ssai/playlist-scanner.js';
import { startSsai, type SsaiHarness } from '../ssai/setup.js';
import { CHROMIUM, CHROMIUM_ARGS, hasChromium } from '../helpers/hls-player.js';


/** The player page: hls.js, plus the main-track fragments it loaded (ad ones are the /v1/segment/ URIs). */
const PAGE = `<!doctype html><html><body><video id="v" muted playsinline></video><script src="/hls.js"></script><script>
const q = new URLSearchParams(location.search);
window.result = { levels: 0, errors: [], fatal: null, playedTo: 0, times: [], frags: [], audio: [], adAudioAppends: 0 };
const v = document.getElementById('v');
const hls = new Hls({ startPosition: Number(q.get('start') ?? -1) });
hls.on(Hls.Events.MANIFEST_PARSED, (_e, d) => { window.result.levels = d.levels.length; v.play().catch((e) => window.result.errors.push(String(e))); });
hls.on(Hls.Events.ERROR, (_e, d) => {
  const what = [d.details, d.response ? d.response.code : '', d.error ? d.error.message : '', d.frag ? d.frag.url : ''].join(' ');
  if (window.result.errors.length < 40) window.result.errors.push(what);
  if (d.fatal) window.result.fatal = what;
});
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
interface PlaybackResult { levels: number; errors: string[]; fatal: string | null; playedTo: number; times: number[]; frags: Frag[]; audio: Array<[number, number]>; adAudioAppends: number }

/** The ad span of the main track as hls.js placed it: first ad fragment start, last ad fragment end. */
function adSpan(frags: Frag[]): { start: number; end: number } | undefined {
  const ads = frags.filter((f) => f.ad);
  if (!ads.length) return undefined;
  return { start: Math.min(...ads.map((f) => f.start)), end: Math.max(...ads.map((f) => f.end)) };
}

/** ffmpeg decodes a file to nothing: its errors, the video frames and the media seconds it decoded. */
function ffmpegDecode(input: string): Promise<{ errors: string; frames: number; seconds: number }> {
  return new Promise((resolve) => {
    execFile('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-progress', 'pipe:1', '-i', input, '-f', 'null', '-'], { maxBuffer: 8 * 1024 * 1024, timeout: 60_000 },
      (err, stdout, stderr) => {
        const last = (key: string) => Number([...stdout.matchAll(new RegExp(`^${key}=(\\d+)`, 'gm'))].at(-1)?.[1] ?? 0);
        resolve({ errors: err ? `${err.message}\n${stderr}` : stderr, frames: last('frame'), seconds: last('out_time_us') / 1e6 });
      });
  });
}

type Decoded = { spans: number; errors: string; seconds: number; frames: number; decodedSeconds: number; spansWithoutAudio: number };

/**
 * Downloads a timeline (following the /v1/segment redirects) and decodes it with ffmpeg span by span: each run of
 * segments under one EXT-X-MAP without a discontinuity is concatenated behind its init segment and decoded alone.
 * (ffmpeg's own HLS demuxer keeps the first init segment's codec configuration across an EXT-X-MAP change, so it
 * cannot decode any fMP4 stream stitched from differently encoded parts, whatever the stitcher does.)
 */
async function decodeSpans(segments: MediaSegment[], dir: string, name: string): Promise<Decoded> {
  const get = async (url: string): Promise<Buffer> => {
    const res = await fetch(url);
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  };
  const spans: MediaSegment[][] = [];
  for (const s of segments) {
    const last = spans.at(-1);
    if (!last || s.discontinuity || s.map?.uri !== last[0]!.map?.uri) spans.push([s]);
    else last.push(s);
  }
  const errors: string[] = [];
  const out = { seconds: 0, frames: 0, decodedSeconds: 0, spansWithoutAudio: 0 };
  for (const [i, span] of spans.entries()) {
    const parts = await Promise.all([...(span[0]!.map ? [get(span[0]!.map.uri)] : []), ...span.map((s) => get(s.uri))]);
    const file = path.join(dir, `${name}-${i}.${span[0]!.map ? 'mp4' : 'ts'}`);
    const bytes = Buffer.concat(parts);
    await writeFile(file, bytes);
    const d = await ffmpegDecode(file);
    if (d.errors) errors.push(`span ${i} (${span[0]!.uri} …): ${d.errors}`);
    if (!(await probeBytes(bytes))?.audio) out.spansWithoutAudio++;
    out.frames += d.frames;
    out.decodedSeconds += d.seconds;
    out.seconds += span.reduce((t, s) => t + s.duration, 0);
  }
  return { spans: spans.length, errors: errors.join('\n'), ...out };
}

/** The segments of a media playlist with absolute URIs. */
function absolute(segments: MediaSegment[], base: string): MediaSegment[] {
  const abs = (u: string) => new URL(u, base).href;
  return segments.map((s) => ({ ...s, uri: abs(s.uri), ...(s.map ? { map: { ...s.map, uri: abs(s.map.uri) } } : {}) }));
}

describe.each<OriginLayout>(['muxed-ts', 'muxed-fmp4', 'demuxed-fmp4'])('stitched playback end to end, %s origin', (layout) => {
  const fps = LAYOUTS[layout].fps;
  const demuxed = layout === 'demuxed-fmp4';
  let h: SsaiHarness;
  let liveGuid: string;
  let vodGuid: string;
  let page: http.Server | undefined;
  let pageBase = '';
  let work = '';

  beforeAll(async () => {
    h = await startSsai({ origin: { layout } });
    // vast4: ads a (6 s) and b (4 s) fill the whole 10 s break, so the content resumes exactly at the CUE-IN.
    liveGuid = await h.configure('/vast4?sid=[session.id]');
    vodGuid = await h.configure('/vast4?sid=[session.id]', { type: 'broker' });
    work = await mkdtemp(path.join(os.tmpdir(), 'ssai-e2e-'));
    const hlsJs = await readFile(path.resolve('node_modules/hls.js/dist/hls.min.js'));
    page = http.createServer((req, res) => {
      if (req.url?.startsWith('/hls.js')) return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(hlsJs);
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    });
    await new Promise<void>((r) => page!.listen(0, '127.0.0.1', r));
    pageBase = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    // Prepares the creatives for the content ladder once (shared by the VOD and live sessions: same ladder), so no
    // player request waits on the encoder.
    const master = await h.get(`/v1/master/${vodGuid}/vod/master.m3u8`);
    const first = scanMultivariantPlaylist(master.text).playlist!.variants[0]!.uri;
    const media = await h.get(first);
    expect(media.text, 'the VOD break is stitched once the creatives are prepared').toContain('/v1/segment/');
  }, 240_000);

  afterAll(async () => {
    await h?.close();
    await new Promise<void>((r) => (page ? page.close(() => r()) : r()));
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
      const decoded = await decodeSpans(absolute(pl.segments, `${h.engine.url}${u}`), work, `vod-${u.split('/').pop()}`);
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
        for (const s of absolute(pl.segments, `${h.engine.url}${u}`)) {
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

  async function play(src: string, opts: { start?: number; rate?: number; timeoutMs: number }): Promise<PlaybackResult> {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const tab = await browser.newPage();
      const q = new URLSearchParams({ src, ...(opts.start !== undefined ? { start: String(opts.start) } : {}), ...(opts.rate ? { rate: String(opts.rate) } : {}) });
      await tab.goto(`${pageBase}/?${q}`);
      // Done when the playhead is 1 s past the end of the last ad fragment and a content fragment follows the ad.
      await tab.waitForFunction(() => {
        const r = (window as unknown as { result: PlaybackResult }).result;
        if (r.fatal !== null) return true;
        const ads = r.frags.filter((f) => f.ad);
        if (!ads.length) return false;
        const end = Math.max(...ads.map((f) => f.end));
        return r.frags.some((f) => !f.ad && f.start >= end - 0.2) && r.playedTo > end + 1;
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
    const breakAt = (2 * CLIP_SEGMENTS + BREAK_START) * SEGMENT_SECONDS;
    h.origin.position = breakAt + 3 * SEGMENT_SECONDS - 3;
    h.origin.setRealTime(true);
    try {
      const result = await play(`${h.engine.url}/v1/master/${liveGuid}/live/master.m3u8`, { timeoutMs: 40_000 });
      expectThroughTheAd(result);
    } finally {
      h.origin.setRealTime(false);
    }
  }, 60_000);
});
