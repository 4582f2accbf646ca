import { describe, expect, it } from 'vitest';
import { ChunkReader, ChunkStreamError, writeMessage } from '../../../packager/ingest/rtmp/chunk-stream.js';
import { decodeAmf0, encodeAmf0 } from '../../../packager/ingest/rtmp/amf0.js';

describe('RTMP chunk stream', () => {
  it('reassembles a message split over chunks, whatever the byte boundaries of the reads', () => {
    const payload = Buffer.alloc(1000, 7);
    const bytes = writeMessage({ chunkStreamId: 6, type: 9, streamId: 1, timestamp: 40, payload }, 128);
    const reader = new ChunkReader();
    const messages = [];
    for (let offset = 0; offset < bytes.length; offset += 13) messages.push(...reader.push(bytes.subarray(offset, offset + 13)));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ chunkStreamId: 6, type: 9, streamId: 1, timestamp: 40 });
    expect(messages[0]?.payload.equals(payload)).toBe(true);
  });

  it('adds type-1, type-2 and type-3 deltas to the absolute time of a type-0 header', () => {
    const reader = new ChunkReader();
    const type0 = Buffer.from([0x04, 0, 0, 100, 0, 0, 1, 8, 1, 0, 0, 0, 0xaa]);
    const type1 = Buffer.from([0x44, 0, 0, 20, 0, 0, 1, 8, 0xbb]);
    const type2 = Buffer.from([0x84, 0, 0, 30, 0xcc]);
    const type3 = Buffer.from([0xc4, 0xdd]); // repeats the last delta (30)
    const messages = reader.push(Buffer.concat([type0, type1, type2, type3]));
    expect(messages.map((message) => message.timestamp)).toEqual([100, 120, 150, 180]);
    expect(messages.map((message) => message.payload[0])).toEqual([0xaa, 0xbb, 0xcc, 0xdd]);
  });

  it('reads extended timestamps on the header and on continuation chunks', () => {
    const timestamp = 0x01234567;
    const payload = Buffer.alloc(300, 1);
    const reader = new ChunkReader();
    const [message] = reader.push(writeMessage({ chunkStreamId: 4, type: 8, streamId: 1, timestamp, payload }, 128));
    expect(message?.timestamp).toBe(timestamp);
    expect(message?.payload.length).toBe(300);
  });

  it('follows the peer\'s Set Chunk Size for later chunks', () => {
    const reader = new ChunkReader();
    const setSize = Buffer.alloc(4);
    setSize.writeUInt32BE(4096);
    reader.push(writeMessage({ chunkStreamId: 2, type: 1, streamId: 0, timestamp: 0, payload: setSize }, 128));
    expect(reader.chunkSize).toBe(4096);
    const payload = Buffer.alloc(3000, 2);
    const [message] = reader.push(writeMessage({ chunkStreamId: 4, type: 9, streamId: 1, timestamp: 0, payload }, 4096));
    expect(message?.payload.length).toBe(3000);
  });

  it('refuses a chunk stream that starts without a full header', () => {
    expect(() => new ChunkReader().push(Buffer.from([0xc5, 0]))).toThrow(ChunkStreamError);
  });
});

describe('AMF0', () => {
  it('round-trips the values of an RTMP connect command', () => {
    const values = ['connect', 1, { app: 'live', tcUrl: 'rtmp://h/live', fpad: false, audioCodecs: 3575 }, null, undefined, ['a', 2]];
    expect(decodeAmf0(encodeAmf0(...values))).toEqual(values);
  });

  it('reads an ECMA array as an object', () => {
    const bytes = Buffer.concat([Buffer.from([0x08, 0, 0, 0, 1]), encodeAmf0({ width: 160 }).subarray(1)]);
    expect(decodeAmf0(bytes)).toEqual([{ width: 160 }]);
  });
});
