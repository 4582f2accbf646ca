// Issue 18 "Dynamic ad breaks": POST /channels/{id}/dynamic-ads announces the break at once (future-dated
// EXT-X-DATERANGE with the SCTE-35 splice_insert), marks CUE-OUT / CUE-OUT-CONT / CUE-IN on the segments at the first
// boundary 15–20 s later, and the channel's SSAI playback URL shows the ad (fixture ad server) in that break.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import HLS from 'hls-parser';
import { foundationPart } from '../../../wiring/foundation.part.js';
import { inputsPart } from '../../../wiring/inputs.part.js';
import { livePart } from '../../../wiring/live.part.js';
import { vodPart } from '../../../wiring/vod.part.js';
import { createSsaiPart } from '../../../wiring/ssai.part.js';
import { packagerPart } from '../../../wiring/packager.part.js';
import { decodeScte35 } from '../../../media/scte35.js';
import { VastServer } from '../../../fixtures/vast-server.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { SHARED_CREATIVES, variantUrls } from '../../ssai/setup.js';
import { createWorkflow, loopClip, startAndSettle, stopAndSettle, tinyBlueprint } from './live-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('dynamic ad breaks on a running channel', () => {
  let engine: TestEngine;
  let vast: VastServer;
  let auth: Record<string, string>;

  beforeAll(async () => {
    vast = await VastServer.start();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-live-ads-'));
    fs.mkdirSync(path.join(dataDir, 'media'), { recursive: true });
    fs.mkdirSync(SHARED_CREATIVES, { recursive: true });
    fs.symlinkSync(SHARED_CREATIVES, path.join(dataDir, 'media', 'creatives'));
    engine = await startTestEngine({
      dataDir,
      parts: [foundationPart, inputsPart, livePart, vodPart, createSsaiPart({ originCacheMs: 0, creativeWaitMs: 90_000 }), packagerPart],
    });
    auth = { Authorization: (await engine.login()).IdToken };
    await loopClip(engine);
  });
  afterAll(async () => {
    await engine?.close();
    await vast?.close();
  });

  it('announces the break at once, cues it 15–20 s later, and the SSAI playback URL shows the ad in it', { timeout: 180_000 }, async () => {
    const created = await engine.api('POST', '/broker/adinserts', {
      headers: auth, body: { name: 'live ads', type: 'live', ad_server: `${vast.url}/vast3`, source_url: `${engine.url}/live/` },
    });
    expect(created.status).toBe(200);
    const blueprint = tinyBlueprint('mp4-loop-test');
    blueprint.settings = { adServers: [{ destinationRefId: 'hls-origin', adServerId: created.body.guid }] };
    const id = await createWorkflow(engine, auth, blueprint);
    const detail = await startAndSettle(engine, auth, id);
    expect(detail.channelStatus).toBe('RUNNING');
    const output = detail.outputs[0];
    expect(output.ssaiPlaybackUrl).toBe(`${engine.url}/v1/master/${created.body.guid}/${id}/index.m3u8`);
    const mediaUrl = output.url.replace('index.m3u8', 'index_720p.m3u8');

    const requestedAt = Date.now();
    const answer = await engine.api('POST', `/channels/${id}/dynamic-ads`, { headers: auth, body: { duration: 10 } });
    expect(answer.status).toBe(200);

    // announced at once: a date range in the future carrying the splice_insert of this break
    const announced = HLS.parse(await (await fetch(mediaUrl)).text());
    if (announced.isMasterPlaylist) throw new Error('expected a media playlist');
    // hls-parser hangs a date range on the segment it precedes
    const ranges = [...announced.dateRanges, ...announced.segments.flatMap((s) => (s.dateRange ? [s.dateRange] : []))];
    expect(ranges).toHaveLength(1);
    const range = ranges[0]!;
    const start = range.start!.getTime();
    // spec 8: 15–20 s after the request (1 s for the HTTP round trips); the answer names the same start
    expect(start - requestedAt).toBeGreaterThanOrEqual(15_000 - 1000);
    expect(start - requestedAt).toBeLessThanOrEqual(20_000 + 1000);
    expect(Date.parse(answer.body.startsAt)).toBe(start);
    expect(range.plannedDuration).toBe(10);
    const scte = decodeScte35(Uint8Array.from(range.attributes['SCTE35-OUT'] as Uint8Array));
    expect(scte.ok && scte.value.command.type === 'splice_insert' && scte.value.command.spliceEventId).toBe(answer.body.spliceEventId);
    expect(announced.segments.some((s) => s.markers.length > 0)).toBe(false);

    // the SSAI playback URL: the break's segments come from the ad server's creative
    const master = await (await fetch(output.ssaiPlaybackUrl)).text();
    const variant = new URL(variantUrls(master)[0]!, output.ssaiPlaybackUrl).toString();
    let stitched = '';
    let origin = '';
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      origin = await (await fetch(mediaUrl)).text();
      stitched = await (await fetch(variant)).text();
      if (origin.includes('#EXT-X-CUE-IN') && stitched.includes('/v1/segment/')) break;
      await sleep(1000);
    }
    expect(origin).toMatch(/#EXT-X-CUE-OUT:10\n/);
    expect(origin).toMatch(/#EXT-X-CUE-OUT-CONT:ElapsedTime=\d/);
    expect(origin).toContain('#EXT-X-CUE-IN');
    const parsed = HLS.parse(origin);
    if (parsed.isMasterPlaylist) throw new Error('expected a media playlist');
    const cueOut = parsed.segments.find((s) => s.markers.some((m) => m.type === 'OUT'));
    expect(cueOut?.programDateTime?.getTime()).toBe(start);
    expect(stitched).toContain('/v1/segment/');
    expect(vast.requests.some((r) => r.path === '/vast3')).toBe(true);

    expect((await stopAndSettle(engine, auth, id)).channelStatus).toBe('DONE');
  });
});
