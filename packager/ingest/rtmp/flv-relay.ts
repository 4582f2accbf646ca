// Hands an accepted RTMP stream to the encoder as FLV over a loopback TCP socket (`-f flv -i tcp://…`): the
// RTMP audio, video and metadata messages are FLV tags already, so this is framing, not remuxing. The relay
// keeps the stream's headers (metadata, codec configurations) and the tags since the last video keyframe, so
// an encoder that connects late or is restarted starts at once on a decodable picture.
import type net from 'node:net';
import { EncoderLink, MAX_ENCODER_BACKLOG_BYTES } from '../encoder-link.js';

export { MAX_ENCODER_BACKLOG_BYTES };

export const TAG_AUDIO = 8;
export const TAG_VIDEO = 9;
export const TAG_DATA = 18;

export interface FlvTag {
  type: number;
  timestamp: number;
  data: Buffer;
}

const FLV_HEADER = Buffer.from([0x46, 0x4c, 0x56, 0x01, 0x05, 0, 0, 0, 9, 0, 0, 0, 0]);
/** Tags kept for a late encoder; past this the cache is dropped until the next keyframe. */
const MAX_CACHE_BYTES = 8 * 1024 * 1024;
export function encodeTag(tag: FlvTag): Buffer {
  const bytes = Buffer.alloc(11 + tag.data.length + 4);
  bytes[0] = tag.type;
  bytes.writeUIntBE(tag.data.length, 1, 3);
  bytes.writeUIntBE(tag.timestamp & 0xffffff, 4, 3);
  bytes[7] = (tag.timestamp >>> 24) & 0xff;
  // stream id (3 bytes) stays 0
  tag.data.copy(bytes, 11);
  bytes.writeUInt32BE(11 + tag.data.length, 11 + tag.data.length);
  return bytes;
}

function isVideoKeyframe(tag: FlvTag): boolean {
  return tag.type === TAG_VIDEO && ((tag.data[0] ?? 0) >> 4) === 1;
}

/** AVC/HEVC decoder configuration or AAC AudioSpecificConfig: what a decoder needs before any frame. */
function isSequenceHeader(tag: FlvTag): boolean {
  if (tag.type === TAG_VIDEO) return ((tag.data[0] ?? 0) & 0x0f) >= 7 && tag.data[1] === 0;
  if (tag.type === TAG_AUDIO) return ((tag.data[0] ?? 0) >> 4) === 10 && tag.data[1] === 0;
  return false;
}

export class FlvRelay extends EncoderLink {
  private headers = new Map<string, FlvTag>();
  private gop: FlvTag[] = [];
  private gopBytes = 0;
  private waitingForKeyframe = false;

  constructor() {
    super('FLV relay');
  }

  write(tag: FlvTag): void {
    if (!this.streaming) return;
    if (isSequenceHeader(tag) || tag.type === TAG_DATA) {
      this.headers.set(tag.type === TAG_DATA ? 'data' : `seq-${tag.type}`, tag);
    } else if (isVideoKeyframe(tag)) {
      this.gop = [tag];
      this.gopBytes = tag.data.length;
      this.waitingForKeyframe = false;
    } else if (!this.waitingForKeyframe) {
      this.gop.push(tag);
      this.gopBytes += tag.data.length;
      if (this.gopBytes > MAX_CACHE_BYTES) {
        this.gop = [];
        this.gopBytes = 0;
        this.waitingForKeyframe = true;
      }
    }
    if (this.hasEncoder) this.send(encodeTag(tag));
  }

  protected forget(): void {
    this.headers = new Map();
    this.gop = [];
    this.gopBytes = 0;
    this.waitingForKeyframe = false;
  }

  /** A fresh FLV stream: the headers, then the tags since the last keyframe. */
  protected replay(socket: net.Socket): void {
    socket.write(FLV_HEADER);
    for (const tag of [...this.headers.values(), ...this.gop]) socket.write(encodeTag(tag));
  }
}
