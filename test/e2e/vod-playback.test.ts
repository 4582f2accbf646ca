// Upload through the API, wait for complete, then play the engine's HLS master (cross-origin, from PUBLIC_URL/media)
// in hls.js inside Chromium (playwright-core).
import { access, readFile } from 'node:fs/promises';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../fixtures/generate-media.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { apiKey, createMeta, uploadPlain, waitForStatus } from '../api/vod/helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'];

const PAGE = `<!doctype html><html><body><video id="v" muted playsinline></video><script src="/hls.js"></script><script>
window.result = { levels: 0, errors: [], fatal: null, playedTo: 0 };
const v = document.getElementById('v');
const hls = new Hls();
hls.on(Hls.Events.MANIFEST_PARSED, (_e, d) => { window.result.levels = d.levels.length; v.play().catch((e) => window.result.errors.push(String(e))); });
hls.on(Hls.Events.ERROR, (_e, d) => { window.result.errors.push(d.details); if (d.fatal) window.result.fatal = d.details; });
v.addEventListener('timeupdate', () => { window.result.playedTo = v.currentTime; });
hls.loadSource(new URLSearchParams(location.search).get('src'));
hls.attachMedia(v);
</script></body></html>`;

interface PlaybackResult { levels: number; errors: string[]; fatal: string | null; playedTo: number }

const execFileAsync = promisify(execFile);
const CLIP_SECONDS = 20;

/** Decodes a media URL with ffmpeg: no error output, and its duration from ffprobe. */
async function decode(url: string): Promise<{ errors: string; durationSec: number }> {
  const { stderr } = await execFileAsync('ffmpeg', ['-v', 'error', '-i', url, '-f', 'null', '-'], { maxBuffer: 16 * 1024 * 1024 });
  const { stdout } = await execFileAsync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', url]);
  return { errors: stderr.trim(), durationSec: Number(stdout.trim()) };
}

let engine: TestEngine | undefined;
let page: http.Server | undefined;
let info: { status: string; statusReason: string | null; hlsUrl: string; guid: string };
afterAll(async () => {
  await engine?.close();
  await new Promise<void>((r) => (page ? page.close(() => r()) : r()));
});

// Issue 4's end-to-end path: upload a generated 20 s clip, wait for complete, decode every output over HTTP, play it.
describe('VOD from upload to playback', () => {
  beforeAll(async () => {
    engine = await startTestEngine();
    const key = await apiKey(engine);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vod-play-'));
    const clip = await generateMedia('clip', path.join(dir, 'clip.mp4'), { seconds: CLIP_SECONDS, size: '854x480' });
    const guid = await createMeta(engine, key, { title: 'playback' });
    expect((await uploadPlain(engine, key, guid, clip)).status).toBe(200);
    info = await waitForStatus(engine, guid, ['complete', 'error'], 150_000);
    info.guid = guid;
  }, 180_000);

  it('reaches complete and every HLS, DASH and MP4 output decodes with ffmpeg without errors, with the clip duration', async () => {
    expect(info.status, info.statusReason ?? '').toBe('complete');
    const formats = (await engine!.api('GET', `/broker/vod/list/${info.guid}`)).body.data;
    const urls: string[] = [
      formats.hls.cdnUrl,
      ...formats.hls.variants.map((v: { cdnUrl: string }) => v.cdnUrl),
      formats.dash.cdnUrl,
      ...formats.mp4.map((m: { cdnUrl: string }) => m.cdnUrl),
    ];
    // 854x480 gives two rungs (480p, 360p): master, two playlists, the MPD and two MP4s.
    expect(urls.length).toBe(6);
    for (const url of urls) {
      const decoded = await decode(url);
      expect(decoded.errors, url).toBe('');
      expect(Math.abs(decoded.durationSec - CLIP_SECONDS), `${url} lasts ${decoded.durationSec} s`).toBeLessThanOrEqual(0.5);
    }
  }, 120_000);

  it('plays the HLS master in hls.js in Chromium past 2 s without a fatal error', async (ctx) => {
    if (!(await access(CHROMIUM).then(() => true, () => false))) {
      ctx.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): VOD playback is not checked`);
      return;
    }
    expect(info.status).toBe('complete');
    const hlsJs = await readFile(path.resolve('node_modules/hls.js/dist/hls.min.js'));
    page = http.createServer((req, res) => {
      if (req.url?.startsWith('/hls.js')) return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(hlsJs);
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    });
    await new Promise<void>((r) => page!.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;

    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const tab = await browser.newPage();
      await tab.goto(`${base}/?src=${encodeURIComponent(info.hlsUrl)}`);
      await tab.waitForFunction(() => {
        const r = (window as unknown as { result: PlaybackResult }).result;
        return r.fatal !== null || r.playedTo > 2;
      }, undefined, { timeout: 45_000 }).catch(() => undefined);
      const result = await tab.evaluate(() => (window as unknown as { result: PlaybackResult }).result);
      expect(result.fatal, JSON.stringify(result)).toBeNull();
      expect(result.levels).toBeGreaterThan(0);
      expect(result.playedTo, JSON.stringify(result)).toBeGreaterThan(2);
    } finally {
      await browser.close();
    }
  }, 150_000);
});
