// Upload through the API, wait for complete, decode every output over HTTP, then play the engine's HLS master
// (cross-origin, from PUBLIC_URL/media) in hls.js inside Chromium (playwright-core).
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../fixtures/generate-media.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { CHROMIUM, hasChromium, playHls, servePlayer } from '../helpers/hls-player.js';
import { decode } from '../unit/vod-encoder/helpers.js';
import { apiKey, createMeta, uploadPlain, waitForStatus } from '../api/vod/helpers.js';

const CLIP_SECONDS = 20;

let engine: TestEngine | undefined;
let player: { base: string; close: () => Promise<void> } | undefined;
let info: { status: string; statusReason: string | null; hlsUrl: string; guid: string };
afterAll(async () => {
  await engine?.close();
  await player?.close();
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
    if (!(await hasChromium())) {
      ctx.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): VOD playback is not checked`);
      return;
    }
    expect(info.status).toBe('complete');
    player = await servePlayer();
    const result = await playHls(player.base, info.hlsUrl, 2.01, 45_000);
    expect(result.fatal, JSON.stringify(result)).toBeNull();
    expect(result.levels).toBeGreaterThan(0);
    expect(result.playedTo, JSON.stringify(result)).toBeGreaterThan(2);
  }, 150_000);
});
