import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPushIngestService, pushSpecOfManagedInput, type PushIngestService } from '../../../packager/ingest/push-ingest.js';
import type { ManagedInput } from '../../../src/inputs/input.store.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { killStarted, nextEvent, startReceiver, startSender } from './ingest-harness.js';

describe('push ingest service', () => {
  let engine: TestEngine;
  let service: PushIngestService;

  beforeAll(async () => {
    engine = await startTestEngine();
    service = createPushIngestService(engine.ctx);
  });

  afterAll(async () => {
    await killStarted();
    await engine.close();
  });

  it('says which setting to change when RTMP_PORT is taken (a second packager on the same host)', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    const second = createPushIngestService({ ...engine.ctx, config: { ...engine.ctx.config, rtmpPort: port } });
    try {
      await expect(second.open({ protocol: 'RTMP_PUSH', input: 'rtmp-in', workflowId: 'wf-x', cidrs: [] }))
        .rejects.toThrow(`the RTMP ingest port ${port} is taken by another process (packagers sharing a host need their own RTMP_PORT)`);
    } finally {
      await second.close();
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('gives an unmanaged RTMP input a fresh key on the engine\'s RTMP server, and counts its sender in /metrics', async () => {
    const { front, endpoint } = await service.open({ protocol: 'RTMP_PUSH', input: 'rtmp-in', workflowId: 'wf-1', cidrs: ['127.0.0.0/8'] });
    const port = service.rtmpPort();
    expect(port).toBeGreaterThan(0);
    expect(endpoint.streamKey).toMatch(/^[0-9a-f]{32}$/);
    expect(endpoint.url).toBe(`rtmp://127.0.0.1:${port}/live/${endpoint.streamKey}`);

    const connected = nextEvent(front, 'connected');
    startSender(endpoint.url, 'flv');
    await connected;
    const receiver = startReceiver(front, 10);
    expect((await receiver.exited).code).toBe(0);
    const metrics = await (await fetch(`${engine.url}/metrics`)).text();
    expect(metrics).toMatch(/engine_ingest_events_total\{protocol="RTMP_PUSH",event="connected",reason=""\} 1/);
    expect(metrics).toMatch(/engine_ingest_senders_connected\{protocol="RTMP_PUSH"\} 1/);

    await front.close();
    const after = await (await fetch(`${engine.url}/metrics`)).text();
    expect(after).toMatch(/engine_ingest_senders_connected\{protocol="RTMP_PUSH"\} 0/);
    expect(after).toMatch(/engine_ingest_fronts_open\{protocol="RTMP_PUSH"\} 0/);
  });

  it('reopens a managed input on the same port with the same passphrase', async () => {
    const streamKey = 'a-managed-passphrase-kept';
    const first = await service.open({ protocol: 'SRT_PUSH', input: 'srt-in', cidrs: [], streamKey });
    const port = Number(new URL(first.endpoint.url).port);
    await first.front.close();
    const second = await service.open({ protocol: 'SRT_PUSH', input: 'srt-in', cidrs: [], streamKey, port });
    expect(second.endpoint).toEqual(first.endpoint);
    expect(second.endpoint.url).toBe(`srt://127.0.0.1:${port}?passphrase=${streamKey}`);
    await second.front.close();
  });

  it('fails to open a port another input holds, naming the input', async () => {
    const held = await service.open({ protocol: 'RTP', input: 'rtp-a', cidrs: [] });
    const port = Number(new URL(held.endpoint.url).port);
    await expect(service.open({ protocol: 'RIST', input: 'rist-b', cidrs: [], port })).rejects.toThrow(`ingest port ${port} of input rist-b is in use`);
    await held.front.close();
  });

  it('takes a managed input\'s protocol, port and key; a connected device pushes SRT', () => {
    const base: ManagedInput = {
      id: 'in-1', name: 'cam', type: 'VIRTUAL_INPUT', protocol: 'RIST', deviceId: undefined, region: 'local', cidrs: [],
      url: undefined, username: undefined, hasPassword: false, createdAt: 0, updatedAt: 0,
      ingest: { url: 'rist://h:20010', streamKey: undefined, port: 20010 },
    };
    expect(pushSpecOfManagedInput(base)).toEqual({ protocol: 'RIST', streamKey: undefined, port: 20010 });
    const device = { ...base, type: 'CONNECTED_DEVICE' as const, protocol: undefined, ingest: { url: 'srt://h:20020?passphrase=k', streamKey: 'k', port: 20020 } };
    expect(pushSpecOfManagedInput(device)).toEqual({ protocol: 'SRT_PUSH', streamKey: 'k', port: 20020 });
    expect(pushSpecOfManagedInput({ ...base, protocol: 'URL_PULL' })).toBeUndefined();
  });
});
