// ctx.services.prepareCreative: an ad creative through the encode queue (creative priority) into DATA_DIR/media/creatives.
import { mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { chooseLadder } from '../../../vod-encoder/ladder.js';
import { JOB_PRIORITY } from '../../../vod-encoder/queue.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';

let engine: TestEngine | undefined;
let server: http.Server | undefined;
afterAll(async () => {
  await engine?.close();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

describe('prepareCreative service', () => {
  it('transcodes a creative through the queue, caches it and serves it from the media store', async () => {
    expect(JOB_PRIORITY.creative).toBeGreaterThan(JOB_PRIORITY.encode);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vod-creative-'));
    const bytes = await readFile(await generateMedia('clip', path.join(dir, 'ad.mp4'), { seconds: 2, size: '320x180' }));
    server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'video/mp4' }).end(bytes));
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ad.mp4`;
    engine = await startTestEngine();
    const prepare = engine.ctx.services.prepareCreative!;
    const ladder = chooseLadder({ width: 320, height: 180, frameRate: 30 }, 2);
    const first = await prepare(url, ladder, { creativeId: 'ad-1' });
    if (!first.ok) throw new Error(first.error.reason);
    expect(first.value.dir.startsWith(path.join(engine.dataDir, 'media', 'creatives'))).toBe(true);
    expect(first.value.renditions).toHaveLength(1);
    expect(first.value.cached).toBe(false);
    const second = await prepare(url, ladder, { creativeId: 'ad-1' });
    expect(second.ok && second.value.cached).toBe(true);
    const rel = path.relative(path.join(engine.dataDir, 'media'), path.join(first.value.dir, first.value.masterPath));
    const master = await fetch(`${engine.url}/media/${rel.split(path.sep).join('/')}`);
    expect(master.status).toBe(200);
    expect(master.headers.get('content-type')).toBe('application/vnd.apple.mpegurl');
  }, 60_000);
});
