// The engine's one RTMP listener (RTMP_PORT), shared by every RTMP_PUSH input: a publisher names its input by
// the stream key, and is accepted only when the key is known, its address is in that input's CIDR list and no
// other sender publishes to it. ffmpeg's own RTMP listener checks neither key nor address, hence this server.
import net from 'node:net';
import { RtmpSession, type PublishDecision, type PublishRequest, type PublishSink } from './rtmp-session.js';

/** One stream key's owner: an RTMP front. */
export interface PublishTarget {
  /** the app part of the URL the key was handed out with (`live` in rtmp://host/live/<key>) */
  app: string;
  allows(address: string): boolean;
  /** a sender was accepted; it is the only one until its sink ends */
  accept(remoteAddress: string, hangUp: (reason: string) => void): PublishSink;
  rejected(reason: string, remoteAddress: string): void;
  busy(): boolean;
}

export interface RtmpServerHooks {
  /** a publisher refused before any target could be told (unknown key, wrong app) */
  onRejected?(reason: string, remoteAddress: string): void;
  onBytes?(count: number): void;
}

export class RtmpServer {
  private readonly server = net.createServer((socket) => this.connection(socket));
  private readonly targets = new Map<string, PublishTarget>();
  private readonly sessions = new Set<RtmpSession>();

  constructor(private readonly hooks: RtmpServerHooks = {}) {
    // Beyond this, connections are refused at accept: senders are a handful per engine, scanners are not.
    this.server.maxConnections = 512;
  }

  async listen(port: number, host: string): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('the RTMP server has no TCP port');
    return address.port;
  }

  /** Routes publishers of `streamKey` to `target`; returns the unregister function. */
  register(streamKey: string, target: PublishTarget): () => void {
    if (this.targets.has(streamKey)) throw new Error('this stream key is already served');
    this.targets.set(streamKey, target);
    return () => {
      if (this.targets.get(streamKey) === target) this.targets.delete(streamKey);
    };
  }

  get size(): number {
    return this.targets.size;
  }

  async close(): Promise<void> {
    for (const session of this.sessions) session.close('the RTMP server closed');
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private connection(socket: net.Socket): void {
    const session = new RtmpSession(socket, (request) => this.decide(request), (count) => this.hooks.onBytes?.(count));
    this.sessions.add(session);
    socket.once('close', () => this.sessions.delete(session));
  }

  private decide(request: PublishRequest): PublishDecision {
    const target = this.targets.get(request.streamKey);
    // The same answer for an unknown key and a wrong app, so a scanner learns nothing about which keys exist.
    if (!target || target.app !== request.app) {
      this.hooks.onRejected?.('wrong stream key', request.remoteAddress);
      return { accept: false, reason: 'wrong stream key', status: 'NetStream.Publish.BadName' };
    }
    if (!target.allows(request.remoteAddress)) {
      target.rejected('address outside the CIDR list', request.remoteAddress);
      return { accept: false, reason: 'address not allowed', status: 'NetStream.Publish.Denied' };
    }
    if (target.busy()) {
      target.rejected('another sender is publishing', request.remoteAddress);
      return { accept: false, reason: 'stream key in use', status: 'NetStream.Publish.BadName' };
    }
    return { accept: true, sink: (hangUp) => target.accept(request.remoteAddress, hangUp) };
  }
}
