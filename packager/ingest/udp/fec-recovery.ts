// SMPTE 2022-1 (Pro-MPEG CoP #3) FEC for RTP_FEC inputs: ffmpeg sends the column and row FEC streams (ports +2,
// +4) but cannot read them, so the relay recovers lost media packets itself and forwards them late; ffmpeg's RTP
// reorder queue puts them back in place. Each FEC packet is the XOR of the packets SNBase + k × offset (k < NA);
// when exactly one of them is missing, XOR-ing the FEC payload with the others rebuilds it. A packet recovered
// by one FEC can complete another (rows and columns together fix bursts a single direction cannot).

/** Media packets kept to XOR with: a 20 × 20 matrix (the largest the standard allows, L × D ≤ 100) twice over. */
const KEEP_MEDIA = 1_000;
/** FEC packets waiting for all but one of their media packets. */
const KEEP_FEC = 200;
const RTP_HEADER = 12;
const FEC_HEADER = 16;

interface FecPacket {
  snBase: number;
  offset: number;
  count: number;
  /** byte 1 of the protected packets' RTP headers (marker and payload type), XOR-ed */
  markerAndType: number;
  timestamp: number;
  length: number;
  payload: Buffer;
}

function parseFec(datagram: Buffer): FecPacket | undefined {
  if (datagram.length < RTP_HEADER + FEC_HEADER || ((datagram[0] ?? 0) >> 6) !== 2) return undefined;
  const at = RTP_HEADER;
  const offset = datagram[at + 13] ?? 0;
  const count = datagram[at + 14] ?? 0;
  const length = datagram.readUInt16BE(at + 2);
  if (offset === 0 || count === 0 || datagram.length < at + FEC_HEADER + length) return undefined;
  return {
    snBase: datagram.readUInt16BE(at),
    offset,
    count,
    // the high bit of the field is E (always 1); the marker's XOR travels in the FEC packet's own RTP header
    markerAndType: ((datagram[1] ?? 0) & 0x80) | ((datagram[at + 4] ?? 0) & 0x7f),
    timestamp: datagram.readUInt32BE(at + 8),
    length,
    payload: datagram.subarray(at + FEC_HEADER, at + FEC_HEADER + length),
  };
}

function protectedSequences(fec: FecPacket): number[] {
  return Array.from({ length: fec.count }, (_, index) => (fec.snBase + index * fec.offset) & 0xffff);
}

export class FecRecovery {
  private readonly media = new Map<number, Buffer>();
  private readonly order: number[] = [];
  private pending: FecPacket[] = [];
  recovered = 0;

  /** A media packet from the sender (or one we rebuilt). */
  addMedia(datagram: Buffer): void {
    if (datagram.length < RTP_HEADER || ((datagram[0] ?? 0) >> 6) !== 2) return;
    const sequence = datagram.readUInt16BE(2);
    if (this.media.has(sequence)) return;
    this.media.set(sequence, datagram);
    this.order.push(sequence);
    if (this.order.length > KEEP_MEDIA) this.media.delete(this.order.shift() ?? -1);
  }

  /** A column or row FEC packet; returns the media packets it (and the FEC packets waiting) could rebuild. */
  addFec(datagram: Buffer): Buffer[] {
    const fec = parseFec(datagram);
    if (!fec) return [];
    this.pending.push(fec);
    if (this.pending.length > KEEP_FEC) this.pending.shift();
    const rebuilt: Buffer[] = [];
    for (let progress = true; progress;) {
      progress = false;
      this.pending = this.pending.filter((candidate) => {
        const sequences = protectedSequences(candidate);
        const missing = sequences.filter((sequence) => !this.media.has(sequence));
        if (missing.length === 0) return false; // nothing lost: done with it
        if (missing.length > 1) return true; // maybe later, when another FEC rebuilt one of them
        const packet = this.rebuild(candidate, sequences, missing[0] ?? 0);
        if (!packet) return false;
        this.addMedia(packet);
        this.recovered += 1;
        rebuilt.push(packet);
        progress = true;
        return false;
      });
    }
    return rebuilt;
  }

  private rebuild(fec: FecPacket, sequences: number[], lost: number): Buffer | undefined {
    const payload = Buffer.from(fec.payload);
    let markerAndType = fec.markerAndType;
    let timestamp = fec.timestamp;
    let ssrc: number | undefined;
    for (const sequence of sequences) {
      if (sequence === lost) continue;
      const packet = this.media.get(sequence);
      if (!packet) return undefined;
      // CoP #3 streams have constant-size packets; a different size means a different stream
      if (packet.length - RTP_HEADER !== fec.length) return undefined;
      for (let index = 0; index < fec.length; index += 1) payload[index] = (payload[index] ?? 0) ^ (packet[RTP_HEADER + index] ?? 0);
      markerAndType ^= packet[1] ?? 0;
      timestamp = (timestamp ^ packet.readUInt32BE(4)) >>> 0;
      ssrc ??= packet.readUInt32BE(8);
    }
    if (ssrc === undefined) return undefined;
    const header = Buffer.alloc(RTP_HEADER);
    header[0] = 0x80;
    header[1] = markerAndType & 0xff;
    header.writeUInt16BE(lost, 2);
    header.writeUInt32BE(timestamp, 4);
    header.writeUInt32BE(ssrc, 8);
    return Buffer.concat([header, payload]);
  }
}
