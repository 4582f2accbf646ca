import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RtmpServer } from '../../../packager/ingest/rtmp/rtmp-server.js';
import { openRtmpFront } from '../../../packager/ingest/rtmp/rtmp-front.js';
import type { IngestFront } from '../../../packager/ingest/ingest-front.js';
import { isAlive, killStarted, nextEvent, recordEvents, startReceiver, startSender } from './ingest-harness.js';

describe('RTMP_PUSH front', () => {
  let server: RtmpServer;
  let port: number;
  let fronts: IngestFront[];
  let serverRejections: string[];

  beforeEach(async () => {
    serverRejections = [];
    server = new RtmpServer({ onRejected: (reason) => serverRejections.push(reason) });
    port = await server.listen(0, '127.0.0.1');
    fronts = [];
  });

  afterEach(async () => {
    await Promise.all(fronts.map((front) => front.close()));
    await server.close();
    await killStarted();
  });

  async function front(streamKey: string, cidrs: string[]): Promise<IngestFront> {
    const opened = await openRtmpFront({ server, streamKey, cidrs });
    fronts.push(opened);
    return opened;
  }

  it('accepts a sender with the right key from an allowed address and hands decodable frames to the encoder', async () => {
    const input = await front('key-one', ['127.0.0.1/32']);
    expect(input.spawnEncoderOn).toBe('connected');
    const connected = nextEvent(input, 'connected');
    const sender = startSender(`rtmp://127.0.0.1:${port}/live/key-one`, 'flv');
    expect((await connected).remoteAddress).toBe('127.0.0.1');
    const receiver = startReceiver(input, 25);
    const exit = await receiver.exited;
    expect(receiver.stderrTail()).toBe('');
    expect(exit.code).toBe(0);
    expect(receiver.progress.frames).toBeGreaterThanOrEqual(25);
    expect(input.stats().bytesIn).toBeGreaterThan(0);

    const disconnected = nextEvent(input, 'disconnected');
    await input.close();
    // closing the front hangs up the sender: no ffmpeg is left
    await disconnected;
    const senderExit = await sender.exited;
    expect(senderExit.code).not.toBe(0);
    expect(isAlive(sender.pid)).toBe(false);
    expect(isAlive(receiver.pid)).toBe(false);
  });

  it('refuses a wrong stream key before anything reaches the encoder', async () => {
    const input = await front('the-right-key', []);
    const events = recordEvents(input);
    const sender = startSender(`rtmp://127.0.0.1:${port}/live/a-wrong-key`, 'flv');
    const exit = await sender.exited;
    expect(exit.code).not.toBe(0);
    expect(sender.stderrTail()).toMatch(/wrong stream key|BadName/i);
    expect(serverRejections).toEqual(['wrong stream key']);
    expect(events).toEqual([]);
    expect(input.stats().bytesIn).toBe(0);
  });

  it('refuses an address outside the input\'s CIDR list', async () => {
    const input = await front('key-two', ['127.0.0.2/32']);
    const rejected = nextEvent(input, 'rejected');
    const events = recordEvents(input);
    const sender = startSender(`rtmp://127.0.0.1:${port}/live/key-two`, 'flv');
    expect(await rejected).toMatchObject({ reason: 'address outside the CIDR list', remoteAddress: '127.0.0.1' });
    expect((await sender.exited).code).not.toBe(0);
    expect(events.map((event) => event.type)).toEqual(['rejected']);
    expect(input.stats().bytesIn).toBe(0);
  });

  it('reports a sender that leaves and takes it back when it returns', async () => {
    const input = await front('key-three', []);
    const events = recordEvents(input);
    let connected = nextEvent(input, 'connected');
    const first = startSender(`rtmp://127.0.0.1:${port}/live/key-three`, 'flv', { seconds: 2 });
    await connected;
    const firstReceiver = startReceiver(input, 10);
    expect((await firstReceiver.exited).code).toBe(0);
    const disconnected = nextEvent(input, 'disconnected');
    await first.exited;
    await disconnected;

    connected = nextEvent(input, 'connected');
    startSender(`rtmp://127.0.0.1:${port}/live/key-three`, 'flv');
    await connected;
    const secondReceiver = startReceiver(input, 25);
    expect((await secondReceiver.exited).code).toBe(0);
    expect(secondReceiver.progress.frames).toBeGreaterThanOrEqual(25);
    expect(events.map((event) => event.type)).toEqual(['connected', 'disconnected', 'connected']);
  });

  it('keeps a second sender out while one publishes', async () => {
    const input = await front('key-four', []);
    const connected = nextEvent(input, 'connected');
    startSender(`rtmp://127.0.0.1:${port}/live/key-four`, 'flv');
    await connected;
    const rejected = nextEvent(input, 'rejected');
    const intruder = startSender(`rtmp://127.0.0.1:${port}/live/key-four`, 'flv');
    expect((await rejected).reason).toBe('another sender is publishing');
    expect((await intruder.exited).code).not.toBe(0);
  });
});
