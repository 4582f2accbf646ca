// Upload through the API, wait for complete, then play the engine's HLS master (cross-origin, from PUBLIC_URL/media)
// in hls.js inside Chromium (playwright-core).
import { access, readFile } from 'node:fs/promises';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
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

let engine: TestEngine | undefined;
let page: http.Server | undefined;
afterAll(async () => {
  await engine?.close();
  await new Promise<void>((r) => (page ? page.close(() => r()) : r()));
});

describe('VOD playback', () => {
  it('plays the HLS master of an uploaded VOD in hls.js past 2 s without a fatal error', async (ctx) => {
    if (!(await access(CHROMIUM).then(() => true, () => false))) {
      ctx.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): VOD playback is not checked`);
      return;
    }
    engine = await startTestEngine();
    const key = await apiKey(engine);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vod-play-'));
    const clip = await generateMedia('clip', path.join(dir, 'clip.mp4'), { seconds: 6, size: '640x360' });
    const guid = await createMeta(engine, key, { title: 'playback' });
    expect((await uploadPlain(engine, key, guid, clip)).status).toBe(200);
    const info = await waitForStatus(engine, guid, ['complete', 'error']);
    expect(info.status, info.statusReason).toBe('complete');

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
