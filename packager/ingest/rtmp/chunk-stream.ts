// RTMP chunk stream (RTMP 1.0 section 5.3): splits the bytes after the handshake into messages, and frames our
// answers. Timestamps follow ffmpeg's reading (rtmppkt.c): a type-0 header carries the absolute time, types
// 1–3 add a delta, and a type-3 header repeats the previous delta and its extended-timestamp field.

export interface RtmpMessage {
  chunkStreamId: number;
  type: number;
  streamId: number;
  /** milliseconds */
  timestamp: number;
  payload: Buffer;
}

export class ChunkStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChunkStreamError';
  }
}

interface ChunkStreamState {
  timestamp: number;
  /** the 24-bit field of the last header, or the extended value when that field was 0xFFFFFF */
  delta: number;
  extended: boolean;
  length: number;
  type: number;
  streamId: number;
  /** chunks of the message being assembled */
  parts: Buffer[];
  received: number;
}

/** Largest message we assemble: a keyframe of a high-bitrate stream fits; anything bigger is an attack. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export class ChunkReader {
  private pending: Buffer = Buffer.alloc(0);
  private readonly streams = new Map<number, ChunkStreamState>();
  /** the peer's chunk size, changed by its Set Chunk Size message */
  chunkSize = 128;

  /** Feeds bytes; returns the messages they completed. */
  push(bytes: Buffer): RtmpMessage[] {
    this.pending = this.pending.length === 0 ? bytes : Buffer.concat([this.pending, bytes]);
    const messages: RtmpMessage[] = [];
    for (;;) {
      const consumed = this.readChunk(messages);
      if (consumed === 0) break;
      this.pending = this.pending.subarray(consumed);
    }
    return messages;
  }

  /** Reads one chunk from `pending`; 0 when it is not complete yet (state is only changed for whole chunks). */
  private readChunk(out: RtmpMessage[]): number {
    const data = this.pending;
    if (data.length < 1) return 0;
    const first = data[0] ?? 0;
    const format = first >> 6;
    let offset = 1;
    let chunkStreamId = first & 0x3f;
    if (chunkStreamId === 0) {
      if (data.length < 2) return 0;
      chunkStreamId = 64 + (data[1] ?? 0);
      offset = 2;
    } else if (chunkStreamId === 1) {
      if (data.length < 3) return 0;
      chunkStreamId = 64 + (data[1] ?? 0) + (data[2] ?? 0) * 256;
      offset = 3;
    }
    const previous = this.streams.get(chunkStreamId);
    if (format !== 0 && !previous) throw new ChunkStreamError(`chunk stream ${chunkStreamId} starts without a full header`);
    const headerBytes = [11, 7, 3, 0][format] ?? 0;
    if (data.length < offset + headerBytes) return 0;
    let delta = previous?.delta ?? 0;
    let extended = previous?.extended ?? false;
    let length = previous?.length ?? 0;
    let type = previous?.type ?? 0;
    let streamId = previous?.streamId ?? 0;
    if (format <= 2) {
      delta = data.readUIntBE(offset, 3);
      extended = delta === 0xffffff;
    }
    if (format <= 1) {
      length = data.readUIntBE(offset + 3, 3);
      type = data[offset + 6] ?? 0;
    }
    if (format === 0) streamId = data.readUInt32LE(offset + 7);
    offset += headerBytes;
    if (extended) {
      if (data.length < offset + 4) return 0;
      // A continuation chunk repeats the extended field; only a new message's header changes the delta.
      const value = data.readUInt32BE(offset);
      if (format <= 2 || !previous || previous.received === 0) delta = value;
      offset += 4;
    }
    if (length > MAX_MESSAGE_BYTES) throw new ChunkStreamError(`message of ${length} bytes is too large`);
    const continuing = format === 3 && previous !== undefined && previous.received > 0 && previous.received < previous.length;
    const received = continuing ? previous.received : 0;
    const take = Math.min(this.chunkSize, length - received);
    if (data.length < offset + take) return 0;
    const payload = data.subarray(offset, offset + take);
    let state: ChunkStreamState;
    if (continuing) {
      state = previous;
    } else {
      const timestamp = format === 0 ? delta : (previous?.timestamp ?? 0) + delta;
      state = { timestamp, delta, extended, length, type, streamId, parts: [], received: 0 };
      this.streams.set(chunkStreamId, state);
    }
    state.parts.push(Buffer.from(payload));
    state.received += take;
    if (state.received >= state.length) {
      const message: RtmpMessage = {
        chunkStreamId,
        type: state.type,
        streamId: state.streamId,
        timestamp: state.timestamp >>> 0,
        payload: state.parts.length === 1 ? (state.parts[0] ?? Buffer.alloc(0)) : Buffer.concat(state.parts),
      };
      state.parts = [];
      state.received = 0;
      // Set Chunk Size applies from the next chunk on, so it is read here rather than by the session.
      if (message.type === 1 && message.payload.length >= 4) {
        const size = message.payload.readUInt32BE(0) & 0x7fffffff;
        if (size < 1) throw new ChunkStreamError('chunk size 0');
        this.chunkSize = size;
      }
      out.push(message);
    }
    return offset + take;
  }
}

/** Frames one message in chunks of `chunkSize` with a type-0 header (simple, and always valid). */
export function writeMessage(message: RtmpMessage, chunkSize: number): Buffer {
  const { chunkStreamId, payload } = message;
  if (chunkStreamId < 2 || chunkStreamId > 63) throw new ChunkStreamError('we only write chunk streams 2–63');
  const timestamp = message.timestamp >>> 0;
  const extended = timestamp >= 0xffffff;
  const header = Buffer.alloc(12 + (extended ? 4 : 0));
  header[0] = chunkStreamId;
  header.writeUIntBE(extended ? 0xffffff : timestamp, 1, 3);
  header.writeUIntBE(payload.length, 4, 3);
  header[7] = message.type;
  header.writeUInt32LE(message.streamId, 8);
  if (extended) header.writeUInt32BE(timestamp, 12);
  const parts: Buffer[] = [header];
  for (let offset = 0; offset < payload.length; offset += chunkSize) {
    if (offset > 0) {
      parts.push(Buffer.from([0xc0 | chunkStreamId]));
      if (extended) {
        const ext = Buffer.alloc(4);
        ext.writeUInt32BE(timestamp);
        parts.push(ext);
      }
    }
    parts.push(payload.subarray(offset, offset + chunkSize));
  }
  return Buffer.concat(parts);
}
