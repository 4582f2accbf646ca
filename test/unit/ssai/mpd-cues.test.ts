import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readMpd, type MpdRead } from '../../../ssai/parse/mpd-reader.js';
import { cueAvails, mpdCues, SCTE35_BIN_SCHEME, SCTE35_XML_SCHEME } from '../../../ssai/parse/mpd-cues.js';
import { VECTORS_DIR, vectorPath } from '../../helpers/vectors.js';

type Sample = { name: string; base64: string };
const samples = (VECTORS_DIR ? JSON.parse(readFileSync(vectorPath('scte35-samples.json'), 'utf8')) : { samples: [] }) as { samples: Sample[] };
const sample = (prefix: string): string => samples.samples.find((s) => s.name.startsWith(prefix))!.base64;

const mpdWith = (streams: string): MpdRead => {
  const r = readMpd(`<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT600S"><Period>${streams}
<AdaptationSet contentType="video"><Representation id="v" bandwidth="1"><SegmentTemplate timescale="1" duration="2" media="$Number$.m4s"/></Representation></AdaptationSet></Period></MPD>`);
  if (!r.ok) throw new Error(r.message);
  return r.value;
};
const bin = (at: number, b64: string, extra = ''): string => `<Event presentationTime="${at}"${extra}><Signal xmlns="http://www.scte.org/schemas/35/2016"><Binary>${b64}</Binary></Signal></Event>`;

describe('mpd-cues', () => {
  it.skipIf(!VECTORS_DIR)('reads the SCTE 35 standard\'s samples carried in the 2014 binary scheme: time_signal and splice_insert', () => {
    const read = mpdWith(`<EventStream schemeIdUri="${SCTE35_BIN_SCHEME}" timescale="10">${bin(40, sample('14.1'))}${bin(100, sample('14.2'))}${bin(300, sample('14.3'))}</EventStream>`);
    const { cues, warnings } = mpdCues(read);
    expect(warnings).toEqual([]);
    expect(cues.map((c) => [c.id, c.dir, c.atSec, c.durationSec])).toEqual([
      ['scte-1207959694', 'out', 4, 307], ['scte-1207959695', 'out', 10, 5426421 / 90_000], ['scte-1207959694', 'in', 30, undefined],
    ]);
    expect(cues[1]!.scte35?.command.type).toBe('splice_insert');
  });

  it('reads the 2013 XML scheme: a SpliceInsert, a TimeSignal\'s segmentation, a cancelled and a non-break cue', () => {
    const x = (at: number, body: string) => `<Event presentationTime="${at}"><SpliceInfoSection xmlns="http://www.scte.org/schemas/35/2016">${body}</SpliceInfoSection></Event>`;
    const read = mpdWith(`<EventStream schemeIdUri="${SCTE35_XML_SCHEME}" timescale="90000" presentationTimeOffset="90000">
${x(270_000, '<SpliceInsert spliceEventId="7" outOfNetworkIndicator="true"><BreakDuration autoReturn="true" duration="540000"/></SpliceInsert>')}
${x(900_000, '<TimeSignal><SpliceTime ptsTime="1"/></TimeSignal><SegmentationDescriptor segmentationEventId="8" segmentationTypeId="48" segmentationDuration="180000"/>')}
${x(990_000, '<SpliceInsert spliceEventId="9" spliceEventCancelIndicator="true"/>')}
${x(1_000_000, '<TimeSignal/><SegmentationDescriptor segmentationEventId="10" segmentationTypeId="32"/>')}
</EventStream>`);
    expect(mpdCues(read).cues.map((c) => [c.id, c.dir, c.atSec, c.durationSec])).toEqual([['scte-7', 'out', 2, 6], ['scte-8', 'out', 9, 2]]);
  });

  it('takes an out cue\'s length from its Event, else from the next in cue, else makes it an insertion point', () => {
    const ins = (id: number, out: boolean) => `<SpliceInsert spliceEventId="${id}" outOfNetworkIndicator="${out}"/>`;
    const x = (at: number, body: string, extra = '') => `<Event presentationTime="${at}"${extra}><SpliceInfoSection>${body}</SpliceInfoSection></Event>`;
    const read = mpdWith(`<EventStream schemeIdUri="${SCTE35_XML_SCHEME}">${x(4, ins(1, true), ' duration="8"')}${x(20, ins(2, true))}${x(30, ins(2, false))}${x(40, ins(3, true))}</EventStream>`);
    const { cues } = mpdCues(read);
    expect(cues.filter((c) => c.dir === 'out').map((c) => [c.id, c.durationSec])).toEqual([['scte-1', 8], ['scte-2', 10], ['scte-3', 0]]);
    // on 2 s segments: breaks that replace content (1, 2), an insertion (3)
    const starts = Array.from({ length: 30 }, (_, i) => ({ start: i * 2, duration: 2 }));
    expect(cueAvails(cues, starts).map((a) => [a.id, a.startSegmentIndex, a.endSegmentIndex, a.duration, a.insert ?? false, a.contentOffsetSeconds]))
      .toEqual([['scte-1', 2, 6, 8, false, 4], ['scte-2', 10, 15, 10, false, 20], ['scte-3', 20, 20, 0, true, 40]]);
  });

  it('ignores a malformed binary cue and says why', () => {
    const read = mpdWith(`<EventStream schemeIdUri="${SCTE35_BIN_SCHEME}">${bin(4, 'bm90IGEgY3Vl')}</EventStream><EventStream schemeIdUri="urn:other"><Event/></EventStream>`);
    const { cues, warnings } = mpdCues(read);
    expect(cues).toEqual([]);
    expect(warnings.map((w) => w.reason)).toEqual(['bad_scte35']);
  });
});
