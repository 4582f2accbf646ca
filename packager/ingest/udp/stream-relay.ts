// Hands a byte stream (MPEG-TS from a front's listener ffmpeg) to the channel's encoder over a loopback TCP port
// (`-f mpegts -i tcp://…`). Bytes of the current sender that came before the encoder connected are kept (bounded)
// and sent first, so its probing starts at the sender's first packets; a restarted encoder gets what comes next.
import type net from 'node:net';
import { EncoderLink } from '../encoder-link.js';

/** Bytes kept for an encoder that has not connected yet; beyond, the oldest go (in whole 188-byte TS packets). */
const MAX_EARLY_BYTES = 8 * 1024 * 1024;
const TS_PACKET = 188;

export class StreamRelay extends EncoderLink {
  private early: Buffer[] = [];
  private earlyBytes = 0;

  constructor() {
    super('stream relay');
  }

  write(bytes: Buffer): void {
    if (!this.streaming) return;
    if (!this.hasEncoder) {
      this.early.push(bytes);
      this.earlyBytes += bytes.length;
      while (this.earlyBytes > MAX_EARLY_BYTES && this.early.length > 1) this.earlyBytes -= this.early.shift()?.length ?? 0;
      return;
    }
    this.send(bytes);
  }

  protected forget(): void {
    this.early = [];
    this.earlyBytes = 0;
  }

  /** The sender's bytes from before the encoder connected. */
  protected replay(socket: net.Socket): void {
    // early chunks may start mid-packet once the oldest were dropped: resynchronise on the TS sync byte
    const early = Buffer.concat(this.early);
    this.forget();
    let start = 0;
    while (start < early.length && !(early[start] === 0x47 && (start + TS_PACKET >= early.length || early[start + TS_PACKET] === 0x47))) start += 1;
    if (start < early.length) socket.write(early.subarray(start));
  }
}
