// Just enough of SRT's control packets (SRT RFC draft, section 3.2) for the relay to tell when ffmpeg's SRT
// listener accepted or refused a caller, and when either side shut the connection down. Nothing is changed.

const HANDSHAKE = 0x0000;
const SHUTDOWN = 0x0005;
/** handshake type of a conclusion; a listener refusing the caller puts 1000 + reason there instead */
const CONCLUSION = 0xffffffff;
const REJECTION_BASE = 1000;

/** libsrt's SRT_REJ_* reasons a sender of ours can cause. */
const REJECTION_REASONS: Record<number, string> = {
  8: 'SRT version not supported',
  10: 'wrong passphrase',
  11: 'passphrase missing on one side',
  14: 'packet filter not supported',
};

export type SrtSignal =
  | { kind: 'accepted' }
  | { kind: 'refused'; reason: string }
  | { kind: 'shutdown' };

/**
 * What a datagram between a caller and ffmpeg's listener means for the front, if anything. Only the
 * listener's conclusion accepts or refuses: the caller's own conclusion request carries the same type.
 */
export function srtSignal(datagram: Buffer, fromListener: boolean): SrtSignal | undefined {
  if (datagram.length < 16 || ((datagram[0] ?? 0) & 0x80) === 0) return undefined;
  const controlType = datagram.readUInt16BE(0) & 0x7fff;
  if (controlType === SHUTDOWN) return { kind: 'shutdown' };
  if (!fromListener || controlType !== HANDSHAKE || datagram.length < 40) return undefined;
  const handshakeType = datagram.readUInt32BE(36);
  if (handshakeType === CONCLUSION) return { kind: 'accepted' };
  if (handshakeType >= REJECTION_BASE && handshakeType < REJECTION_BASE + 1000) {
    const code = handshakeType - REJECTION_BASE;
    return { kind: 'refused', reason: REJECTION_REASONS[code] ?? `refused by the SRT listener (reason ${code})` };
  }
  return undefined;
}
