import net from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { FlvRelay, MAX_ENCODER_BACKLOG_BYTES, TAG_AUDIO, TAG_DATA, TAG_VIDEO, type FlvTag } from '../../../packager/ingest/rtmp/flv-relay.js';

const metadata: FlvTag = { type: TAG_DATA, timestamp: 0, data: Buffer.from('meta') };
const avcConfig: FlvTag = { type: TAG_VIDEO, timestamp: 0, data: Buffer.from([0x17, 0, 0, 0, 0]) };
const aacConfig: FlvTag = { type: TAG_AUDIO, timestamp: 0, data: Buffer.from([0xaf, 0, 0x12, 0x10]) };
const keyframe = (timestamp: number): FlvTag => ({ type: TAG_VIDEO, timestamp, data: Buffer.from([0x17, 1, 0, 0, 0, 0xaa]) });
const interframe = (timestamp: number): FlvTag => ({ type: TAG_VIDEO, timestamp, data: Buffer.from([0x27, 1, 0, 0, 0, 0xbb]) });

/** Splits an FLV byte stream into its tags (type and timestamp). */
function parseFlv(bytes: Buffer): Array<{ type: number; timestamp: number }> {
  expect(bytes.subarray(0, 3).toString()).toBe('FLV');
  const tags = [];
  for (let offset = 13; offset + 11 <= bytes.length;) {
    const size = bytes.readUIntBE(offset + 1, 3);
    tags.push({ type: bytes[offset] ?? 0, timestamp: bytes.readUIntBE(offset + 4, 3) | ((bytes[offset + 7] ?? 0) << 24) });
    offset += 11 + size + 4;
  }
  return tags;
}

describe('FLV relay', () => {
  const relays: FlvRelay[] = [];
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((relay) => relay.close()));
  });

  it('starts a late encoder with the stream headers and the tags since the last keyframe', async () => {
    const relay = new FlvRelay();
    relays.push(relay);
    const port = await relay.listen();
    relay.begin();
    for (const tag of [metadata, avcConfig, aacConfig, keyframe(0), interframe(40), keyframe(1000), interframe(1040)]) relay.write(tag);
    const encoder = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    encoder.on('data', (chunk: Buffer) => chunks.push(chunk));
    await once(encoder, 'connect');
    await new Promise((resolve) => setTimeout(resolve, 100));
    relay.write(interframe(1080));
    relay.end(); // the sender left: the encoder sees its input end
    await once(encoder, 'end');
    expect(parseFlv(Buffer.concat(chunks))).toEqual([
      { type: TAG_DATA, timestamp: 0 }, { type: TAG_VIDEO, timestamp: 0 }, { type: TAG_AUDIO, timestamp: 0 },
      { type: TAG_VIDEO, timestamp: 1000 }, { type: TAG_VIDEO, timestamp: 1040 }, { type: TAG_VIDEO, timestamp: 1080 },
    ]);
  });

  it('refuses an encoder while no sender streams', async () => {
    const relay = new FlvRelay();
    relays.push(relay);
    const encoder = net.connect(await relay.listen(), '127.0.0.1');
    encoder.on('error', () => undefined);
    await once(encoder, 'close');
  });

  it('cuts off an encoder that stops reading instead of queueing without bound', async () => {
    const relay = new FlvRelay();
    relays.push(relay);
    const port = await relay.listen();
    relay.begin();
    const encoder = net.connect(port, '127.0.0.1');
    encoder.on('error', () => undefined);
    await once(encoder, 'connect');
    encoder.pause();
    const closed = once(encoder, 'close');
    const big: FlvTag = { type: TAG_VIDEO, timestamp: 0, data: Buffer.alloc(1024 * 1024, 0x27) };
    for (let index = 0; index < (MAX_ENCODER_BACKLOG_BYTES / big.data.length) * 2 + 64; index += 1) relay.write({ ...big, timestamp: index * 40 });
    encoder.resume();
    await closed;
  });
});
