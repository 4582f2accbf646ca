import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceAgent } from '../../../packager/ingest/device/device-agent.js';
import { createPushIngestService, pushSpecOfManagedInput } from '../../../packager/ingest/push-ingest.js';
import { DeviceStore } from '../../../src/devices/device.store.js';
import { createLogger } from '../../../kernel/core/logger.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { FFMPEG, isAlive, killStarted, nextEvent, startReceiver } from './ingest-harness.js';

async function until<T>(read: () => Promise<T> | T, accept: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached in time; last value ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

describe('engine device (connected device agent)', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;
  let agent: DeviceAgent | undefined;

  beforeAll(async () => {
    engine = await startTestEngine();
    auth = { Authorization: (await engine.login()).IdToken };
  });

  afterAll(async () => {
    await agent?.stop();
    await killStarted();
    await engine.close();
  });

  it('heartbeats, applies the settings the engine asks for, and pushes its signal to its managed input', async () => {
    const key = await engine.api('POST', '/api-keys', { headers: auth, body: { name: 'field device' } });
    expect(key.status).toBe(200);
    agent = new DeviceAgent({
      engineUrl: engine.url, apiKey: key.body.value, deviceId: 'cam-1', name: 'Camera one', heartbeatMs: 300,
      ffmpegPath: FFMPEG, logger: createLogger('silent'), settings: { resolution: '160x90', bitrate: 150 },
    });
    await agent.start();
    const devices = await engine.api('GET', '/devices', { headers: auth });
    expect(devices.body.items).toEqual([expect.objectContaining({ id: 'cam-1', name: 'Camera one', connectivity: expect.objectContaining({ online: true }), settings: { resolution: '160x90', bitrate: 150 } })]);
    expect(devices.body.items[0].managedInputId).toBeUndefined();
    expect(agent.snapshot().pushArgs).toBeUndefined();

    // Managed input ports are fixed slots from 20000: skip a random number of them so that engines of other
    // test runs on this machine do not meet on one UDP port.
    for (let index = Math.floor(Math.random() * 40); index > 0; index -= 1) {
      await engine.api('POST', '/inputs', { headers: auth, body: { name: `filler ${index}`, type: 'VIRTUAL_INPUT', protocol: 'RIST' } });
    }
    const created = await engine.api('POST', '/inputs', { headers: auth, body: { name: 'Camera one input', type: 'CONNECTED_DEVICE', deviceId: 'cam-1' } });
    expect(created.status).toBe(200);
    const managed = await engine.ctx.services.managedInputs?.get(engine.defaultOrganizationId, created.body.id);
    const fixed = managed ? pushSpecOfManagedInput(managed.input) : undefined;
    expect(fixed?.protocol).toBe('SRT_PUSH');
    const { front } = await createPushIngestService(engine.ctx).open({ input: 'cam', cidrs: managed?.input.cidrs ?? [], ...fixed!, protocol: 'SRT_PUSH' });
    await nextEvent(front, 'connected');
    // the encoder is spawned on `connected`, as the runtime does
    const receiver = startReceiver(front, 25);
    const exit = await receiver.exited;
    expect(exit.code, receiver.stderrTail()).toBe(0);
    expect(receiver.progress.frames).toBeGreaterThanOrEqual(25);
    expect(agent.snapshot()).toMatchObject({ managedInputId: created.body.id, ingestUrl: created.body.ingest.url });

    // The engine asks for other settings: the device applies them, confirms their version, and restarts its push.
    await new DeviceStore(engine.ctx.store.db).requestSettings(engine.defaultOrganizationId, 'cam-1', { resolution: '320x180', bitrate: 200 });
    const synced = await until(
      async () => (await engine.api('GET', '/devices', { headers: auth })).body.items[0],
      (device) => device.settingsSync.state === 'IN_SYNC',
    );
    expect(synced).toMatchObject({ settings: { resolution: '320x180', bitrate: 200 }, settingsSync: { reportedVersion: 1, desiredVersion: 1 } });
    const restarted = await until(() => agent!.snapshot(), (state) => state.pushArgs?.includes('testsrc2=size=320x180:rate=25') === true);
    const pid = restarted.pushPid ?? 0;
    expect(isAlive(pid)).toBe(true);

    await agent.stop();
    expect(isAlive(pid)).toBe(false);
    await front.close();
  });

  it('refuses to start with an API key the engine does not know', async () => {
    const stranger = new DeviceAgent({ engineUrl: engine.url, apiKey: 'not-a-key', deviceId: 'cam-2', heartbeatMs: 300, ffmpegPath: FFMPEG, logger: createLogger('silent') });
    await expect(stranger.start()).rejects.toThrow(/401/);
    await stranger.stop();
  });

  it('runs as `engine device` until SIGTERM', async () => {
    const key = await engine.api('POST', '/api-keys', { headers: auth, body: { name: 'cli device' } });
    const child = spawn(process.execPath, ['bin/engine.js', 'device', '--id', 'cam-cli', '--name', 'CLI camera', '--api-key', key.body.value, '--engine-url', engine.url, '--interval', '0.3'], {
      env: { PATH: process.env.PATH, LOG_LEVEL: 'silent', FFMPEG_PATH: FFMPEG },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    const device = await until(
      async () => ((await engine.api('GET', '/devices', { headers: auth })).body.items as Array<{ id: string; name: string; connectivity: { online: boolean } }>).find((item) => item.id === 'cam-cli'),
      (found) => found !== undefined,
    );
    expect(device).toMatchObject({ name: 'CLI camera', connectivity: { online: true } });
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code, stderr).toBe(0);
  });
});
