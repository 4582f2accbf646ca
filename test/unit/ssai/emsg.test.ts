// emsg boxes (ssai/parse/emsg.ts) and the SCTE-35 cues they carry (ssai/parse/emsg-cues.ts): boxes the fixture
// writes read back field for field, and as codem-isoboxer (dash.js's ISO-BMFF parser) reads them; the SCTE 35
// standard's own sample sections as message_data, timed as version 0 and version 1 boxes say.
import { readFileSync } from 'node:fs';
import ISOBoxer from 'codem-isoboxer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emsgBox, withEmsgs, type EmsgInput } from '../../../fixtures/emsg-boxes.js';
import { headComplete, readEmsgs } from '../../../ssai/parse/emsg.js';
import { emsgCues, SCTE35_INBAND_SCHEME } from '../../../ssai/parse/emsg-cues.js';
import { scte35Bytes } from '../../../media/scte35.js';
import { VECTORS_DIR, vectorPath } from '../../helpers/vectors.js';

/** A media segment's boxes around the head: styp, then moof and mdat (their payloads are not read). */
const box = (type: string, body: Uint8Array): Uint8Array => {
  const out = new Uint8Array(8 + body.length);
  new DataView(out.buffer).setUint32(0, out.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(body, 8);
  return out;
};
const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
};
const segment = concat(box('styp', new TextEncoder().encode('msdhmsdh')), box('moof', new Uint8Array(24)), box('mdat', new Uint8Array(100)));

const input = fc.record({
  version: fc.constantFrom<0 | 1>(0, 1),
  schemeIdUri: fc.webUrl(),
  value: fc.string({ unit: 'grapheme-ascii', maxLength: 8 }).filter((s) => !s.includes('\0')),
  timescale: fc.integer({ min: 1, max: 0xffff_ffff }),
  time: fc.integer({ min: 0, max: 0xffff_ffff }),
  eventDuration: fc.integer({ min: 0, max: 0xffff_ffff }),
  id: fc.integer({ min: 0, max: 0xffff_ffff }),
  messageData: fc.uint8Array({ maxLength: 64 }),
});

describe('emsg boxes', () => {
  it('reads every box the fixture writes before the moof, as codem-isoboxer reads them', () => {
    fc.assert(fc.property(fc.array(input, { minLength: 1, maxLength: 3 }), (inputs: EmsgInput[]) => {
      const bytes = withEmsgs(segment, inputs.map(emsgBox));
      const read = readEmsgs(bytes);
      expect(read.errors).toEqual([]);
      const theirs = ISOBoxer.parseBuffer(bytes.slice().buffer).fetchAll('emsg');
      expect(read.boxes).toHaveLength(inputs.length);
      read.boxes.forEach((b, i) => {
        const e = inputs[i]!;
        const t = theirs[i]!;
        expect(b).toMatchObject({ version: e.version, schemeIdUri: e.schemeIdUri, value: e.value, timescale: e.timescale, eventDuration: e.eventDuration, id: e.id });
        expect([...b.messageData]).toEqual([...e.messageData]);
        expect(e.version === 0 ? b.presentationTimeDelta : b.presentationTime).toBe(e.time);
        expect([t.scheme_id_uri, t.value, t.timescale, t.id, t.event_duration]).toEqual([b.schemeIdUri, b.value, b.timescale, b.id, b.eventDuration]);
        expect(Number(e.version === 0 ? t.presentation_time_delta : t.presentation_time)).toBe(e.time);
      });
      // the head of a segment is complete once its moof shows
      expect(headComplete(bytes)).toBe(true);
      expect(headComplete(bytes.subarray(0, bytes.length - segment.length + 16))).toBe(false);
    }), { numRuns: 200 });
  });

  it('reports a box cut short or of an unknown version, and reads no box after the moof', () => {
    const one = emsgBox({ version: 1, schemeIdUri: SCTE35_INBAND_SCHEME, timescale: 90_000, time: 0, id: 1, messageData: new Uint8Array(4) });
    const head = withEmsgs(segment, [one]);
    expect(readEmsgs(head.subarray(0, 16 + 20)).errors).toEqual(['an emsg box is truncated']);
    const v2 = one.slice();
    v2[8] = 2;
    expect(readEmsgs(withEmsgs(segment, [v2])).errors).toEqual(['an emsg box of version 2']);
    expect(readEmsgs(concat(segment, one)).boxes).toEqual([]);
  });
});

describe.skipIf(!VECTORS_DIR)('SCTE-35 cues in emsg boxes', () => {
  const samples = (): Array<{ name: string; base64: string }> => (JSON.parse(readFileSync(vectorPath('scte35-samples.json'), 'utf8')) as { samples: Array<{ name: string; base64: string }> }).samples;
  const section = (name: string): Uint8Array => scte35Bytes(samples().find((s) => s.name.startsWith(name))!.base64)!;

  it('times a version 0 box from its segment\'s start and a version 1 box on the media timeline less presentationTimeOffset', () => {
    const insert = section('14.2'); // splice_insert, break duration 5426421 ticks
    const start = section('14.1'); // time_signal, placement opportunity start of 27630000 ticks
    const boxes = readEmsgs(withEmsgs(segment, [
      emsgBox({ version: 0, schemeIdUri: SCTE35_INBAND_SCHEME, timescale: 1000, time: 500, id: 7, messageData: insert }),
      emsgBox({ version: 1, schemeIdUri: SCTE35_INBAND_SCHEME, timescale: 90_000, time: 100 * 90_000 + 45_000, id: 8, messageData: start }),
      // another scheme's event is no cue
      emsgBox({ version: 0, schemeIdUri: 'urn:mpeg:dash:event:2012', value: '1', timescale: 1, time: 0, id: 9, messageData: new Uint8Array(3) }),
      emsgBox({ version: 0, schemeIdUri: SCTE35_INBAND_SCHEME, timescale: 1, time: 0, id: 10, messageData: section('14.4') }),
    ])).boxes;
    // the segment starts 12 s into the Period; the Representation's presentationTimeOffset is 90 s
    const { cues, warnings } = emsgCues(boxes, { startSec: 12 }, 90);
    expect(warnings).toEqual([]);
    expect(cues.map((c) => [c.id, c.dir, c.atSec, c.durationSec])).toEqual([
      ['scte-1207959695', 'out', 12.5, 5426421 / 90_000],
      ['scte-1207959694', 'out', 10.5, 27630000 / 90_000],
      // a program's end (its first segmentation descriptor) closes no break of its own: an in cue
      ['scte-1207959576', 'in', 12, undefined],
    ]);
    expect(cues[0]!.scte35?.command.type).toBe('splice_insert');
  });

  it('counts a malformed section, and takes the event_duration for a section without a length', () => {
    const corrupt = section('14.2').slice();
    corrupt[corrupt.length - 1]! ^= 0xff; // its CRC no longer verifies
    const noLength = section('14.3'); // placement opportunity end: an in cue
    const boxes = readEmsgs(withEmsgs(segment, [
      emsgBox({ version: 0, schemeIdUri: SCTE35_INBAND_SCHEME, timescale: 1000, time: 0, id: 1, messageData: corrupt }),
      emsgBox({ version: 0, schemeIdUri: SCTE35_INBAND_SCHEME, timescale: 1000, time: 0, eventDuration: 4000, id: 2, messageData: noLength }),
    ])).boxes;
    const { cues, warnings } = emsgCues(boxes, { startSec: 2 }, 0);
    expect(warnings.map((w) => w.reason)).toEqual(['bad_scte35']);
    expect(cues.map((c) => [c.dir, c.atSec, c.durationSec])).toEqual([['in', 2, 4]]);
  });
});
