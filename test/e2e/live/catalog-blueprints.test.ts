// Issue 18 "What done means", first bullet: one end-to-end run per catalog blueprint. Each blueprint (made tiny) is
// created as a workflow with createArchives, started, fed a real signal of its input's kind, and once RUNNING with the
// signal on air its output decodes in ffmpeg and plays in hls.js; a dynamic ad break shows the fixture ad in the SSAI
// playback URL at the boundary 15–20 s later; the stop gives DONE and an archive MP4 of the run time (± 1 s).
// One engine for the file, the blueprints one after the other, so the shared 2-core machine runs one channel at a time
// (url-pull-hls-ads needs a second one: its source).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import HLS from 'hls-parser';
import { ENGINE_PARTS } from '../../../wiring/parts.js';
import { createSsaiPart, ssaiPart } from '../../../wiring/ssai.part.js';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { VastServer } from '../../../fixtures/vast-server.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { hasChromium, playHls, servePlayer } from '../../helpers/hls-player.js';
import { killStarted, startSender } from '../../packager/ingest/ingest-harness.js';
import { SHARED_CREATIVES, variantUrls } from '../../ssai/setup.js';
import { basicAuthGate, createWorkflow, decodeLive, loopClip, startAndSettle, stopAndSettle, tinyBlueprint, until, mediaPlaylist, sleep } from './live-helpers.js';

type Json = Record<string, any>;

// tinyBlueprint's HLS segment length
const SEGMENT_SECONDS = 2;
// the fixture ad server's /vast3 answers one 6 s ad: the break holds it whole (brief: a 4–6 s break)
const BREAK_SECONDS = 6;

function probeDuration(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', url], (error, stdout) => (error ? reject(error) : resolve(Number(stdout.trim()))));
  });
}

/** What a blueprint needs around it: its input pointed at something real, and the signal pushed once it runs. */
interface Case {
  blueprint: string;
  /** rewrites the tiny blueprint's inputs to sources this engine can reach; may start a source and return its cleanup */
  prepare?: (blueprint: Json) => Promise<(() => Promise<void>) | void>;
  /** pushes the signal to the running channel's first input; push inputs show the slate (run r1_) until it arrives */
  push?: 'flv' | 'mpegts';
  /**
   * A live HLS source is joined at its last segment, which ffmpeg reads at once: the channel's timeline starts up to
   * that segment's duration ahead of the wall clock, and its archive holds up to that much more than the wall time
   * it ran (it records what the channel output).
   */
  joinedSegmentSeconds?: number;
}

describe('every catalog blueprint end to end', () => {
  let engine: TestEngine;
  let vast: VastServer;
  let auth: Record<string, string>;
  let adServerId: string;

  beforeAll(async () => {
    vast = await VastServer.start();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-live-catalog-'));
    fs.mkdirSync(path.join(dataDir, 'media'), { recursive: true });
    // the ad creatives are transcoded once and shared by every SSAI test run on this machine
    fs.mkdirSync(SHARED_CREATIVES, { recursive: true });
    fs.symlinkSync(SHARED_CREATIVES, path.join(dataDir, 'media', 'creatives'));
    engine = await startTestEngine({
      dataDir,
      // the full engine, with the proxy reading the origin uncached (a cue must show at once) and time to transcode the ad
      parts: ENGINE_PARTS.map((part) => (part === ssaiPart ? createSsaiPart({ originCacheMs: 0, creativeWaitMs: 90_000 }) : part)),
    });
    auth = { Authorization: (await engine.login()).IdToken };
    await loopClip(engine);
    await generateMedia('clip', path.join(engine.dataDir, 'media', 'test-media', 'backup.mp4'), { seconds: 10, size: '320x180' });
    const created = await engine.api('POST', '/broker/adinserts', {
      headers: auth, body: { name: 'catalog ads', type: 'live', ad_server: `${vast.url}/vast3`, source_url: `${engine.url}/live/` },
    });
    if (created.status !== 200) throw new Error(`ad insert creation failed: ${JSON.stringify(created.body)}`);
    adServerId = created.body.guid as string;
  }, 120_000);
  afterEach(async () => killStarted());
  afterAll(async () => {
    await engine?.close();
    await vast?.close();
  });

  const cases: Case[] = [
    { blueprint: 'mp4-loop-test' },
    { blueprint: 'rtmp-push-abr', push: 'flv' },
    { blueprint: 'srt-push', push: 'mpegts' },
    {
      blueprint: 'two-input-switch',
      push: 'flv',
      // the backup pulls the engine's own media over HTTP; the camera pushes to the primary
      prepare: async (blueprint) => {
        blueprint.components.backup.input.sources = [{ url: `${engine.url}/media/test-media/backup.mp4` }];
      },
    },
    {
      blueprint: 'url-pull-hls-ads',
      joinedSegmentSeconds: 2, // the source's segments (tinyBlueprint)
      // the pulled source is another channel of this engine, served behind a Basic-auth gate as a protected origin
      prepare: async (blueprint) => {
        const sourceBlueprint = tinyBlueprint('mp4-loop-test');
        sourceBlueprint.createArchives = false;
        const source = await createWorkflow(engine, auth, sourceBlueprint, 'Pulled source');
        const sourceDetail = await startAndSettle(engine, auth, source);
        if (sourceDetail.channelStatus !== 'RUNNING') throw new Error(`source did not run: ${sourceDetail.statusReason}`);
        const gate = await basicAuthGate(engine.url, 'viewer', 's3cret pass');
        blueprint.components.encoder.input.sources = [{ url: `${gate.url}${new URL(sourceDetail.outputs[0].url).pathname}`, username: 'viewer', passwordParam: 's3cret pass' }];
        return async () => {
          await gate.close();
          await stopAndSettle(engine, auth, source);
        };
      },
    },
  ];

  it('covers the whole catalog', async () => {
    const catalog = fs.readdirSync(path.resolve('fixtures/blueprints')).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, '')).sort();
    expect(cases.map((c) => c.blueprint).sort()).toEqual(catalog);
  });

  it.each(cases)('$blueprint: runs on a real signal, decodes and plays, shows a dynamic ad via SSAI, archives on stop', { timeout: 240_000 }, async (c) => {
    const blueprint = tinyBlueprint(c.blueprint);
    blueprint.createArchives = true;
    blueprint.settings = { adServers: [{ destinationRefId: 'hls-origin', adServerId }] };
    const cleanup = await c.prepare?.(blueprint);
    try {
      const id = await createWorkflow(engine, auth, blueprint, c.blueprint);
      const detail = await startAndSettle(engine, auth, id);
      expect(detail.channelStatus, detail.statusReason).toBe('RUNNING');
      expect(detail.archive).toEqual({ status: 'RECORDING', url: null });
      const output = detail.outputs[0];
      expect(output).toMatchObject({ destinationId: 'hls-origin', type: 'HLS', url: `${engine.url}/live/${id}/index.m3u8` });
      const multivariant = HLS.parse(await (await fetch(output.url)).text());
      if (!multivariant.isMasterPlaylist) throw new Error('expected the multivariant playlist');
      const mediaUrl = new URL(multivariant.variants[0]!.uri, output.url).toString();
      // the archive covers the channel from its first frame: the first segment's time, read before the window slides
      const firstFrameAt = (await mediaPlaylist(mediaUrl)).segments[0]!.programDateTime!.getTime();

      if (c.push) {
        const input = detail.inputs[0];
        expect(input.url).toContain(input.streamKey);
        startSender(input.url as string, c.push, { seconds: 180 });
        const onAir = await until('the signal on air', async () => {
          const window = await mediaPlaylist(mediaUrl);
          return window.segments.some((s) => s.uri.startsWith('r2_')) ? window : undefined;
        });
        // the slate closed the segment it was writing when the sender went on air: listed, no longer than a segment
        // (short, unless the sender came on air at the segment's boundary: 2.0 s was seen once on a quiet machine)
        const slateEnd = onAir.segments[onAir.segments.findIndex((s) => s.uri.startsWith('r2_')) - 1];
        expect(slateEnd?.uri).toMatch(/^r1_/);
        expect(slateEnd!.duration).toBeLessThanOrEqual(SEGMENT_SECONDS + 0.001);
      }

      // ffmpeg decodes the live output cleanly, hls.js in Chromium plays it
      const decoded = await decodeLive(output.url, 4);
      expect(decoded.errors).toBe('');
      expect(decoded.decodedSec).toBeGreaterThanOrEqual(3.5);
      if (await hasChromium()) {
        const player = await servePlayer();
        try {
          const played = await playHls(player.base, output.url, 3, 45_000);
          expect(played.fatal).toBeNull();
          expect(played.playedTo).toBeGreaterThanOrEqual(3);
          // not variants.length: hls.js folds renditions of equal size and bitrate (the tiny rtmp-push-abr has two)
          expect(played.levels).toBeGreaterThanOrEqual(1);
        } finally {
          await player.close();
        }
      }

      // a dynamic ad break: placed at a boundary 15–20 s after the request, the fixture ad shows in the SSAI URL
      expect(output.ssaiPlaybackUrl).toBe(`${engine.url}/v1/master/${adServerId}/${id}/index.m3u8`);
      const requestedAt = Date.now();
      const answer = await engine.api('POST', `/channels/${id}/dynamic-ads`, { headers: auth, body: { duration: BREAK_SECONDS } });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const startsAt = Date.parse(answer.body.startsAt);
      // 1 s for the HTTP round trips
      expect(startsAt - requestedAt).toBeGreaterThanOrEqual(15_000 - 1000);
      expect(startsAt - requestedAt).toBeLessThanOrEqual(20_000 + 1000);
      const stitchedUrl = new URL(variantUrls(await (await fetch(output.ssaiPlaybackUrl)).text())[0]!, output.ssaiPlaybackUrl).toString();
      let origin = '';
      let stitched = '';
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline) {
        origin = await (await fetch(mediaUrl)).text();
        stitched = await (await fetch(stitchedUrl)).text();
        if (origin.includes('#EXT-X-CUE-IN') && stitched.includes('/v1/segment/')) break;
        await sleep(1000);
      }
      expect(stitched).toContain('/v1/segment/');
      expect(vast.requests.some((r) => r.path === '/vast3')).toBe(true);
      expect(origin).toMatch(new RegExp(`#EXT-X-CUE-OUT:${BREAK_SECONDS}(\\.0+)?\\n`));
      expect(origin).toContain('#EXT-X-CUE-IN');
      const cueOut = HLS.parse(origin);
      if (cueOut.isMasterPlaylist) throw new Error('expected a media playlist');
      expect(cueOut.segments.find((s) => s.markers.some((m) => m.type === 'OUT'))?.programDateTime?.getTime()).toBe(startsAt);

      // stop: DONE, and the archive is the whole run as one MP4 that decodes. At least what the channel had listed by the
      // stop (an encoder behind real time on a loaded machine has listed less than the wall clock ran), at most the run.
      const listed = await mediaPlaylist(mediaUrl);
      const last = listed.segments[listed.segments.length - 1];
      const listedUntil = last?.programDateTime ? last.programDateTime.getTime() + last.duration * 1000 : undefined;
      const stopAt = Date.now();
      const done = await stopAndSettle(engine, auth, id);
      expect(done, JSON.stringify(done)).toMatchObject({ channelStatus: 'DONE', archive: { status: 'AVAILABLE', url: `${engine.url}/media/archives/${id}.mp4` } });
      const download = await fetch(done.archive.url);
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toMatch(/mp4/);
      await download.body?.cancel();
      const seconds = await probeDuration(done.archive.url);
      const expected = (stopAt - firstFrameAt) / 1000;
      const produced = listedUntil === undefined ? expected : (listedUntil - firstFrameAt) / 1000;
      expect(seconds - produced, `archive ${seconds} s, channel listed ${produced} s before its stop`).toBeGreaterThanOrEqual(-1);
      expect(seconds - expected, `archive ${seconds} s, channel ran ${expected} s`).toBeLessThanOrEqual(1 + (c.joinedSegmentSeconds ?? 0));
      // push channels join two encoder runs (the slate, then the sender's): the archive decodes as one
      expect((await decodeLive(done.archive.url, 300)).errors).toBe('');
    } finally {
      await cleanup?.();
    }
  });
});
