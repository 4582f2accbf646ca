// SCTE-35 splice_info_section decoder (SCTE 35 2020 §9; the encoder is scte35-encoder.ts). Own code: the npm `scte35` package is broken (issue 5).
// Decoding never throws: bad input gives { ok: false, error } (STYLE.md rule 5).

export type SpliceTime = { timeSpecified: boolean; ptsTime?: number };
export type BreakDuration = { autoReturn: boolean; duration: number };
export type SpliceComponent = { componentTag: number; spliceTime?: SpliceTime };

export type SpliceNull = { type: 'splice_null' };
export type SpliceInsert = {
  type: 'splice_insert';
  spliceEventId: number;
  spliceEventCancelIndicator: boolean;
  outOfNetworkIndicator: boolean;
  programSpliceFlag: boolean;
  spliceImmediate: boolean;
  eventIdComplianceFlag: boolean;
  spliceTime?: SpliceTime;
  components: SpliceComponent[];
  breakDuration?: BreakDuration;
  uniqueProgramId: number;
  availNum: number;
  availsExpected: number;
};
export type TimeSignal = { type: 'time_signal'; spliceTime: SpliceTime };
export type BandwidthReservation = { type: 'bandwidth_reservation' };
export type PrivateCommand = { type: 'private_command'; identifier: number; privateBytesHex: string };
export type UnknownCommand = { type: 'unknown'; commandType: number; rawHex: string };
export type SpliceCommand = SpliceNull | SpliceInsert | TimeSignal | BandwidthReservation | PrivateCommand | UnknownCommand;

export type AvailDescriptor = { kind: 'avail'; tag: 0; identifier: string; providerAvailId: number };
export type SegmentationComponent = { componentTag: number; ptsOffset: number };
export type SegmentationDescriptor = {
  kind: 'segmentation';
  tag: 2;
  identifier: string;
  segmentationEventId: number;
  segmentationEventCancelIndicator: boolean;
  programSegmentationFlag: boolean;
  deliveryNotRestricted: boolean;
  webDeliveryAllowed?: boolean;
  noRegionalBlackout?: boolean;
  archiveAllowed?: boolean;
  deviceRestrictions?: number;
  components: SegmentationComponent[];
  /** 90 kHz ticks */
  segmentationDuration?: number;
  upidType: number;
  upidHex: string;
  segmentationTypeId: number;
  segmentNum: number;
  segmentsExpected: number;
  subSegmentNum?: number;
  subSegmentsExpected?: number;
};
export type OtherDescriptor = { kind: 'other'; tag: number; identifier: string; dataHex: string };
export type SpliceDescriptor = AvailDescriptor | SegmentationDescriptor | OtherDescriptor;

export type SpliceInfo = {
  tableId: number;
  sapType: number;
  protocolVersion: number;
  encryptedPacket: boolean;
  encryptionAlgorithm: number;
  /** 90 kHz ticks */
  ptsAdjustment: number;
  cwIndex: number;
  tier: number;
  spliceCommandType: number;
  command: SpliceCommand;
  descriptors: SpliceDescriptor[];
  crc32: string;
};

export type Scte35Error = { code: 'SCTE35_BAD_ENCODING' | 'SCTE35_TRUNCATED' | 'SCTE35_BAD_TABLE' | 'SCTE35_BAD_CRC' | 'SCTE35_ENCRYPTED'; message: string };
export type Scte35Result = { ok: true; value: SpliceInfo } | { ok: false; error: Scte35Error };

export const TICKS_PER_SECOND = 90_000;

/** Segmentation type ids that open a break (provider/distributor ad, placement opportunity...) per SCTE 35 table 23. */
export const SEGMENTATION_STARTS = new Set([0x10, 0x22, 0x30, 0x32, 0x34, 0x36, 0x38, 0x3a, 0x3c, 0x3e, 0x44, 0x46]);
/** The matching "end" type ids. */
export const SEGMENTATION_ENDS = new Set([0x11, 0x23, 0x31, 0x33, 0x35, 0x37, 0x39, 0x3b, 0x3d, 0x3f, 0x45, 0x47]);
/** Types that carry sub_segment_num/sub_segments_expected (2016+), read only if bytes remain. */
const SUB_SEGMENT_TYPES = new Set([0x30, 0x32, 0x34, 0x36, 0x38, 0x3a, 0x44, 0x46]);

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 24;
    for (let k = 0; k < 8; k++) c = c & 0x80000000 ? (c << 1) ^ 0x04c11db7 : c << 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/** MPEG-2 CRC-32 (poly 0x04C11DB7, init 0xFFFFFFFF, no reflection, no final xor). */
export function crc32Mpeg2(bytes: Uint8Array, end = bytes.length): number {
  let crc = 0xffffffff;
  for (let i = 0; i < end; i++) crc = ((crc << 8) ^ (CRC_TABLE[((crc >>> 24) ^ (bytes[i] ?? 0)) & 0xff] ?? 0)) >>> 0;
  return crc >>> 0;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex').toUpperCase();

/** Bit reader over a byte array; values up to 48 bits stay exact as JS numbers. */
class BitReader {
  private pos = 0; // in bits
  constructor(private readonly buf: Uint8Array, private readonly endByte = buf.length) {}
  get bytePos(): number { return this.pos >> 3; }
  remainingBytes(): number { return this.endByte - (this.pos >> 3); }
  bits(n: number): number {
    if (this.pos + n > this.endByte * 8) throw new Truncated();
    let v = 0;
    for (let i = 0; i < n; i++) {
      const byte = this.buf[(this.pos >> 3)] ?? 0;
      v = v * 2 + ((byte >> (7 - (this.pos & 7))) & 1);
      this.pos++;
    }
    return v;
  }
  flag(): boolean { return this.bits(1) === 1; }
  bytes(n: number): Uint8Array {
    if ((this.pos & 7) !== 0 || this.bytePos + n > this.endByte) throw new Truncated();
    const out = this.buf.subarray(this.bytePos, this.bytePos + n);
    this.pos += n * 8;
    return out;
  }
  skipTo(byte: number): void { this.pos = byte * 8; }
}

// Internal control flow only: caught in decodeScte35 and turned into an error result.
class Truncated extends Error {}

/** Accepts base64, or hex with a 0x prefix (HLS DATERANGE SCTE35-* form), or bare hex. */
export function scte35Bytes(input: string): Uint8Array | undefined {
  const s = input.trim();
  if (/^0x[0-9a-f]+$/i.test(s)) return s.length % 2 === 0 ? Uint8Array.from(Buffer.from(s.slice(2), 'hex')) : undefined;
  if (/^[0-9a-f]+$/i.test(s) && s.length % 2 === 0 && s.toLowerCase().startsWith('fc')) return Uint8Array.from(Buffer.from(s, 'hex'));
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(s)) return undefined;
  const b = Buffer.from(s, 'base64');
  return b.length === 0 ? undefined : Uint8Array.from(b);
}

function readSpliceTime(r: BitReader): SpliceTime {
  const timeSpecified = r.flag();
  if (timeSpecified) {
    r.bits(6);
    return { timeSpecified, ptsTime: r.bits(33) };
  }
  r.bits(7);
  return { timeSpecified };
}

function readCommand(r: BitReader, type: number, length: number): SpliceCommand {
  const start = r.bytePos;
  switch (type) {
    case 0x00:
      return { type: 'splice_null' };
    case 0x05: {
      const spliceEventId = r.bits(32);
      const spliceEventCancelIndicator = r.flag();
      r.bits(7);
      const cmd: SpliceInsert = {
        type: 'splice_insert', spliceEventId, spliceEventCancelIndicator, outOfNetworkIndicator: false,
        programSpliceFlag: false, spliceImmediate: false, eventIdComplianceFlag: false, components: [],
        uniqueProgramId: 0, availNum: 0, availsExpected: 0,
      };
      if (spliceEventCancelIndicator) return cmd;
      cmd.outOfNetworkIndicator = r.flag();
      cmd.programSpliceFlag = r.flag();
      const durationFlag = r.flag();
      cmd.spliceImmediate = r.flag();
      cmd.eventIdComplianceFlag = r.flag();
      r.bits(3);
      if (cmd.programSpliceFlag && !cmd.spliceImmediate) cmd.spliceTime = readSpliceTime(r);
      if (!cmd.programSpliceFlag) {
        const count = r.bits(8);
        for (let i = 0; i < count; i++) {
          const componentTag = r.bits(8);
          cmd.components.push(cmd.spliceImmediate ? { componentTag } : { componentTag, spliceTime: readSpliceTime(r) });
        }
      }
      if (durationFlag) {
        const autoReturn = r.flag();
        r.bits(6);
        cmd.breakDuration = { autoReturn, duration: r.bits(33) };
      }
      cmd.uniqueProgramId = r.bits(16);
      cmd.availNum = r.bits(8);
      cmd.availsExpected = r.bits(8);
      return cmd;
    }
    case 0x06:
      return { type: 'time_signal', spliceTime: readSpliceTime(r) };
    case 0x07:
      return { type: 'bandwidth_reservation' };
    case 0xff: {
      const identifier = r.bits(32);
      return { type: 'private_command', identifier, privateBytesHex: hex(r.bytes(Math.max(0, length - 4))) };
    }
    default:
      // splice_schedule (0x04) and future commands: passed through raw; length 0xFFF means "unknown", not recoverable.
      if (length === 0xfff) throw new Truncated();
      return { type: 'unknown', commandType: type, rawHex: hex(r.bytes(length - (r.bytePos - start))) };
  }
}

function readSegmentation(r: BitReader, identifier: string, end: number): SegmentationDescriptor {
  const d: SegmentationDescriptor = {
    kind: 'segmentation', tag: 2, identifier, segmentationEventId: r.bits(32), segmentationEventCancelIndicator: false,
    programSegmentationFlag: true, deliveryNotRestricted: true, components: [], upidType: 0, upidHex: '',
    segmentationTypeId: 0, segmentNum: 0, segmentsExpected: 0,
  };
  d.segmentationEventCancelIndicator = r.flag();
  r.bits(7);
  if (d.segmentationEventCancelIndicator) return d;
  d.programSegmentationFlag = r.flag();
  const durationFlag = r.flag();
  d.deliveryNotRestricted = r.flag();
  if (!d.deliveryNotRestricted) {
    d.webDeliveryAllowed = r.flag();
    d.noRegionalBlackout = r.flag();
    d.archiveAllowed = r.flag();
    d.deviceRestrictions = r.bits(2);
  } else r.bits(5);
  if (!d.programSegmentationFlag) {
    const count = r.bits(8);
    for (let i = 0; i < count; i++) {
      const componentTag = r.bits(8);
      r.bits(7);
      d.components.push({ componentTag, ptsOffset: r.bits(33) });
    }
  }
  if (durationFlag) d.segmentationDuration = r.bits(40);
  d.upidType = r.bits(8);
  const upidLength = r.bits(8);
  d.upidHex = hex(r.bytes(upidLength));
  d.segmentationTypeId = r.bits(8);
  d.segmentNum = r.bits(8);
  d.segmentsExpected = r.bits(8);
  if (SUB_SEGMENT_TYPES.has(d.segmentationTypeId) && end - r.bytePos >= 2) {
    d.subSegmentNum = r.bits(8);
    d.subSegmentsExpected = r.bits(8);
  }
  return d;
}

function readDescriptors(r: BitReader, loopEnd: number): SpliceDescriptor[] {
  const out: SpliceDescriptor[] = [];
  while (r.bytePos + 2 <= loopEnd) {
    const tag = r.bits(8);
    const length = r.bits(8);
    const end = r.bytePos + length;
    if (end > loopEnd || length < 4) throw new Truncated();
    const identifier = Buffer.from(r.bytes(4)).toString('latin1');
    if (tag === 0 && length >= 8) out.push({ kind: 'avail', tag: 0, identifier, providerAvailId: r.bits(32) });
    else if (tag === 2) {
      const body = r.bytes(end - r.bytePos);
      out.push(readSegmentation(new BitReader(body), identifier, body.length));
    } else out.push({ kind: 'other', tag, identifier, dataHex: hex(r.bytes(end - r.bytePos)) });
    r.skipTo(end);
  }
  return out;
}

/** Decodes a splice_info_section from base64 or hex; checks table id, lengths and the CRC-32. */
export function decodeScte35(input: string | Uint8Array): Scte35Result {
  const bytes = typeof input === 'string' ? scte35Bytes(input) : input;
  if (!bytes) return { ok: false, error: { code: 'SCTE35_BAD_ENCODING', message: 'cue is neither base64 nor 0x-hex' } };
  if (bytes.length < 15) return { ok: false, error: { code: 'SCTE35_TRUNCATED', message: `cue is ${bytes.length} bytes, shorter than a section header` } };
  if (bytes[0] !== 0xfc) return { ok: false, error: { code: 'SCTE35_BAD_TABLE', message: `table_id 0x${(bytes[0] ?? 0).toString(16)} is not 0xFC` } };
  const sectionLength = (((bytes[1] ?? 0) & 0x0f) << 8) | (bytes[2] ?? 0);
  const total = sectionLength + 3;
  if (total > bytes.length || total < 15) return { ok: false, error: { code: 'SCTE35_TRUNCATED', message: `section_length ${sectionLength} does not fit ${bytes.length} bytes` } };
  const crc = crc32Mpeg2(bytes, total - 4);
  const stored = ((bytes[total - 4] ?? 0) * 2 ** 24) + (((bytes[total - 3] ?? 0) << 16) | ((bytes[total - 2] ?? 0) << 8) | (bytes[total - 1] ?? 0));
  if (crc !== stored) return { ok: false, error: { code: 'SCTE35_BAD_CRC', message: `CRC-32 ${stored.toString(16)} does not match computed ${crc.toString(16)}` } };
  try {
    const r = new BitReader(bytes, total - 4);
    const tableId = r.bits(8);
    r.bits(2);
    const sapType = r.bits(2);
    r.bits(12);
    const protocolVersion = r.bits(8);
    const encryptedPacket = r.flag();
    const encryptionAlgorithm = r.bits(6);
    const ptsAdjustment = r.bits(33);
    const cwIndex = r.bits(8);
    const tier = r.bits(12);
    const commandLength = r.bits(12);
    const spliceCommandType = r.bits(8);
    if (encryptedPacket) return { ok: false, error: { code: 'SCTE35_ENCRYPTED', message: 'encrypted splice_info_section is not supported' } };
    const cmdStart = r.bytePos;
    const command = readCommand(r, spliceCommandType, commandLength);
    if (commandLength !== 0xfff) r.skipTo(cmdStart + commandLength);
    const loopLength = r.bits(16);
    const loopEnd = r.bytePos + loopLength;
    if (loopEnd > total - 4) throw new Truncated();
    const descriptors = readDescriptors(r, loopEnd);
    return {
      ok: true,
      value: { tableId, sapType, protocolVersion, encryptedPacket, encryptionAlgorithm, ptsAdjustment, cwIndex, tier, spliceCommandType, command, descriptors, crc32: stored.toString(16).toUpperCase().padStart(8, '0') },
    };
  } catch (e) {
    if (e instanceof Truncated) return { ok: false, error: { code: 'SCTE35_TRUNCATED', message: 'a field runs past the end of the section' } };
    throw e;
  }
}

/** Break length in seconds carried by a decoded cue (splice_insert break_duration or segmentation_duration). */
export function cueDurationSeconds(info: SpliceInfo): number | undefined {
  if (info.command.type === 'splice_insert' && info.command.breakDuration) return info.command.breakDuration.duration / TICKS_PER_SECOND;
  for (const d of info.descriptors) {
    if (d.kind === 'segmentation' && d.segmentationDuration !== undefined) return d.segmentationDuration / TICKS_PER_SECOND;
  }
  return undefined;
}

/** Whether a decoded cue opens ('out') or closes ('in') a break, or neither. */
export function cueDirection(info: SpliceInfo): 'out' | 'in' | undefined {
  if (info.command.type === 'splice_insert') {
    if (info.command.spliceEventCancelIndicator) return undefined;
    return info.command.outOfNetworkIndicator ? 'out' : 'in';
  }
  for (const d of info.descriptors) {
    if (d.kind !== 'segmentation' || d.segmentationEventCancelIndicator) continue;
    if (SEGMENTATION_STARTS.has(d.segmentationTypeId)) return 'out';
    if (SEGMENTATION_ENDS.has(d.segmentationTypeId)) return 'in';
  }
  return undefined;
}

/** Stable event id of a cue: splice_event_id, else the first segmentation_event_id. */
export function cueEventId(info: SpliceInfo): number | undefined {
  if (info.command.type === 'splice_insert') return info.command.spliceEventId;
  for (const d of info.descriptors) if (d.kind === 'segmentation') return d.segmentationEventId;
  return undefined;
}
