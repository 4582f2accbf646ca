// Hands a byte stream (MPEG-TS from a front's listener ffmpeg) to the channel's encoder over a loopback TCP port
// (`-f mpegts -i tcp://…`). Bytes of the current sender that came before the encoder connected are kept (bounded)
// and sent first, so its probing starts at the sender's first packets; a restarted encoder gets what comes next.
import net from 'node:net';

/** Bytes kept for an encoder that has not connected yet; beyond, the oldest go (in whole 188-byte TS packets). */
const MAX_EARLY_BYTES = 8 * 1024 * 1024;
/** Bytes queued for an encoder that does not read: past this it is cut off (it sees its input end). */
export const MAX_STREAM_BACKLOG_BYTES = 32 * 1024 * 1024;
const TS_PACKET = 188;

export class StreamRelay {
  private readonly server = net.createServer((socket) => this.attach(socket));
  private encoder: net.Socket | undefined;
  private early: Buffer[] = [];
  private earlyBytes = 0;
  private streaming = false;
  private closed = false;

  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('the stream relay has no TCP port');
    return address.port;
  }

  /** A sender's stream begins: what the encoder reads from here on is this sender's. */
  begin(): void {
    this.end();
    this.streaming = true;
  }

  write(bytes: Buffer): void {
    if (!this.streaming) return;
    const encoder = this.encoder;
    if (!encoder) {
      this.early.push(bytes);
      this.earlyBytes += bytes.length;
      while (this.earlyBytes > MAX_EARLY_BYTES && this.early.length > 1) this.earlyBytes -= this.early.shift()?.length ?? 0;
      return;
    }
    if (encoder.writableLength > MAX_STREAM_BACKLOG_BYTES) {
      encoder.destroy();
      this.encoder = undefined;
      return;
    }
    encoder.write(bytes);
  }

  /** The sender went away: the encoder sees the end of its input. */
  end(): void {
    this.streaming = false;
    this.early = [];
    this.earlyBytes = 0;
    this.encoder?.end();
    this.encoder = undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.end();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private attach(socket: net.Socket): void {
    socket.on('error', () => socket.destroy());
    if (!this.streaming || (socket.remoteAddress !== '127.0.0.1' && socket.remoteAddress !== '::ffff:127.0.0.1')) {
      socket.destroy();
      return;
    }
    this.encoder?.destroy();
    this.encoder = socket;
    socket.on('close', () => {
      if (this.encoder === socket) this.encoder = undefined;
    });
    socket.setNoDelay(true);
    // early chunks may start mid-packet once the oldest were dropped: resynchronise on the TS sync byte
    const early = Buffer.concat(this.early);
    this.early = [];
    this.earlyBytes = 0;
    let start = 0;
    while (start < early.length && !(early[start] === 0x47 && (start + TS_PACKET >= early.length || early[start + TS_PACKET] === 0x47))) start += 1;
    if (start < early.length) socket.write(early.subarray(start));
  }
}
