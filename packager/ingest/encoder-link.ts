// What the RTMP and UDP fronts share: one loopback TCP port that hands the current sender's stream to the channel's
// encoder (`-i tcp://127.0.0.1:…`). One encoder at a time (a restarted one replaces the old), only from this machine;
// an encoder that does not read is cut off past a backlog instead of the engine's memory growing. What a late or
// restarted encoder gets first (a cached GOP, early bytes) is the subclass's.
import net from 'node:net';

/** Bytes queued for an encoder that does not read: past this it is cut off (it sees its input end, as if the sender left). */
export const MAX_ENCODER_BACKLOG_BYTES = 32 * 1024 * 1024;

export abstract class EncoderLink {
  private readonly server = net.createServer((socket) => this.attach(socket));
  private encoder: net.Socket | undefined;
  protected streaming = false;
  private closed = false;

  constructor(private readonly name: string) {}

  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error(`the ${this.name} has no TCP port`);
    return address.port;
  }

  /** A sender's stream begins: what the encoder reads from here on is this sender's. */
  begin(): void {
    this.end();
    this.streaming = true;
  }

  /** The sender went away: the encoder sees the end of its input. */
  end(): void {
    this.streaming = false;
    this.forget();
    this.encoder?.end();
    this.encoder = undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.end();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  protected get hasEncoder(): boolean {
    return this.encoder !== undefined;
  }

  /** Sends to the connected encoder, if any. */
  protected send(bytes: Buffer): void {
    const encoder = this.encoder;
    if (!encoder) return;
    if (encoder.writableLength > MAX_ENCODER_BACKLOG_BYTES) {
      encoder.destroy();
      this.encoder = undefined;
      return;
    }
    encoder.write(bytes);
  }

  /** Drops what was kept of the last sender's stream. */
  protected abstract forget(): void;

  /** What a newly connected encoder gets before the live bytes. */
  protected abstract replay(socket: net.Socket): void;

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
    this.replay(socket);
  }
}
