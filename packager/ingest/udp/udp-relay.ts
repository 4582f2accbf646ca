// The UDP side of SRT_PUSH, RIST, RTP and RTP_FEC: the public port is ours, not ffmpeg's. Each datagram's
// source is checked against the CIDR list before it is forwarded to ffmpeg's listener on loopback, and the
// listener's answers (SRT handshakes and ACKs, RIST NACKs) go back to the sender through the same public port.
// One sender at a time: a second source is refused while the first is alive. While the listener is not running
// (ffmpeg starting, or restarting after its sender left) what it would lose is held, up to HOLD_MS, and sent once it
// has bound its port: a sender returning at that moment keeps its first packets (the first keyframe's SPS/PPS).
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
  /**
   * Hold the sender's datagrams while the listener is not ready (RTP, RIST: nothing resends them). SRT does not
   * need it: its caller repeats the handshake until the listener answers, and stale handshakes would only confuse it.
   */
  holdWhileListenerDown: boolean;
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
/**
 * Held datagrams older than this are dropped: a listener binds its port about 0.1 s after it is started (measured),
 * one that failed is started again 0.5 s later; more than that only on a machine far too busy to encode anyway.
 */
export const HOLD_MS = 2_000;
/** …and beyond this many bytes the oldest go (2 s at 32 Mbit/s). */
const HOLD_BYTES = 8 * 1024 * 1024;
/** Held datagrams are sent in batches of this many per event-loop turn, so ffmpeg's socket buffer keeps up. */
const FLUSH_BATCH = 64;

interface HeldDatagram {
  datagram: Buffer;
  at: number;
}

export class UdpRelay {
  private flow: Flow | undefined;
  private readonly reported = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;
  private listenerReady = false;
  private held: HeldDatagram[] = [];
  private heldBytes = 0;
  private flushing = false;
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

  /** The listener bound its port: held datagrams go to it, then everything as it comes. */
  listenerUp(): void {
    this.listenerReady = true;
    this.flushHeld();
  }

  /** The listener stopped (killed, ended or failed): until listenerUp() datagrams are held (not SRT's). */
  listenerDown(): void {
    this.listenerReady = false;
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
    // connected first: a new sender's first datagram belongs to its own loss count and FEC reordering (the front
    // renews them on `connected`), not to the last sender's
    if (!flow.connected && this.options.watcher.connectsOnFirstDatagram) this.connect(flow);
    const replaced = this.options.watcher.inbound?.(datagram);
    this.observe(flow, datagram, false);
    if (replaced) this.forward(replaced);
    else if (this.flow === flow) this.toListener(flow, datagram);
  }

  /** Sends datagrams to ffmpeg's listener for the current sender (rebuilt or reordered ones). */
  forward(datagrams: readonly Buffer[]): void {
    const flow = this.flow;
    if (!flow) return;
    for (const datagram of datagrams) this.toListener(flow, datagram);
  }

  private toListener(flow: Flow, datagram: Buffer): void {
    // SRT sends straight on (lost while nothing is bound, as on a network); others queue behind held ones, since
    // order matters to the listener (RTP sequence numbers, RIST)
    if (!this.options.holdWhileListenerDown || (this.listenerReady && this.held.length === 0)) {
      flow.socket.send(datagram, this.options.privatePort, '127.0.0.1');
      return;
    }
    const now = this.options.now();
    this.held.push({ datagram, at: now });
    this.heldBytes += datagram.length;
    while (this.held.length > 0 && ((this.held[0]?.at ?? now) < now - HOLD_MS || this.heldBytes > HOLD_BYTES)) {
      this.heldBytes -= this.held.shift()?.datagram.length ?? 0;
    }
    if (this.listenerReady) this.flushHeld();
  }

  /** Sends the held datagrams to the listener in order, a batch per event-loop turn. */
  private flushHeld(): void {
    if (this.flushing) return;
    this.flushing = true;
    const next = () => {
      const flow = this.flow;
      if (!flow || !this.listenerReady || this.closed) {
        this.flushing = false;
        return;
      }
      for (const { datagram } of this.held.splice(0, FLUSH_BATCH)) {
        this.heldBytes -= datagram.length;
        flow.socket.send(datagram, this.options.privatePort, '127.0.0.1');
      }
      if (this.held.length > 0) setImmediate(next);
      else this.flushing = false;
    };
    next();
  }

  private dropHeld(): void {
    this.held = [];
    this.heldBytes = 0;
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
    // the next sender must not get this one's packets
    this.dropHeld();
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
