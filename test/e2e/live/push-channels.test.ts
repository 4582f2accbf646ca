// Issue 18 end to end with push inputs: channels from the rtmp-push-abr and srt-push catalog blueprints show their
// ingest endpoint, run the slate until a real ffmpeg sender pushes, then put the sender on air; a stop leaves no ffmpeg.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { killStarted, startSender } from '../../packager/ingest/ingest-harness.js';
import { live } from '../../api/live/live-helpers.js';
import { DeviceAgent } from '../../../packager/ingest/device/device-agent.js';
import { createLogger } from '../../../kernel/core/logger.js';
import { FFMPEG } from '../../packager/ingest/ingest-harness.js';
import { alive, createWorkflow, decodeLive, startAndSettle, stopAndSettle, tinyBlueprint } from './live-helpers.js';

function commandLine(pid: number | undefined): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

async function until<T>(read: () => T, accept: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached in time; last value ${String(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('channels with push inputs', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;

  beforeAll(async () => {
    engine = await startTestEngine();
    auth = { Authorization: (await engine.login()).IdToken };
  });
  afterAll(async () => {
    await killStarted();
    await engine?.close();
  });

  it.each([
    { blueprint: 'rtmp-push-abr', type: 'RTMP_PUSH', format: 'flv', reads: 'tcp://127.0.0.1' },
    { blueprint: 'srt-push', type: 'SRT_PUSH', format: 'mpegts', reads: 'tcp://127.0.0.1' },
  ])('$blueprint: the slate runs until the sender pushes, then the sender is on air', { timeout: 120_000 }, async ({ blueprint, type, format, reads }) => {
    const id = await createWorkflow(engine, auth, tinyBlueprint(blueprint));
    const detail = await startAndSettle(engine, auth, id);
    expect(detail, JSON.stringify(detail)).toMatchObject({ channelStatus: 'RUNNING' });
    const [input] = detail.inputs;
    expect(input).toMatchObject({ type, streamKey: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(input.url).toContain(input.streamKey);
    const channel = engine.ctx.services.liveRuntime?.channel(id);
    const slatePid = channel?.encoderPid();
    expect(commandLine(slatePid)).not.toContain(reads);

    startSender(input.url, format);
    const inputPid = await until(() => channel?.encoderPid(), (pid) => pid !== undefined && pid !== slatePid && commandLine(pid).includes(reads));
    const decoded = await decodeLive(detail.outputs[0].url, 3);
    expect(decoded.decodedSec).toBeGreaterThanOrEqual(2.5);

    const stopped = await stopAndSettle(engine, auth, id);
    expect(stopped.channelStatus).toBe('DONE');
    expect(alive(inputPid)).toBe(false);
  });

  it('fails the start with the reason when the blueprint names a managed input that does not exist', { timeout: 60_000 }, async () => {
    const id = await createWorkflow(engine, auth, tinyBlueprint('srt-push', (_channel, blueprint) => {
      blueprint.components.encoder.input.managedInputId = 'no-such-input';
    }));
    const detail = await startAndSettle(engine, auth, id);
    expect(detail.channelStatus).toBe('START_FAILED');
    expect(detail.statusReason).toMatch(/managed input no-such-input does not exist/);
  });

  it('runs a channel whose input names only a managed SRT input, at the same address and passphrase at every start', { timeout: 120_000 }, async () => {
    // Managed ports are fixed slots from 20000: skip a random number so engines of other runs do not meet on one.
    for (let index = Math.floor(Math.random() * 40); index > 0; index -= 1) {
      await engine.api('POST', '/inputs', { headers: auth, body: { name: `filler ${index}`, type: 'VIRTUAL_INPUT', protocol: 'RIST' } });
    }
    const managed = (await engine.api('POST', '/inputs', { headers: auth, body: { name: 'studio', type: 'VIRTUAL_INPUT', protocol: 'SRT_PUSH', cidrs: ['127.0.0.1/32'] } })).body;
    const id = await createWorkflow(engine, auth, tinyBlueprint('srt-push', (_channel, blueprint) => {
      blueprint.components.encoder.input = { name: 'studio-in', managedInputId: managed.id };
    }));
    const first = await startAndSettle(engine, auth, id);
    expect(first, JSON.stringify(first)).toMatchObject({ channelStatus: 'RUNNING' });
    expect(first.inputs[0]).toMatchObject({ type: 'SRT_PUSH', url: managed.ingest.url, streamKey: managed.ingest.streamKey });
    const channel = engine.ctx.services.liveRuntime?.channel(id);
    const slatePid = channel?.encoderPid();
    const sender = startSender(first.inputs[0].url, 'mpegts');
    await until(() => channel?.encoderPid(), (pid) => pid !== undefined && pid !== slatePid && commandLine(pid).includes('tcp://127.0.0.1'));
    expect((await stopAndSettle(engine, auth, id)).channelStatus).toBe('DONE');
    await sender.stop();

    // starting the finished workflow again runs a copy: the managed input's address and key are the same
    const again = await engine.api('POST', '/channels', { headers: auth, body: { workflows: [id] } });
    const copy = again.body.items[0].workflowId as string;
    await live(engine).channels.settled();
    const second = (await engine.api('GET', `/channels/${copy}`, { headers: auth })).body;
    expect(second.channelStatus).toBe('RUNNING');
    expect(second.inputs[0]).toEqual(first.inputs[0]);
    expect((await stopAndSettle(engine, auth, copy)).channelStatus).toBe('DONE');
  });

  it('puts a connected device on air: `engine device` pushes to its managed input, which a channel names', { timeout: 120_000 }, async () => {
    const key = (await engine.api('POST', '/api-keys', { headers: auth, body: { name: 'camera' } })).body.value as string;
    const agent = new DeviceAgent({ engineUrl: engine.url, apiKey: key, deviceId: 'cam-e2e', heartbeatMs: 300, ffmpegPath: FFMPEG, logger: createLogger('silent'), settings: { resolution: '320x180', bitrate: 200 } });
    await agent.start();
    try {
      for (let index = Math.floor(Math.random() * 40); index > 0; index -= 1) {
        await engine.api('POST', '/inputs', { headers: auth, body: { name: `filler ${index}`, type: 'VIRTUAL_INPUT', protocol: 'RIST' } });
      }
      const input = (await engine.api('POST', '/inputs', { headers: auth, body: { name: 'camera', type: 'CONNECTED_DEVICE', deviceId: 'cam-e2e' } })).body;
      const id = await createWorkflow(engine, auth, tinyBlueprint('srt-push', (_channel, blueprint) => {
        blueprint.components.encoder.input = { name: 'camera-in', managedInputId: input.id };
      }));
      const detail = await startAndSettle(engine, auth, id);
      expect(detail, JSON.stringify(detail)).toMatchObject({ channelStatus: 'RUNNING' });
      const channel = engine.ctx.services.liveRuntime?.channel(id);
      // the device pushes before the channel runs: it may be on air before RUNNING already
      await until(() => channel?.encoderPid(), (pid) => commandLine(pid).includes('tcp://127.0.0.1'), 60_000);
      expect((await stopAndSettle(engine, auth, id)).channelStatus).toBe('DONE');
    } finally {
      await agent.stop();
    }
  });
});
