import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../../fixtures/generate-media.js';
import type { Ladder } from '../../../vod-encoder/ladder.js';
import { prepareCreative, prepareSlate } from '../../../vod-encoder/prepare-creative.js';
import { probeMedia } from '../../../vod-encoder/probe.js';
import { decode, tempDir } from './helpers.js';

const ladder: Ladder = {
  rungs: [
    { width: 640, height: 360, videoBitrate: 800_000, maxrate: 856_000, bufsize: 1_600_000 },
    { width: 426, height: 240, videoBitrate: 400_000, maxrate: 428_000, bufsize: 800_000 },
  ],
  audioBitrate: 128_000, audioSampleRate: 48_000, audioChannels: 2, frameRate: 25, segmentDurationSec: 2,
};

let dir = '';
let cleanup: () => Promise<void> = async () => {};
let server: http.Server;
let base = '';
let hits = 0;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('vod-creative'));
  // 4:3 source at 30 fps: size, aspect and frame rate differ from the content ladder on purpose.
  await generateMedia('clip', path.join(dir, 'ad.mp4'), { seconds: 5, size: '480x360' });
  await generateMedia('image', path.join(dir, 'slate.png'), { size: '320x240' });
  server = http.createServer((req, res) => {
    hits++;
    if (req.url === '/ad.mp4') {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      createReadStream(path.join(dir, 'ad.mp4')).pipe(res);
    } else if (req.url === '/moved.mp4') {
      res.writeHead(302, { location: '/ad.mp4' }).end();
    } else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await cleanup();
});

describe('prepareCreative', () => {
  it('transcodes a VAST media file into renditions matching the content ladder', async () => {
    const r = await prepareCreative(`${base}/ad.mp4`, ladder, { cacheDir: path.join(dir, 'cache'), creativeId: 'cr-1', preset: 'ultrafast' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const c = r.value;
    expect(c.cached).toBe(false);
    expect(c.durationSec).toBe(5);
    expect(c.renditions.map((x) => [x.width, x.height])).toEqual([[640, 360], [426, 240]]);
    for (const rend of c.renditions) {
      expect(rend.initSegment).toMatch(/^v\d\/init.*\.mp4$/);
      expect(rend.segments.map((s) => s.duration)).toEqual([2, 2, 1]);
      const d = await decode(path.join(c.dir, rend.playlistPath));
      expect(d.errors).toBe('');
      expect(d.durationSec).toBeCloseTo(5, 1);
      const p = await probeMedia(path.join(c.dir, rend.playlistPath));
      expect(p.ok && [p.value.width, p.value.height, p.value.frameRate]).toEqual([rend.width, rend.height, 25]);
    }
    const a = await probeMedia(path.join(c.dir, c.masterPath));
    expect(a.ok && a.value.audioSampleRate).toBe(48_000);
    const audioTotal = c.audioOnly!.segments.reduce((a, s) => a + s.duration, 0);
    // Audio ends with the video: within one AAC frame (21 ms) plus priming.
    expect(Math.abs(audioTotal - c.durationSec)).toBeLessThan(0.05);
    const master = await decode(path.join(c.dir, c.masterPath));
    expect(master.errors).toBe('');
  });

  it('returns the cached result on a second call without downloading or running ffmpeg', async () => {
    const before = hits;
    const r = await prepareCreative(`${base}/ad.mp4`, ladder, { cacheDir: path.join(dir, 'cache'), creativeId: 'cr-1' });
    expect(r.ok && r.value.cached).toBe(true);
    expect(hits).toBe(before);
    const entries = await readdir(path.join(dir, 'cache'));
    expect(entries.filter((e) => e.startsWith('cr-1-'))).toHaveLength(1);
    expect(entries.some((e) => e.includes('.partial'))).toBe(false);
  });

  it('follows a redirect of the media file URL', async () => {
    const r = await prepareCreative(`${base}/moved.mp4`, ladder, { cacheDir: path.join(dir, 'cache'), creativeId: 'cr-2', preset: 'ultrafast' });
    expect(r.ok).toBe(true);
  });

  it('fails with VOD_CREATIVE_FETCH_FAILED on a 404 and caches nothing', async () => {
    const cacheDir = path.join(dir, 'cache404');
    const r = await prepareCreative(`${base}/missing.mp4`, ladder, { cacheDir, creativeId: 'cr-3' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatchObject({ code: 'VOD_CREATIVE_FETCH_FAILED' });
    expect(await readdir(cacheDir)).toEqual([]);
  });

  it('refuses a media file larger than maxBytes', async () => {
    const r = await prepareCreative(`${base}/ad.mp4`, ladder, { cacheDir: path.join(dir, 'cache-small'), creativeId: 'big', maxBytes: 1000 });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.reason).toMatch(/1000 byte limit/);
  });

  it('shares one transcode between concurrent calls for the same creative', async () => {
    const cacheDir = path.join(dir, 'cache-conc');
    const opts = { cacheDir, creativeId: 'same', preset: 'ultrafast' };
    const before = hits;
    const [a, b] = await Promise.all([prepareCreative(`${base}/ad.mp4`, ladder, opts), prepareCreative(`${base}/ad.mp4`, ladder, opts)]);
    expect(a.ok && b.ok).toBe(true);
    expect(hits - before).toBe(1);
  });
});

describe('prepareSlate', () => {
  it('turns a still image into renditions of the requested duration with silent audio', async () => {
    const r = await prepareSlate(path.join(dir, 'slate.png'), ladder, 3, { cacheDir: path.join(dir, 'cache'), preset: 'ultrafast' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.durationSec).toBe(3);
    for (const rend of r.value.renditions) {
      const d = await decode(path.join(r.value.dir, rend.playlistPath));
      expect(d.errors).toBe('');
      expect(d.durationSec).toBeCloseTo(3, 1);
      expect((await stat(path.join(r.value.dir, rend.initSegment!))).size).toBeGreaterThan(0);
    }
  });
});
