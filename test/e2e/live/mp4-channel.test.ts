// Issue 18 end to end with a pull input (no push front needed): a catalog blueprint's channel runs for real, its HLS
// decodes and plays in hls.js, and a stop leaves no ffmpeg behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import HLS from 'hls-parser';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { hasChromium, playHls, servePlayer } from '../../helpers/hls-player.js';
import { alive, createWorkflow, decodeLive, loopClip, startAndSettle, stopAndSettle, tinyBlueprint } from './live-helpers.js';

describe('a channel from the mp4-loop-test blueprint', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;

  beforeAll(async () => {
    engine = await startTestEngine();
    auth = { Authorization: (await engine.login()).IdToken };
    await loopClip(engine);
  });
  afterAll(async () => engine?.close());

  it('runs, serves HLS that decodes and plays in hls.js, and stops to DONE without leaving ffmpeg', { timeout: 120_000 }, async () => {
    const id = await createWorkflow(engine, auth, tinyBlueprint('mp4-loop-test'));
    const detail = await startAndSettle(engine, auth, id);
    expect(detail, JSON.stringify(detail)).toMatchObject({ channelStatus: 'RUNNING', startedDateTime: expect.any(String) });
    const output = detail.outputs[0];
    expect(output).toMatchObject({ destinationId: 'hls-origin', type: 'HLS', url: `${engine.url}/live/${id}/index.m3u8` });

    const multivariant = HLS.parse(await (await fetch(output.url)).text());
    expect(multivariant.isMasterPlaylist).toBe(true);
    if (!multivariant.isMasterPlaylist) return;
    expect(multivariant.variants.map((v) => v.resolution)).toEqual([{ width: 320, height: 180 }]);
    const mediaUrl = new URL(multivariant.variants[0]!.uri, output.url).toString();
    const media = HLS.parse(await (await fetch(mediaUrl)).text());
    if (media.isMasterPlaylist) throw new Error('expected a media playlist');
    expect(media.segments.length).toBeGreaterThan(0);
    expect(media.segments.every((s) => s.programDateTime instanceof Date)).toBe(true);

    const decoded = await decodeLive(output.url, 4);
    expect(decoded.errors).toBe('');
    expect(decoded.decodedSec).toBeGreaterThanOrEqual(3.5);

    const later = HLS.parse(await (await fetch(mediaUrl)).text());
    if (later.isMasterPlaylist) throw new Error('expected a media playlist');
    expect(later.segments.at(-1)!.mediaSequenceNumber).toBeGreaterThan(media.segments.at(-1)!.mediaSequenceNumber);

    if (await hasChromium()) {
      const player = await servePlayer();
      try {
        const played = await playHls(player.base, output.url, 3, 45_000);
        expect(played.fatal).toBeNull();
        expect(played.playedTo).toBeGreaterThanOrEqual(3);
      } finally {
        await player.close();
      }
    }

    const pid = engine.ctx.services.liveRuntime?.channel(id)?.encoderPid();
    expect(alive(pid)).toBe(true);
    const stopped = await stopAndSettle(engine, auth, id);
    expect(stopped).toMatchObject({ channelStatus: 'DONE', stoppedDateTime: expect.any(String) });
    expect(alive(pid)).toBe(false);
    expect((await fetch(output.url)).status).toBe(404);
  });

  it('fails the start with the reason when the source cannot be read, and leaves no ffmpeg', { timeout: 60_000 }, async () => {
    const blueprint = tinyBlueprint('mp4-loop-test');
    (blueprint.components.encoder.input.sources as Array<{ url: string }>)[0]!.url = 'test-media/missing.mp4';
    const id = await createWorkflow(engine, auth, blueprint);
    const detail = await startAndSettle(engine, auth, id);
    expect(detail.channelStatus).toBe('START_FAILED');
    expect(detail.statusReason).toMatch(/missing\.mp4/);
    expect(engine.ctx.services.liveRuntime?.channel(id)).toBeUndefined();
  });
  // every protocol has a front now: push inputs are tested in push-channels.test.ts
});
