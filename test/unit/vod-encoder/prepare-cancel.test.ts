// A creative or slate job stops when its signal aborts (the queue closing): no download or ffmpeg left running.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../../fixtures/generate-media.js';
import type { Ladder } from '../../../vod-encoder/ladder.js';
import { prepareCreative, prepareSlate } from '../../../vod-encoder/prepare-creative.js';
import { tempDir } from './helpers.js';

const ladder: Ladder = {
  rungs: [{ width: 640, height: 360, videoBitrate: 800_000, maxrate: 856_000, bufsize: 1_600_000 }],
  audioBitrate: 128_000, audioSampleRate: 48_000, audioChannels: 2, frameRate: 25, segmentDurationSec: 2,
};

describe('prepareCreative / prepareSlate cancel', () => {
  let dir = '';
  let cleanup: () => Promise<void> = async () => undefined;
  let server: http.Server;
  let base = '';
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('vod-creative-cancel'));
    await generateMedia('image', path.join(dir, 'slate.png'), { size: '320x240' });
    server = http.createServer(() => undefined); // never answers
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await cleanup();
  });

  it('stops waiting for the media file download when the signal aborts', async () => {
    const started = Date.now();
    const result = await prepareCreative(`${base}/ad.mp4`, ladder, { cacheDir: path.join(dir, 'cache'), signal: AbortSignal.timeout(200) });
    expect(result.ok).toBe(false);
    expect(Date.now() - started).toBeLessThan(5000);
  }, 15_000);

  it('stops the slate transcode when the signal aborts', async () => {
    const started = Date.now();
    const result = await prepareSlate(path.join(dir, 'slate.png'), ladder, 3600, {
      cacheDir: path.join(dir, 'cache'), preset: 'ultrafast', signal: AbortSignal.timeout(500),
    });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.code).toBe('VOD_ENCODE_CANCELED');
    expect(Date.now() - started).toBeLessThan(5000);
  }, 15_000);
});
