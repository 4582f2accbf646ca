import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openUdpFront, type UdpIngestFront, type UdpProtocol } from '../../../packager/ingest/udp/udp-front.js';
import { FFMPEG, isAlive, killStarted, nextEvent, recordEvents, startReceiver, startSender } from './ingest-harness.js';

async function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const PASSPHRASE = 'correct-horse-battery-staple';

/** How a test sender pushes to each protocol's front. */
function senderFor(protocol: UdpProtocol, port: number, passphrase = PASSPHRASE): { url: string; format: string; outputOptions?: string[] } {
  switch (protocol) {
    case 'SRT_PUSH':
      return { url: `srt://127.0.0.1:${port}?passphrase=${passphrase}`, format: 'mpegts' };
    case 'RIST':
      return { url: `rist://127.0.0.1:${port}`, format: 'mpegts' };
    case 'RTP':
      return { url: `rtp://127.0.0.1:${port}`, format: 'rtp_mpegts' };
    case 'RTP_FEC':
      return { url: `rtp://127.0.0.1:${port}`, format: 'rtp_mpegts', outputOptions: ['-fec', 'prompeg=l=4:d=4'] };
  }
}

function push(protocol: UdpProtocol, front: UdpIngestFront, options: { seconds?: number; passphrase?: string; outputOptions?: string[] } = {}) {
  const { url, format, outputOptions = [] } = senderFor(protocol, front.port, options.passphrase);
  return startSender(url, format, { seconds: options.seconds ?? 30, outputOptions: [...(options.outputOptions ?? []), ...outputOptions] });
}

const fronts: UdpIngestFront[] = [];
async function open(protocol: UdpProtocol, cidrs: string[] = ['127.0.0.1/32'], idleMs = 1_500, ffmpegPath?: string): Promise<UdpIngestFront> {
  const front = await openUdpFront({
    protocol, host: '127.0.0.1', port: 0, cidrs, passphrase: protocol === 'SRT_PUSH' ? PASSPHRASE : undefined, idleMs,
    ...(ffmpegPath ? { ffmpegPath } : {}),
  });
  fronts.push(front);
  return front;
}

afterEach(async () => {
  await Promise.all(fronts.splice(0).map((front) => front.close()));
  await killStarted();
});

describe.each(['SRT_PUSH', 'RIST', 'RTP', 'RTP_FEC'] as const)('%s front', (protocol) => {
  it('relays an allowed sender through its private listener to the encoder, which decodes its frames', async () => {
    const front = await open(protocol);
    expect(front.spawnEncoderOn).toBe('connected');
    const connected = nextEvent(front, 'connected');
    push(protocol, front);
    expect((await connected).remoteAddress).toBe('127.0.0.1');
    // the encoder is spawned on `connected`, as the runtime does
    const receiver = startReceiver(front, 25);
    const exit = await receiver.exited;
    expect(exit.code, receiver.stderrTail()).toBe(0);
    expect(receiver.progress.frames).toBeGreaterThanOrEqual(25);
    expect(front.stats().bytesIn).toBeGreaterThan(0);
    if (protocol === 'RTP' || protocol === 'RTP_FEC') expect(front.stats().packetsLost).toBe(0);
  });

  it('drops a sender whose address is outside the CIDR list', async () => {
    const front = await open(protocol, ['127.0.0.2/32']);
    const events = recordEvents(front);
    const rejected = nextEvent(front, 'rejected');
    push(protocol, front, { seconds: 4 });
    expect(await rejected).toMatchObject({ reason: 'address outside the CIDR list', remoteAddress: '127.0.0.1' });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(events.map((event) => event.type)).toEqual(['rejected']);
    expect(front.stats().bytesIn).toBe(0);
  });
});

describe('SRT_PUSH passphrase', () => {
  it('reports a sender with a wrong passphrase as refused, and never as connected', async () => {
    const front = await open('SRT_PUSH');
    const events = recordEvents(front);
    const rejected = nextEvent(front, 'rejected');
    const sender = push('SRT_PUSH', front, { passphrase: 'not-the-passphrase-at-all', seconds: 4 });
    expect((await rejected).reason).toBe('wrong passphrase');
    expect((await sender.exited).code).not.toBe(0);
    expect(events.some((event) => event.type === 'connected')).toBe(false);
  });
});

describe.each(['SRT_PUSH', 'RTP'] as const)('%s sender that leaves and returns', (protocol) => {
  it('is reported gone, the encoder sees its input end, and the returning sender is relayed again', async () => {
    // 4 s of silence before "gone": a returning sender's first second (x264 starting) may stall on a busy machine
    const front = await open(protocol, ['127.0.0.1/32'], 4_000);
    const events = recordEvents(front);
    let connected = nextEvent(front, 'connected');
    const sender = push(protocol, front, { seconds: 30 });
    await connected;
    const first = startReceiver(front, 100_000);
    await until(() => first.progress.frames >= 10);
    const disconnected = nextEvent(front, 'disconnected');
    await sender.stop();
    await disconnected;
    // the encoder reads the end of its input: the runtime puts its slate on air
    await first.exited;

    connected = nextEvent(front, 'connected');
    push(protocol, front);
    await connected;
    const second = startReceiver(front, 25);
    expect((await second.exited).code, second.stderrTail()).toBe(0);
    expect(second.progress.frames).toBeGreaterThanOrEqual(25);
    expect(events.map((event) => event.type)).toEqual(['connected', 'disconnected', 'connected']);
  });
});

describe('the private listener', () => {
  it('is replaced when its RIST sender goes silent (it would wait forever), and killed when the input closes', async () => {
    const front = await open('RIST');
    await until(() => front.listenerPid() !== undefined);
    const firstListener = front.listenerPid() ?? 0;
    const connected = nextEvent(front, 'connected');
    const sender = push('RIST', front, { seconds: 30 });
    await connected;
    const disconnected = nextEvent(front, 'disconnected');
    await sender.stop();
    expect((await disconnected).reason).toMatch(/no data/);
    await until(() => front.listenerPid() !== undefined && front.listenerPid() !== firstListener);
    expect(isAlive(firstListener)).toBe(false);
    const secondListener = front.listenerPid() ?? 0;
    expect(isAlive(secondListener)).toBe(true);
    await front.close();
    expect(isAlive(secondListener)).toBe(false);
    expect(front.listenerPid()).toBeUndefined();
  });
});

describe.each(['RIST', 'RTP', 'RTP_FEC'] as const)('%s sender that pushes while the private listener (re)starts', (protocol) => {
  // The real ffmpeg, started a second late as on a loaded machine: a sender's first datagrams surely arrive before its
  // listener has bound the loopback port, both when the front opens and when the listener is replaced after a sender
  // left. The sender makes one keyframe only, its first (SPS/PPS in it): a datagram of it lost, no picture at all.
  let dir = '';
  let slowFfmpeg = '';
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'slow-ffmpeg-'));
    slowFfmpeg = path.join(dir, 'ffmpeg');
    await writeFile(slowFfmpeg, `#!/bin/sh\nsleep 1\nexec ${JSON.stringify(FFMPEG)} "$@"\n`);
    await chmod(slowFfmpeg, 0o755);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const oneKeyframe = ['-g', '1000', '-sc_threshold', '0'];

  it('has its first datagrams held and relayed once the listener is bound, at the start and after a restart', async () => {
    const front = await open(protocol, ['127.0.0.1/32'], 1_500, slowFfmpeg);
    const events = recordEvents(front);
    let connected = nextEvent(front, 'connected');
    const sender = push(protocol, front, { seconds: 30, outputOptions: oneKeyframe });
    await connected;
    // not bound yet: the ffmpeg of the listener is still sleeping
    const first = startReceiver(front, 25);
    expect((await first.exited).code, first.stderrTail()).toBe(0);
    expect(first.progress.frames).toBeGreaterThanOrEqual(25);

    const disconnected = nextEvent(front, 'disconnected');
    await sender.stop();
    await disconnected;
    // back at once, while the killed listener is replaced by one that sleeps a second before it binds
    connected = nextEvent(front, 'connected');
    push(protocol, front, { seconds: 30, outputOptions: oneKeyframe });
    await connected;
    const second = startReceiver(front, 25);
    expect((await second.exited).code, second.stderrTail()).toBe(0);
    expect(second.progress.frames).toBeGreaterThanOrEqual(25);
    expect(events.map((event) => event.type)).toEqual(['connected', 'disconnected', 'connected']);
  });
});
