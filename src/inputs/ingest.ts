// The ingest address of a managed input is allocated once, at creation, and kept for the input's life:
// that is what distinguishes a managed input from an unmanaged one (spec 1: "keep their IP address after
// the channel stops"). Channel starts read it from the input; they never allocate.
import { randomBytes } from 'node:crypto';
import type { Protocol, InputType } from './input.schema.js';

/** Listener ports of SRT, RIST and RTP inputs: slots of PORT_STEP so RTP_FEC's port+2 and port+4 stay free. */
export const PORT_BASE = 20_000;
export const PORT_STEP = 10;
export const PORT_SLOTS = 1_000;
export const RTMP_PORT = 1935;

export interface IngestAllocation {
  /** the URL a sender pushes to; undefined for PULL protocols and MP4 (the engine fetches the source) */
  url: string | undefined;
  /** the RTMP stream key or the SRT passphrase */
  streamKey: string | undefined;
  /** the listener port for SRT, RIST, RTP and RTP_FEC inputs and connected devices */
  port: number | undefined;
}

/** Protocols that listen on a port of their own. A connected device pushes SRT to its input. */
export function needsPort(type: InputType, protocol: Protocol | undefined): boolean {
  return type === 'CONNECTED_DEVICE' || protocol === 'SRT_PUSH' || protocol === 'RIST' || protocol === 'RTP' || protocol === 'RTP_FEC';
}

/** The lowest port slot not in `used`, or undefined when the range is full. */
export function freePort(used: ReadonlySet<number>): number | undefined {
  for (let slot = 0; slot < PORT_SLOTS; slot += 1) {
    const port = PORT_BASE + slot * PORT_STEP;
    if (!used.has(port)) return port;
  }
  return undefined;
}

/**
 * Builds the address of a new input on `host` (the public host name), with a fresh key. `rtmpPort` is the
 * engine's RTMP_PORT (the default when it is 0: that port is only known once the server listens).
 */
export function allocateIngest(host: string, type: InputType, protocol: Protocol | undefined, port: number | undefined, rtmpPort = RTMP_PORT): IngestAllocation {
  const secret = randomBytes(16).toString('hex');
  if (type === 'CONNECTED_DEVICE' || protocol === 'SRT_PUSH') {
    return { url: `srt://${host}:${port}?passphrase=${secret}`, streamKey: secret, port };
  }
  switch (protocol) {
    case 'RTMP_PUSH':
      return { url: `rtmp://${host}:${rtmpPort || RTMP_PORT}/live/${secret}`, streamKey: secret, port: undefined };
    case 'RIST':
      return { url: `rist://${host}:${port}`, streamKey: undefined, port };
    case 'RTP':
    case 'RTP_FEC':
      return { url: `rtp://${host}:${port}`, streamKey: undefined, port };
    default:
      return { url: undefined, streamKey: undefined, port: undefined };
  }
}
