// Issue 18 input switching and graphs: a channel with two inputs switches from one to the other while its output keeps
// running (monotonic media sequence, one discontinuity at the switch); its eight graph metrics are sampled for real
// and exported as Prometheus gauges per channel.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { CHANNEL_METRICS } from '../../../kernel/seams/channel-runtime.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { createWorkflow, decodeLive, loopClip, startAndSettle, stopAndSettle, tinyBlueprint, mediaPlaylist, sleep } from './live-helpers.js';

describe('a two-input channel', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;

  beforeAll(async () => {
    engine = await startTestEngine();
    auth = { Authorization: (await engine.login()).IdToken };
    await loopClip(engine);
    await generateMedia('clip', path.join(engine.dataDir, 'media', 'test-media', 'backup.mp4'), { seconds: 30, size: '320x180' });
  });
  afterAll(async () => engine?.close());

  it('switches inputs with the output running: monotonic sequence, one discontinuity; graphs and gauges sampled', { timeout: 150_000 }, async () => {
    const blueprint = tinyBlueprint('two-input-switch');
    const components = blueprint.components as Record<string, { input: Record<string, unknown> }>;
    // two pull inputs (the push fronts are built elsewhere): a looped file, and the same engine's media over HTTP
    components.encoder!.input = { name: 'primary', type: 'MP4', sources: [{ url: 'test-media/sample.mp4' }] };
    components.backup!.input = { name: 'backup', type: 'URL_PULL', sources: [{ url: `${engine.url}/media/test-media/backup.mp4` }] };
    const id = await createWorkflow(engine, auth, blueprint, 'Switch');
    const detail = await startAndSettle(engine, auth, id);
    expect(detail).toMatchObject({ channelStatus: 'RUNNING', activeInput: 'primary' });
    const url = detail.outputs[0].url.replace('index.m3u8', 'index_720p.m3u8');

    await sleep(4000);
    const before = await mediaPlaylist(url);
    expect(before.segments.some((s) => s.discontinuity)).toBe(false);
    const switched = await engine.api('POST', `/channels/${id}/input-switch`, { headers: auth, body: { input: 'backup' } });
    expect(switched.body).toEqual({ workflowId: id, activeInput: 'backup' });

    const seen: number[] = [];
    let after = before;
    for (let i = 0; i < 12; i++) {
      await sleep(1000);
      after = await mediaPlaylist(url);
      seen.push(after.segments.at(-1)!.mediaSequenceNumber);
    }
    // the output kept going and its numbering never went back
    expect(seen.every((n, i) => i === 0 || n >= seen[i - 1]!)).toBe(true);
    expect(after.segments.at(-1)!.mediaSequenceNumber).toBeGreaterThan(before.segments.at(-1)!.mediaSequenceNumber + 3);
    expect(after.mediaSequenceBase ?? 0).toBeGreaterThanOrEqual(before.mediaSequenceBase ?? 0);
    const breaks = after.segments.filter((s) => s.discontinuity);
    expect(breaks).toHaveLength(1);
    expect(breaks[0]!.uri).toMatch(/^r2_/);
    const switchedAt = after.segments.indexOf(breaks[0]!);
    expect(after.segments.slice(switchedAt).every((s) => s.uri.startsWith('r2_'))).toBe(true);
    expect((await engine.api('GET', `/channels/${id}`, { headers: auth })).body.activeInput).toBe('backup');
    expect((await engine.api('GET', `/channels/${id}`, { headers: auth })).body.inputs).toEqual([
      { name: 'primary', type: 'MP4', url: 'file:test-media/sample.mp4' },
      { name: 'backup', type: 'URL_PULL', url: `${engine.url}/media/test-media/backup.mp4` },
    ]);
    const decoded = await decodeLive(detail.outputs[0].url, 4);
    expect(decoded.errors).toBe('');

    // graphs: every metric has samples; the encoder reads its input and writes its renditions
    for (const metric of CHANNEL_METRICS) {
      const graph = await engine.api('GET', `/channels/${id}/graphs?metric=${metric}`, { headers: auth });
      expect(graph.body.points.length, metric).toBeGreaterThanOrEqual(2);
    }
    const values = async (metric: string) => ((await engine.api('GET', `/channels/${id}/graphs?metric=${metric}`, { headers: auth })).body.points as Array<{ value: number }>).map((p) => p.value);
    expect(Math.max(...await values('NETWORK_IN'))).toBeGreaterThan(0);
    expect(Math.max(...await values('NETWORK_OUT'))).toBeGreaterThan(0.1);
    expect(Math.max(...await values('INPUT_VIDEO_FRAME_RATE'))).toBeGreaterThan(5);
    const metrics = await (await fetch(`${engine.url}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`engine_live_channel_metric\\{workflow_id="${id}",metric="NETWORK_OUT"\\} [0-9.]+`));

    expect((await stopAndSettle(engine, auth, id)).channelStatus).toBe('DONE');
    expect(await (await fetch(`${engine.url}/metrics`)).text()).not.toContain(`workflow_id="${id}"`);
  });

  it('switches the two-input-switch blueprint from its RTMP camera to the pull backup and back, the camera staying connected', { timeout: 150_000 }, async () => {
    const blueprint = tinyBlueprint('two-input-switch');
    (blueprint.components as Record<string, { input: Record<string, unknown> }>).backup!.input.sources = [{ url: `${engine.url}/media/test-media/backup.mp4` }];
    const id = await createWorkflow(engine, auth, blueprint, 'Camera and backup');
    const detail = await startAndSettle(engine, auth, id);
    expect(detail.channelStatus, detail.statusReason).toBe('RUNNING');
    expect(detail.inputs.map((i: { name: string; type: string }) => [i.name, i.type])).toEqual([['primary', 'RTMP_PUSH'], ['backup', 'URL_PULL']]);
    const url = detail.outputs[0].url.replace('index.m3u8', 'index_720p.m3u8');
    const onAir = async (prefix: string) => {
      const deadline = Date.now() + 45_000;
      while (Date.now() < deadline) {
        if ((await mediaPlaylist(url)).segments.some((s) => s.uri.startsWith(prefix))) return;
        await sleep(500);
      }
      throw new Error(`${prefix} never went on air`);
    };
    const camera = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=15',
      '-f', 'lavfi', '-i', 'sine=sample_rate=48000', '-t', '90', '-pix_fmt', 'yuv420p', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '15',
      '-c:a', 'aac', '-f', 'flv', detail.inputs[0].url], { stdio: 'ignore' });
    try {
      await onAir('r2_'); // the camera after the slate
      await engine.api('POST', `/channels/${id}/input-switch`, { headers: auth, body: { input: 'backup' } });
      await onAir('r3_');
      await engine.api('POST', `/channels/${id}/input-switch`, { headers: auth, body: { input: 'primary' } });
      await onAir('r4_'); // the camera again: its front stayed open and its sender connected
      expect(camera.exitCode).toBeNull();
      const playlist = await mediaPlaylist(url);
      const sequence = playlist.segments.map((s) => s.mediaSequenceNumber);
      expect(sequence).toEqual(sequence.map((_, i) => sequence[0]! + i));
      // one discontinuity where each run begins
      const runs = playlist.segments.map((s) => s.uri.split('_')[0]);
      playlist.segments.forEach((s, i) => expect(!!s.discontinuity, s.uri).toBe(i > 0 && runs[i] !== runs[i - 1]));
      expect((await stopAndSettle(engine, auth, id)).channelStatus).toBe('DONE');
    } finally {
      camera.kill('SIGKILL');
    }
  });
});
