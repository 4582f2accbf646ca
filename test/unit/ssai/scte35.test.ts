import { readFileSync } from 'node:fs';
import { VECTORS_DIR, vectorPath } from '../../helpers/vectors.js';
import { describe, expect, it } from 'vitest';
import {
  crc32Mpeg2, cueDirection, cueDurationSeconds, cueEventId, decodeScte35,
  type SegmentationDescriptor, type SpliceInfo,
} from '../../../media/scte35.js';
import { encodeScte35 } from '../../../media/scte35-encoder.js';

type Expected = Record<string, unknown> & { descriptors?: Record<string, unknown>[] };
type Sample = { name: string; base64: string; expect: Expected };
const vectors = (VECTORS_DIR
  ? JSON.parse(readFileSync(vectorPath('scte35-samples.json'), 'utf8'))
  : { samples: [] }) as { samples: Sample[] };

// Maps the vector file's snake_case names onto the decoder's fields.
function flatten(info: SpliceInfo): Record<string, unknown> {
  const c = info.command;
  const out: Record<string, unknown> = {
    table_id: info.tableId, pts_adjustment: info.ptsAdjustment, tier: info.tier,
    splice_command_type: info.spliceCommandType, crc32: info.crc32,
  };
  if (c.type === 'time_signal') out.pts_time = c.spliceTime.ptsTime;
  if (c.type === 'splice_insert') {
    Object.assign(out, {
      splice_event_id: c.spliceEventId, out_of_network_indicator: c.outOfNetworkIndicator, splice_immediate: c.spliceImmediate,
      pts_time: c.spliceTime?.ptsTime, break_auto_return: c.breakDuration?.autoReturn, break_duration: c.breakDuration?.duration,
      unique_program_id: c.uniqueProgramId, avail_num: c.availNum, avails_expected: c.availsExpected,
    });
  }
  return out;
}
function flattenDescriptor(d: SpliceInfo['descriptors'][number]): Record<string, unknown> {
  if (d.kind === 'avail') return { tag: d.tag, identifier: d.identifier, provider_avail_id: d.providerAvailId };
  if (d.kind === 'other') return { tag: d.tag, identifier: d.identifier };
  return {
    tag: d.tag, identifier: d.identifier, segmentation_event_id: d.segmentationEventId, segmentation_duration: d.segmentationDuration,
    upid_type: d.upidType, upid_hex: d.upidHex, segmentation_type_id: d.segmentationTypeId, segment_num: d.segmentNum,
    segments_expected: d.segmentsExpected,
  };
}

describe.skipIf(!VECTORS_DIR)('scte35 decoder', () => {
  it('reads the four published SCTE 35 samples', () => {
    expect(vectors.samples.length).toBeGreaterThanOrEqual(4);
  });

  for (const sample of vectors.samples) {
    it(`decodes sample "${sample.name}" to the published values`, () => {
      const res = decodeScte35(sample.base64);
      expect(res.ok).toBe(true);
      if (!res.ok) return;
      const flat = flatten(res.value);
      const { descriptors, ...fields } = sample.expect;
      for (const [k, v] of Object.entries(fields)) expect([k, flat[k]]).toEqual([k, v]);
      expect(res.value.descriptors).toHaveLength(descriptors?.length ?? 0);
      (descriptors ?? []).forEach((want, i) => {
        const got = flattenDescriptor(res.value.descriptors[i]!);
        for (const [k, v] of Object.entries(want)) expect([k, got[k]]).toEqual([k, v]);
      });
    });
  }

  it('accepts the 0x-hex form used by EXT-X-DATERANGE', () => {
    const b64 = vectors.samples[1]!.base64;
    const hex = `0x${Buffer.from(b64, 'base64').toString('hex')}`;
    const res = decodeScte35(hex);
    expect(res.ok && res.value.command.type).toBe('splice_insert');
  });

  it('rejects every sample with one flipped byte as a CRC error', () => {
    for (const sample of vectors.samples) {
      const bytes = Buffer.from(sample.base64, 'base64');
      bytes[10] = (bytes[10] ?? 0) ^ 0x01;
      const res = decodeScte35(bytes.toString('base64'));
      expect(res.ok).toBe(false);
      if (!res.ok) expect(res.error.code).toBe('SCTE35_BAD_CRC');
    }
  });

  it('returns an error result for garbage, short input and a wrong table id instead of throwing', () => {
    const bad = ['not base64 !!', '/DA=', Buffer.from([0xfb, ...new Array(20).fill(0)]).toString('base64'), ''];
    const codes = bad.map((b) => { const r = decodeScte35(b); return r.ok ? 'ok' : r.error.code; });
    expect(codes).toEqual(['SCTE35_BAD_ENCODING', 'SCTE35_TRUNCATED', 'SCTE35_BAD_TABLE', 'SCTE35_BAD_ENCODING']);
  });

  it('reports a section whose descriptor loop runs past the end as truncated even with a valid CRC', () => {
    const good = Buffer.from(vectors.samples[0]!.base64, 'base64');
    const body = Buffer.from(good.subarray(0, good.length - 4));
    body[19] = 0xff; // descriptor_loop_length low byte: now longer than the section
    const crc = crc32Mpeg2(body);
    const patched = Buffer.concat([body, Buffer.from([crc >>> 24, (crc >>> 16) & 0xff, (crc >>> 8) & 0xff, crc & 0xff])]);
    const res = decodeScte35(patched.toString('base64'));
    expect(res.ok ? 'ok' : res.error.code).toBe('SCTE35_TRUNCATED');
  });

  it('tells break direction, duration and event id of the samples', () => {
    const [placementStart, insert, placementEnd] = vectors.samples.map((s) => {
      const r = decodeScte35(s.base64);
      if (!r.ok) throw new Error(r.error.message);
      return r.value;
    });
    expect(cueDirection(placementStart!)).toBe('out');
    expect(cueDurationSeconds(placementStart!)).toBeCloseTo(307, 0);
    expect(cueDirection(insert!)).toBe('out');
    expect(cueDurationSeconds(insert!)).toBeCloseTo(60.29, 2);
    expect(cueEventId(insert!)).toBe(1207959695);
    expect(cueDirection(placementEnd!)).toBe('in');
  });
});

describe.skipIf(!VECTORS_DIR)('scte35 encoder', () => {
  it('round-trips a splice_insert with break duration and avail descriptor', () => {
    const enc = encodeScte35({
      command: 'splice_insert', availDescriptor: 309,
      insert: { spliceEventId: 0x4800008f, outOfNetwork: true, ptsTime: 1936310318, breakDuration: 30 * 90_000, autoReturn: true, availNum: 1, availsExpected: 2 },
    });
    for (const form of [enc.base64, enc.hex]) {
      const res = decodeScte35(form);
      expect(res.ok).toBe(true);
      if (!res.ok || res.value.command.type !== 'splice_insert') throw new Error('not a splice_insert');
      expect(res.value.command).toMatchObject({
        spliceEventId: 0x4800008f, outOfNetworkIndicator: true, spliceImmediate: false, programSpliceFlag: true,
        spliceTime: { timeSpecified: true, ptsTime: 1936310318 }, breakDuration: { autoReturn: true, duration: 2_700_000 },
        availNum: 1, availsExpected: 2,
      });
      expect(res.value.descriptors).toEqual([{ kind: 'avail', tag: 0, identifier: 'CUEI', providerAvailId: 309 }]);
    }
  });

  it('round-trips an immediate cue-in splice_insert', () => {
    const res = decodeScte35(encodeScte35({ command: 'splice_insert', insert: { spliceEventId: 7, outOfNetwork: false } }).base64);
    expect(res.ok && res.value.command).toMatchObject({ type: 'splice_insert', spliceImmediate: true, outOfNetworkIndicator: false });
    expect(res.ok && cueDirection(res.value)).toBe('in');
  });

  it('round-trips a time_signal with two segmentation descriptors including sub-segment fields', () => {
    const enc = encodeScte35({
      command: 'time_signal', ptsTime: 2 ** 33 - 1, ptsAdjustment: 12345,
      segmentation: [
        { segmentationEventId: 1, segmentationTypeId: 0x34, segmentationDuration: 2 ** 40 - 1, upidType: 8, upidHex: '000000002CA0A18A', segmentNum: 1, segmentsExpected: 2, subSegmentNum: 3, subSegmentsExpected: 4 },
        { segmentationEventId: 2, segmentationTypeId: 0x35 },
      ],
    });
    const res = decodeScte35(enc.bytes);
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(res.value.ptsAdjustment).toBe(12345);
    expect(res.value.command).toEqual({ type: 'time_signal', spliceTime: { timeSpecified: true, ptsTime: 2 ** 33 - 1 } });
    const [a, b] = res.value.descriptors as SegmentationDescriptor[];
    expect(a).toMatchObject({ segmentationEventId: 1, segmentationTypeId: 0x34, segmentationDuration: 2 ** 40 - 1, upidType: 8, upidHex: '000000002CA0A18A', segmentNum: 1, segmentsExpected: 2, subSegmentNum: 3, subSegmentsExpected: 4 });
    expect(b).toMatchObject({ segmentationEventId: 2, segmentationTypeId: 0x35, upidHex: '' });
    expect(b?.subSegmentNum).toBeUndefined();
  });

  it('re-encodes the published time_signal sample to the same bytes', () => {
    const sample = vectors.samples[2]!;
    const res = decodeScte35(sample.base64);
    if (!res.ok || res.value.command.type !== 'time_signal') throw new Error('bad sample');
    const d = res.value.descriptors[0] as SegmentationDescriptor;
    const enc = encodeScte35({
      command: 'time_signal', ptsTime: res.value.command.spliceTime.ptsTime,
      segmentation: [{ segmentationEventId: d.segmentationEventId, segmentationTypeId: d.segmentationTypeId, upidType: d.upidType, upidHex: d.upidHex, segmentNum: d.segmentNum, segmentsExpected: d.segmentsExpected,
        restrictions: { webDeliveryAllowed: d.webDeliveryAllowed ?? false, noRegionalBlackout: d.noRegionalBlackout ?? false, archiveAllowed: d.archiveAllowed ?? false, deviceRestrictions: d.deviceRestrictions ?? 0 } }],
    });
    expect(enc.base64).toBe(sample.base64);
  });
});
