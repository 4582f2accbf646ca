// The UDP side of SRT_PUSH, RIST, RTP and RTP_FEC: the public port is ours, not ffmpeg's. Each datagram's
// source is checked against the CIDR list before it is forwarded to ffmpeg's listener on loopback, and the
// listener's answers (SRT handshakes and ACKs, RIST NACKs) go back to the sender through the same public port.
// One sender at a time: a second source is refused while the first is alive.
import dgram from 'node:dgram';
import type { IngestEvent } from '../ingest-front.js';
import type { AddressFilter } from '../address-filter.js';

/** How a protocol tells the relay what a flow's datagrams mean. */
export interface FlowWatcher {
  /** RTP and RIST: a sender is connected by its first allowed datagram; SRT waits for the listener's answer */
  connectsOnFirstDatagram: boolean;
  /**
   * What a datagram means, by direction: `fromListener` is ffmpeg's answer (only it can accept or refuse a
   * sender; a caller's own handshake looks alike), otherwise it came from the sender.
   */
  signal?(datagram: Buffer, fromListener: boolean): { kind: 'accepted' } | { kind: 'refused'; reason: string } | { kind: 'shutdown' } | undefined;
  /** sees every datagram from the sender (loss counting, FEC); an array returned is forwarded instead of it (reordering) */
  inbound?(datagram: Buffer): Buffer[] | void;
  /** a datagram on companion port `index` (1: the first companion) from the sender; returns datagrams to forward (FEC-rebuilt media) */
  companion?(index: number, datagram: Buffer): Buffer[];
}

export interface UdpRelayOptions {
  /** sockets[0] receives the stream; the others (RTCP, FEC) are absorbed after the same address check */
  sockets: dgram.Socket[];
  privatePort: number;
  allows: AddressFilter;
  /** a connected sender silent this long is gone */
  idleMs: number;
  watcher: FlowWatcher;
  emit(event: IngestEvent): void;
  now(): number;
  /** tests only: datagrams to lose as if on the network (`index` 0 is the main port) */
  dropInbound?: ((index: number, datagram: Buffer) => boolean) | undefined;
}

interface Flow {
  address: string;
  port: number;
  socket: dgram.Socket;
  lastSeen: number;
  connected: boolean;
}

/** A refused source is reported once per this window, not once per datagram. */
const REJECT_REPORT_MS = 10_000;

export class UdpRelay {
  private flow: Flow | undefined;
  private readonly reported = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;
  bytesIn = 0;
  companionDatagrams = 0;

  constructor(private readonly options: UdpRelayOptions) {
    options.sockets.forEach((socket, index) => {
      socket.on('message', (datagram, remote) => this.receive(index, datagram, remote));
      socket.on('error', () => undefined); // ICMP errors of one sender must not stop the port
    });
    this.sweeper = setInterval(() => this.sweep(), Math.max(100, Math.floor(options.idleMs / 4)));
    this.sweeper.unref();
  }

  /** a sender is accepted (and not yet gone) */
  get connected(): boolean {
    return this.flow?.connected === true;
  }

  get port(): number {
    return this.options.sockets[0]?.address().port ?? 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    this.endFlow('the input closed');
    await Promise.all(this.options.sockets.map((socket) => new Promise<void>((resolve) => socket.close(() => resolve()))));
  }

  private receive(index: number, datagram: Buffer, remote: dgram.RemoteInfo): void {
    if (this.closed || this.options.dropInbound?.(index, datagram)) return;
    if (!this.options.allows(remote.address)) {
      this.reject(remote.address, 'address outside the CIDR list');
      return;
    }
    const now = this.options.now();
    if (index > 0) {
      const flow = this.flow;
      if (flow?.address !== remote.address) return;
      this.companionDatagrams += 1;
      this.forward(this.options.watcher.companion?.(index, datagram) ?? []);
      return;
    }
    let flow = this.flow;
    if (flow && (flow.address !== remote.address || flow.port !== remote.port)) {
      if (now - flow.lastSeen <= this.options.idleMs) {
        this.reject(remote.address, 'another sender is active');
        return;
      }
      this.endFlow(`no data for ${this.options.idleMs} ms`);
      flow = undefined;
    }
    if (!flow) flow = this.openFlow(remote, now);
    flow.lastSeen = now;
    this.bytesIn += datagram.length;
    const replaced = this.options.watcher.inbound?.(datagram);
    if (!flow.connected && this.options.watcher.connectsOnFirstDatagram) this.connect(flow);
    this.observe(flow, datagram, false);
    if (replaced) this.forward(replaced);
    else if (this.flow === flow) flow.socket.send(datagram, this.options.privatePort, '127.0.0.1');
  }

  /** Sends datagrams to ffmpeg's listener for the current sender (rebuilt or reordered ones). */
  forward(datagrams: readonly Buffer[]): void {
    const flow = this.flow;
    if (!flow) return;
    for (const datagram of datagrams) flow.socket.send(datagram, this.options.privatePort, '127.0.0.1');
  }

  private openFlow(remote: dgram.RemoteInfo, now: number): Flow {
    const socket = dgram.createSocket('udp4');
    const flow: Flow = { address: remote.address, port: remote.port, socket, lastSeen: now, connected: false };
    socket.on('error', () => undefined); // ECONNREFUSED while ffmpeg's listener (re)starts
    socket.on('message', (reply, from) => {
      if (this.flow !== flow || from.address !== '127.0.0.1' || from.port !== this.options.privatePort) return;
      this.options.sockets[0]?.send(reply, flow.port, flow.address);
      this.observe(flow, reply, true);
    });
    socket.bind(0, '127.0.0.1');
    this.flow = flow;
    return flow;
  }

  private observe(flow: Flow, datagram: Buffer, fromListener: boolean): void {
    const signal = this.options.watcher.signal?.(datagram, fromListener);
    if (!signal) return;
    if (signal.kind === 'accepted' && !flow.connected) this.connect(flow);
    else if (signal.kind === 'refused') {
      this.reject(flow.address, signal.reason, true);
      // let the refusal reach the sender first: it was just queued on the public socket
      setImmediate(() => {
        if (this.flow === flow) this.endFlow(signal.reason);
      });
    } else if (signal.kind === 'shutdown') {
      setImmediate(() => {
        if (this.flow === flow) this.endFlow('the connection was shut down');
      });
    }
  }

  private connect(flow: Flow): void {
    flow.connected = true;
    this.options.emit({ type: 'connected', remoteAddress: flow.address, at: this.options.now() });
  }

  private endFlow(reason: string): void {
    const flow = this.flow;
    if (!flow) return;
    this.flow = undefined;
    flow.socket.close();
    if (flow.connected) this.options.emit({ type: 'disconnected', reason, at: this.options.now() });
  }

  private reject(address: string, reason: string, always = false): void {
    const now = this.options.now();
    const key = `${address} ${reason}`;
    const last = this.reported.get(key);
    if (!always && last !== undefined && now - last < REJECT_REPORT_MS) return;
    this.reported.set(key, now);
    if (this.reported.size > 1_000) this.reported.clear();
    this.options.emit({ type: 'rejected', reason, remoteAddress: address, at: now });
  }

  private sweep(): void {
    const flow = this.flow;
    if (flow && this.options.now() - flow.lastSeen > this.options.idleMs) this.endFlow(`no data for ${this.options.idleMs} ms`);
  }
}
