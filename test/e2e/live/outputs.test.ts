// Issue 18 outputs per destination: HLS on the engine's origin, HLS by HTTP PUT to a generic CDN (a local receiver
// here), and RTMP push to an RTMP endpoint (ffmpeg listening as the receiver).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import HLS from 'hls-parser';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { createWorkflow, decodeLive, loopClip, startAndSettle, stopAndSettle, tinyBlueprint } from './live-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A generic CDN ingest: keeps what is PUT, forgets what is DELETEd. */
async function cdnReceiver(): Promise<{ url: string; files: Map<string, Buffer>; deleted: string[]; close(): Promise<void> }> {
  const files = new Map<string, Buffer>();
  const deleted: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const key = new URL(req.url ?? '/', 'http://x').pathname;
      if (req.method === 'PUT') files.set(key, Buffer.concat(chunks));
      else if (req.method === 'DELETE') { files.delete(key); deleted.push(key); }
      res.writeHead(req.method === 'PUT' ? 201 : 204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, files, deleted, close: () => new Promise((r) => server.close(() => r())) };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('channel outputs', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;
  const work = mkdtempSync(path.join(os.tmpdir(), 'live-outputs-'));

  beforeAll(async () => {
    engine = await startTestEngine();
    auth = { Authorization: (await engine.login()).IdToken };
    await loopClip(engine);
  });
  afterAll(async () => {
    await engine?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('serves HLS on the origin, PUTs it to a generic CDN and pushes RTMP to an RTMP endpoint', { timeout: 120_000 }, async () => {
    const cdn = await cdnReceiver();
    const port = await freePort();
    const flv = path.join(work, 'received.flv');
    // the RTMP endpoint: ffmpeg listening, keeping 4 s of what it receives
    const receiver = new Promise<string>((resolve) => {
      execFile('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-y', '-listen', '1', '-i', `rtmp://127.0.0.1:${port}/live/secret-key`, '-t', '4', '-c', 'copy', flv],
        { timeout: 90_000 }, (error, _o, stderr) => resolve(error ? `${error.message} ${stderr}` : ''));
    });
    try {
      const blueprint = tinyBlueprint('mp4-loop-test', (channel) => {
        channel.destinations[0].settings[0].url = `${cdn.url}/ingest/ch1/master.m3u8`;
        channel.destinations.push({ id: 'rtmp-a', settings: [{ url: `rtmp://127.0.0.1:${port}/live`, streamName: 'secret-key' }] });
        channel.encoderSettings.outputGroups.push({
          name: 'RTMP', outputGroupSettings: { rtmpGroupSettings: {} },
          outputs: [{ outputName: 'rtmp', videoDescriptionName: 'video_720p', audioDescriptionNames: ['audio_aac'], outputSettings: { rtmpOutputSettings: { destination: { destinationRefId: 'rtmp-a' } } } }],
        });
      });
      const id = await createWorkflow(engine, auth, blueprint, 'Outputs');
      const detail = await startAndSettle(engine, auth, id);
      expect(detail.channelStatus, detail.statusReason).toBe('RUNNING');
      expect(detail.outputs).toEqual([
        { destinationId: 'hls-origin', type: 'HLS', url: `${engine.url}/live/${id}/index.m3u8` },
        { destinationId: 'hls-origin', type: 'HLS', url: `${cdn.url}/ingest/ch1/master.m3u8` },
        { destinationId: 'rtmp-a', type: 'RTMP', url: `rtmp://127.0.0.1:${port}/live/` },
      ]);

      expect(await receiver).toBe('');
      const pushed = await decodeLive(flv, 10);
      expect(pushed.errors).toBe('');
      expect(pushed.decodedSec).toBeGreaterThanOrEqual(3.5);

      await sleep(2500);
      expect(cdn.files.get('/ingest/ch1/master.m3u8')?.toString()).toContain('index_720p.m3u8');
      const media = HLS.parse(cdn.files.get('/ingest/ch1/index_720p.m3u8')?.toString() ?? '');
      if (media.isMasterPlaylist) throw new Error('expected a media playlist');
      expect(media.segments.length).toBeGreaterThanOrEqual(3);
      // every segment the CDN's playlist names was uploaded before it
      for (const segment of media.segments) expect(cdn.files.has(`/ingest/ch1/${segment.uri}`), segment.uri).toBe(true);
      expect((await stopAndSettle(engine, auth, id)).channelStatus).toBe('DONE');
    } finally {
      await cdn.close();
    }
  });
});
