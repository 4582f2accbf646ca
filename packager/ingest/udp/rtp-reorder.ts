// Puts RTP packets back in sequence before ffmpeg sees them: a packet rebuilt from FEC arrives after the ones
// that followed it, and ffmpeg's MPEG-TS-over-RTP input takes packets in arrival order (measured: rebuilt
// packets 100–270 ms late still showed as corrupt input). On a gap, later packets wait until the missing one is
// rebuilt or `maxWaitMs` passes; then the gap is skipped. No gap, no delay.

/** Packets held behind one gap at most; past this the gap is skipped at once. */
const MAX_HELD = 2_000;

export class RtpReorderBuffer {
  private next: number | undefined;
  private readonly held = new Map<number, Buffer>();
  private gapSince: number | undefined;
  skipped = 0;

  constructor(private readonly maxWaitMs: number) {}

  /** A packet from the sender or rebuilt; returns the packets now in order to forward. */
  push(packet: Buffer, now: number): Buffer[] {
    if (packet.length < 12) return [];
    const sequence = packet.readUInt16BE(2);
    if (this.next === undefined) this.next = sequence;
    const ahead = (sequence - this.next) & 0xffff;
    if (ahead >= 0x8000) return []; // already forwarded or given up on: a duplicate or too late
    if (ahead > 0) {
      this.held.set(sequence, packet);
      this.gapSince ??= now;
      return this.held.size > MAX_HELD ? this.skip(now) : [];
    }
    const out = [packet];
    this.next = (sequence + 1) & 0xffff;
    this.drain(out);
    this.gapSince = this.held.size > 0 ? now : undefined;
    return out;
  }

  /** Packets released because the gap in front of them waited long enough. */
  due(now: number): Buffer[] {
    return this.gapSince !== undefined && now - this.gapSince >= this.maxWaitMs ? this.skip(now) : [];
  }

  get waiting(): boolean {
    return this.held.size > 0;
  }

  private skip(now: number): Buffer[] {
    const next = this.next ?? 0;
    let nearest: number | undefined;
    for (const sequence of this.held.keys()) {
      if (nearest === undefined || ((sequence - next) & 0xffff) < ((nearest - next) & 0xffff)) nearest = sequence;
    }
    if (nearest === undefined) return [];
    this.skipped += (nearest - next) & 0xffff;
    this.next = nearest;
    const out: Buffer[] = [];
    this.drain(out);
    this.gapSince = this.held.size > 0 ? now : undefined;
    return out;
  }

  private drain(out: Buffer[]): void {
    for (let packet = this.held.get(this.next ?? -1); packet; packet = this.held.get(this.next ?? -1)) {
      this.held.delete(this.next ?? -1);
      out.push(packet);
      this.next = ((this.next ?? 0) + 1) & 0xffff;
    }
  }
}
