// Datagrams lost between an RTP sender and us, from the 16-bit RTP sequence numbers (RFC 3550 A.1, simplified:
// a jump of more than MAX_GAP is a sender restart, not loss). Feeds the UDP_INPUT_LOSS graph.
const MAX_GAP = 3_000;

export class RtpLossCounter {
  private expected: number | undefined;
  lost = 0;

  add(datagram: Buffer): void {
    // RTP version 2 in the top bits of the first byte; anything else is not a media packet
    if (datagram.length < 12 || ((datagram[0] ?? 0) >> 6) !== 2) return;
    const sequence = datagram.readUInt16BE(2);
    if (this.expected !== undefined) {
      const gap = (sequence - this.expected + 0x10000) & 0xffff;
      if (gap > 0 && gap <= MAX_GAP) this.lost += gap;
      // gap > MAX_GAP: a late duplicate or a restart; either way not counted
      else if (gap > MAX_GAP && gap < 0x10000 - MAX_GAP) this.expected = undefined;
      if (gap > 0x10000 - MAX_GAP) return; // late packet: keep the expectation
    }
    this.expected = (sequence + 1) & 0xffff;
  }

  reset(): void {
    this.expected = undefined;
  }
}
