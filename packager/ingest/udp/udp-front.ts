// The SRT_PUSH, RIST, RTP and RTP_FEC fronts: a UDP relay on the input's public port in front of a private ffmpeg
// listener on loopback that the front runs and watches (ListenerProcess: copy-remux to MPEG-TS, restarted when it
// ends, killed and restarted at once when its sender goes silent, killed when the input closes; the relay holds RTP
// and RIST datagrams until the listener has bound its port, so a sender that comes back meanwhile loses nothing).
// ffmpeg checks the SRT passphrase itself; the relay checks addresses, reports connects, refusals and silences,
// counts RTP loss and repairs it from FEC. The channel's encoder reads the listener's MPEG-TS from a loopback TCP
// port once a sender is connected, as for RTMP, so a channel shows its slate until someone pushes.
import type { IngestFront, IngestProtocol, IngestStats } from '../ingest-front.js';
import { allListsFilter, plainAddress } from '../address-filter.js';
import { FrontEvents } from '../front-events.js';
import { srtSignal } from './srt-handshake.js';
import { bindPortGroup, freeLoopbackPort } from './udp-ports.js';
import { UdpRelay, type FlowWatcher } from './udp-relay.js';
import { RtpLossCounter } from './rtp-loss.js';
import { FecRecovery } from './fec-recovery.js';
import { RtpReorderBuffer } from './rtp-reorder.js';
import { ListenerProcess } from './listener-process.js';
import { StreamRelay } from './stream-relay.js';

export type UdpProtocol = Extract<IngestProtocol, 'SRT_PUSH' | 'RIST' | 'RTP' | 'RTP_FEC'>;

export const UDP_PROTOCOLS: readonly UdpProtocol[] = ['SRT_PUSH', 'RIST', 'RTP', 'RTP_FEC'];

/**
 * How long RTP_FEC packets wait behind a lost one for its rebuild: a column FEC comes up to two L × D blocks
 * later (ffmpeg sends a block's columns during the next block), 100–300 ms at contribution bitrates.
 */
export const FEC_WAIT_MS = 500;

/** A sender silent this long is reported gone (SRT and RIST send keepalives about every second even when idle). */
export const UDP_IDLE_MS = 3_000;

/** A draining listener writes out what it holds within milliseconds; one that does not is killed after this. */
const LISTENER_FINISH_MS = 1_000;

export interface UdpFrontOptions {
  protocol: UdpProtocol;
  /** address to bind the public port on */
  host: string;
  /** the input's port; 0 picks one (tests, unmanaged inputs without an allocation) */
  port: number;
  cidrs: readonly string[];
  /** further allow-lists that must admit the sender too (a workflow's inputWhitelistCIDRs) */
  alsoAllowedBy?: readonly (readonly string[])[] | undefined;
  /** SRT_PUSH only: the passphrase ffmpeg's listener enforces (10–79 characters) */
  passphrase?: string | undefined;
  idleMs?: number;
  now?: () => number;
  /** the ffmpeg binary of the private listener */
  ffmpegPath?: string;
  /** tests only: lose datagrams as a network would (`index` 0: the main port, then the companions in order) */
  dropInbound?: (index: number, datagram: Buffer) => boolean;
}

export interface UdpIngestFront extends IngestFront {
  /** the public port senders push to */
  readonly port: number;
  /** the private listener ffmpeg's pid while it runs (tests check nothing is left) */
  listenerPid(): number | undefined;
}

/** Ports next to the main one that the protocol's senders use: RTCP at +1; SMPTE 2022-1 FEC columns +2, rows +4. */
function companionOffsets(protocol: UdpProtocol): number[] {
  if (protocol === 'RTP') return [1];
  if (protocol === 'RTP_FEC') return [1, 2, 4];
  return [];
}

/**
 * MPEG-TS over UDP has no header announcing its streams, so ffmpeg probes for its default 5 s of media before the
 * first frame (measured: SRT 7.9 s, RIST up to 18 s to the first frame). 2 s still finds the codec parameters of a
 * sender whose keyframes are at most 2 s apart (contribution encoders use 1–2 s); see bench/results/ingest.md.
 */
const PROBE_ARGS = ['-analyzeduration', '2000000'];

/**
 * An SDP for MPEG-TS over RTP (static payload type 33) to `port` on loopback. ffmpeg's `rtp://` input reads the
 * first packet to learn the payload type, then closes its socket and binds again from an SDP it writes itself:
 * packets arriving in between are lost, and a port taken as bound is briefly not. From an SDP it binds once.
 */
function rtpSdp(port: number): string {
  return ['v=0', 'o=- 0 0 IN IP4 127.0.0.1', 's=listener', 'c=IN IP4 127.0.0.1', 't=0 0', `m=video ${port} RTP/AVP 33`, ''].join('\r\n');
}

/** ffmpeg input arguments of the private listener for `protocol` on loopback `privatePort`. */
export function listenerArgs(protocol: UdpProtocol, privatePort: number, passphrase: string | undefined): string[] {
  switch (protocol) {
    case 'SRT_PUSH': {
      const query = new URLSearchParams({ mode: 'listener', ...(passphrase ? { passphrase } : {}) });
      return [...PROBE_ARGS, '-f', 'mpegts', '-i', `srt://127.0.0.1:${privatePort}?${query.toString()}`];
    }
    case 'RIST':
      return [...PROBE_ARGS, '-f', 'mpegts', '-i', `rist://@127.0.0.1:${privatePort}`];
    case 'RTP':
    case 'RTP_FEC':
      // -listen_timeout -1: from an SDP ffmpeg gives up on a sender after 10 s (measured: exit 1, "could not find
      // codec parameters"); the listener must wait for one as long as the input is open
      return [
        ...PROBE_ARGS, '-listen_timeout', '-1', '-protocol_whitelist', 'data,udp,rtp', '-f', 'sdp',
        '-i', `data:application/sdp;base64,${Buffer.from(rtpSdp(privatePort)).toString('base64')}`,
      ];
  }
}

export async function openUdpFront(options: UdpFrontOptions): Promise<UdpIngestFront> {
  const { protocol } = options;
  if (protocol === 'SRT_PUSH' && options.passphrase !== undefined && (options.passphrase.length < 10 || options.passphrase.length > 79)) {
    throw new RangeError('an SRT passphrase has 10 to 79 characters');
  }
  const now = options.now ?? Date.now;
  const events = new FrontEvents();
  const loss = protocol === 'RTP' || protocol === 'RTP_FEC' ? new RtpLossCounter() : undefined;
  let fec = protocol === 'RTP_FEC' ? new FecRecovery() : undefined;
  let reorder = fec ? new RtpReorderBuffer(FEC_WAIT_MS) : undefined;
  let recoveredBefore = 0;
  const offsets = companionOffsets(protocol);
  const watcher: FlowWatcher = protocol === 'SRT_PUSH'
    ? { connectsOnFirstDatagram: false, signal: srtSignal }
    : {
      connectsOnFirstDatagram: true,
      inbound: (datagram: Buffer) => {
        loss?.add(datagram);
        fec?.addMedia(datagram);
        return reorder?.push(datagram, now());
      },
      // FEC columns at +2 and rows at +4; RTCP at +1 is only counted
      companion: (index: number, datagram: Buffer) => {
        if (!fec || !reorder || (offsets[index - 1] ?? 0) < 2) return [];
        const order = reorder;
        return fec.addFec(datagram).flatMap((rebuilt) => order.push(rebuilt, now()));
      },
    };
  // ffmpeg's RTP input also binds the RTCP port next to it
  const privatePort = await freeLoopbackPort(protocol === 'RTP' || protocol === 'RTP_FEC' ? [1] : []);
  const sockets = await bindPortGroup(options.host, options.port, offsets);
  const stream = new StreamRelay();
  const streamPort = await stream.listen();
  const relay = new UdpRelay({
    sockets,
    privatePort,
    allows: allListsFilter([options.cidrs, ...(options.alsoAllowedBy ?? [])]),
    idleMs: options.idleMs ?? UDP_IDLE_MS,
    watcher,
    now,
    dropInbound: options.dropInbound,
    holdWhileListenerDown: protocol !== 'SRT_PUSH',
    emit: (event) => {
      if (event.type === 'connected') stream.begin();
      if (event.type === 'disconnected') {
        stream.end();
        // a fresh listener for the next sender (RIST and RTP listeners would wait forever on this one); the next
        // sender's datagrams are held from now until it is bound
        relay.listenerDown();
        // SIGKILL at once: its output is dropped anyway, and ffmpeg blocked on a silent input ignores SIGTERM until
        // its next packet (measured: the SIGKILL after a second's grace every time)
        void listener.kill(0);
      }
      if (event.type === 'connected') {
        loss?.reset();
        // a new sender: its sequence numbers have nothing to do with the last one's
        if (fec) {
          recoveredBefore += fec.recovered;
          fec = new FecRecovery();
          reorder = new RtpReorderBuffer(FEC_WAIT_MS);
        }
      }
      events.emit('remoteAddress' in event ? { ...event, remoteAddress: plainAddress(event.remoteAddress) } : event);
    },
  });
  // packets held behind a gap that FEC could not fill are let go once they waited FEC_WAIT_MS
  const release = reorder ? setInterval(() => {
    if (reorder?.waiting) relay.forward(reorder.due(now()));
  }, 25) : undefined;
  release?.unref();
  let closing = false;
  let restart: NodeJS.Timeout | undefined;
  const listener = new ListenerProcess({
    ffmpegPath: options.ffmpegPath ?? 'ffmpeg',
    inputArgs: listenerArgs(protocol, privatePort, options.passphrase),
    udpPort: privatePort,
    onData: (bytes) => stream.write(bytes),
    onReady: () => relay.listenerUp(),
    onExit: ({ killed }) => {
      relay.listenerDown();
      if (closing) return;
      // killed on purpose (its sender left): the next one may already be sending, so at once. An SRT listener ends
      // with its sender and any listener may fail: half a second later, so a failing one does not spin.
      if (killed) listener.start();
      else restart = setTimeout(() => listener.start(), 500);
    },
  });
  listener.start();
  const encoderArgs = [...PROBE_ARGS, '-f', 'mpegts', '-i', `tcp://127.0.0.1:${streamPort}`];
  return {
    protocol,
    port: relay.port,
    spawnEncoderOn: 'connected',
    encoderInputArgs: () => [...encoderArgs],
    listenerPid: () => listener.pid,
    subscribe: (listener) => events.subscribe(listener),
    isConnected: () => relay.connected,
    stats: (): IngestStats => ({
      bytesIn: relay.bytesIn,
      ...(loss ? { packetsLost: loss.lost } : {}),
      ...(fec ? { packetsRecovered: recoveredBefore + fec.recovered } : {}),
    }),
    drain: async () => {
      closing = true;
      clearTimeout(restart);
      // the listener first, while its sender still sends (blocked on a silent input it would not see the signal):
      // it writes out what it holds, and its last bytes reach the encoder before the stream ends
      await listener.finish(LISTENER_FINISH_MS);
      stream.end();
    },
    close: async () => {
      closing = true;
      clearTimeout(restart);
      clearInterval(release);
      await relay.close();
      await listener.kill();
      await stream.close();
      events.clear();
    },
  };
}
