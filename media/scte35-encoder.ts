// SCTE-35 splice_info_section encoder (SCTE 35 2020 §9): cues for the test origin, the fixtures and the benchmarks.
// The proxy only decodes (scte35.ts).
import { crc32Mpeg2 } from './scte35.js';

/** Bit writer used by the encoder. */
class BitWriter {
  private readonly bytes: number[] = [];
  private cur = 0;
  private n = 0;
  bits(count: number, value: number): this {
    for (let i = count - 1; i >= 0; i--) {
      const bit = Math.floor(value / 2 ** i) % 2;
      this.cur = (this.cur << 1) | bit;
      if (++this.n === 8) { this.bytes.push(this.cur); this.cur = 0; this.n = 0; }
    }
    return this;
  }
  flag(v: boolean | undefined): this { return this.bits(1, v ? 1 : 0); }
  raw(b: Uint8Array): this { for (const x of b) this.bits(8, x); return this; }
  out(): Uint8Array { return Uint8Array.from(this.bytes); }
}

function writeSpliceTime(w: BitWriter, ptsTime: number | undefined): void {
  if (ptsTime === undefined) w.bits(1, 0).bits(7, 0x7f);
  else w.bits(1, 1).bits(6, 0x3f).bits(33, ptsTime);
}

export type SpliceInsertInput = {
  spliceEventId: number;
  outOfNetwork: boolean;
  /** 90 kHz; omitted = splice_immediate */
  ptsTime?: number;
  /** 90 kHz break duration; omitted = no break_duration */
  breakDuration?: number;
  autoReturn?: boolean;
  uniqueProgramId?: number;
  availNum?: number;
  availsExpected?: number;
};
export type SegmentationInput = {
  segmentationEventId: number;
  segmentationTypeId: number;
  /** 90 kHz */
  segmentationDuration?: number;
  upidType?: number;
  upidHex?: string;
  segmentNum?: number;
  segmentsExpected?: number;
  subSegmentNum?: number;
  subSegmentsExpected?: number;
  /** omitted = delivery_not_restricted_flag set */
  restrictions?: { webDeliveryAllowed: boolean; noRegionalBlackout: boolean; archiveAllowed: boolean; deviceRestrictions: number };
};
export type EncodeInput =
  | { command: 'splice_insert'; insert: SpliceInsertInput; ptsAdjustment?: number; availDescriptor?: number }
  | { command: 'time_signal'; ptsTime?: number; ptsAdjustment?: number; segmentation?: SegmentationInput[] };

function segmentationBytes(s: SegmentationInput): Uint8Array {
  const w = new BitWriter();
  w.raw(Buffer.from('CUEI', 'latin1')).bits(32, s.segmentationEventId).bits(1, 0).bits(7, 0x7f);
  w.bits(1, 1).flag(s.segmentationDuration !== undefined);
  const r = s.restrictions;
  if (r) w.bits(1, 0).flag(r.webDeliveryAllowed).flag(r.noRegionalBlackout).flag(r.archiveAllowed).bits(2, r.deviceRestrictions);
  else w.bits(1, 1).bits(5, 0x1f);
  if (s.segmentationDuration !== undefined) w.bits(40, s.segmentationDuration);
  const upid = Buffer.from(s.upidHex ?? '', 'hex');
  w.bits(8, s.upidType ?? 0).bits(8, upid.length).raw(upid);
  w.bits(8, s.segmentationTypeId).bits(8, s.segmentNum ?? 0).bits(8, s.segmentsExpected ?? 0);
  if (s.subSegmentNum !== undefined) w.bits(8, s.subSegmentNum).bits(8, s.subSegmentsExpected ?? 0);
  return w.out();
}

/** Builds a splice_info_section with a correct CRC-32; returns it as bytes, base64 and 0x-hex. */
export function encodeScte35(input: EncodeInput): { bytes: Uint8Array; base64: string; hex: string } {
  const cmd = new BitWriter();
  const desc = new BitWriter();
  let type: number;
  if (input.command === 'splice_insert') {
    type = 0x05;
    const s = input.insert;
    const immediate = s.ptsTime === undefined;
    cmd.bits(32, s.spliceEventId).bits(1, 0).bits(7, 0x7f);
    cmd.flag(s.outOfNetwork).bits(1, 1).flag(s.breakDuration !== undefined).flag(immediate).bits(1, 1).bits(3, 0x7);
    if (!immediate) writeSpliceTime(cmd, s.ptsTime);
    if (s.breakDuration !== undefined) cmd.flag(s.autoReturn ?? true).bits(6, 0x3f).bits(33, s.breakDuration);
    cmd.bits(16, s.uniqueProgramId ?? 0).bits(8, s.availNum ?? 0).bits(8, s.availsExpected ?? 0);
    if (input.availDescriptor !== undefined) desc.bits(8, 0).bits(8, 8).raw(Buffer.from('CUEI', 'latin1')).bits(32, input.availDescriptor);
  } else {
    type = 0x06;
    writeSpliceTime(cmd, input.ptsTime);
    for (const s of input.segmentation ?? []) {
      const b = segmentationBytes(s);
      desc.bits(8, 2).bits(8, b.length).raw(b);
    }
  }
  const cmdBytes = cmd.out();
  const descBytes = desc.out();
  const sectionLength = 11 + cmdBytes.length + 2 + descBytes.length + 4;
  const w = new BitWriter();
  w.bits(8, 0xfc).bits(1, 0).bits(1, 0).bits(2, 3).bits(12, sectionLength);
  w.bits(8, 0).bits(1, 0).bits(6, 0).bits(33, input.ptsAdjustment ?? 0).bits(8, 0xff).bits(12, 0xfff);
  w.bits(12, cmdBytes.length).bits(8, type).raw(cmdBytes).bits(16, descBytes.length).raw(descBytes);
  const body = w.out();
  const crc = crc32Mpeg2(body);
  const bytes = new Uint8Array(body.length + 4);
  bytes.set(body);
  bytes.set([crc >>> 24, (crc >>> 16) & 0xff, (crc >>> 8) & 0xff, crc & 0xff], body.length);
  return { bytes, base64: Buffer.from(bytes).toString('base64'), hex: `0x${Buffer.from(bytes).toString('hex').toUpperCase()}` };
}
