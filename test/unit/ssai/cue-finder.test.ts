import { describe, expect, it } from 'vitest';
import { findAvails } from '../../../ssai/parse/cue-finder.js';
import { scanMediaPlaylist } from '../../../media/playlist-scanner.js';
import { encodeScte35 } from '../../../media/scte35-encoder.js';
import { originPlaylist, PDT0, type OriginOptions } from './helpers/origin.js';

const avails = (o: OriginOptions) => {
  const { playlist, error } = scanMediaPlaylist(originPlaylist(o));
  if (!playlist) throw new Error(error.message);
  return findAvails(playlist);
};
const cont = (e: number) => [`#EXT-X-CUE-OUT-CONT:ElapsedTime=${e},Duration=30`];
const spliceOut = encodeScte35({ command: 'splice_insert', insert: { spliceEventId: 4242, outOfNetwork: true, ptsTime: 900000, breakDuration: 30 * 90000 } });
const spliceIn = encodeScte35({ command: 'splice_insert', insert: { spliceEventId: 4242, outOfNetwork: false } });
const placementStart = encodeScte35({ command: 'time_signal', ptsTime: 1000, segmentation: [{ segmentationEventId: 77, segmentationTypeId: 0x34, segmentationDuration: 24 * 90000 }] });
const placementEnd = encodeScte35({ command: 'time_signal', ptsTime: 2000, segmentation: [{ segmentationEventId: 77, segmentationTypeId: 0x35 }] });

describe('cue finder', () => {
  it('finds an EXT-X-CUE-OUT / CUE-OUT-CONT / CUE-IN break with its start, end and duration', () => {
    const { avails: [a], warnings } = avails({ first: 0, count: 10, tags: { 2: ['#EXT-X-CUE-OUT:30'], 3: cont(6), 4: cont(12), 5: cont(18), 6: cont(24), 7: ['#EXT-X-CUE-IN'] } });
    expect(warnings).toEqual([]);
    expect(a).toMatchObject({ id: 'seq-2', startSegmentIndex: 2, endSegmentIndex: 7, duration: 30, durationFromCue: true, open: false, kind: 'cue-out', startVisible: true, slotDuration: 6 });
  });

  it('reads the DURATION= form and keeps a break open until content covers it', () => {
    const { avails: [a] } = avails({ first: 0, count: 5, pdtBase: PDT0, tags: { 3: ['#EXT-X-CUE-OUT:DURATION=30'] } });
    expect(a).toMatchObject({ startSegmentIndex: 3, open: true, duration: 30, id: `pdt-${PDT0 / 1000 + 18}` });
    expect(a?.endSegmentIndex).toBeUndefined();
  });

  it('closes a break by its planned duration when the CUE-IN is not written yet', () => {
    const { avails: [a] } = avails({ first: 0, count: 8, duration: 5.994, tags: { 1: ['#EXT-X-CUE-OUT:30'] } });
    expect(a).toMatchObject({ startSegmentIndex: 1, endSegmentIndex: 6, open: false });
  });

  it('gives a cue-out without duration the length of the content between CUE-OUT and CUE-IN', () => {
    const { avails: [a] } = avails({ first: 0, count: 6, tags: { 1: ['#EXT-X-CUE-OUT'], 4: ['#EXT-X-CUE-IN'] } });
    expect(a).toMatchObject({ startSegmentIndex: 1, endSegmentIndex: 4, duration: 18, durationFromCue: false });
  });

  it('recovers a break whose CUE-OUT slid out of the window from CUE-OUT-CONT, with the same id as when it was visible', () => {
    const tags = { 10: ['#EXT-X-CUE-OUT:30'], 11: cont(6), 12: cont(12), 13: cont(18), 14: cont(24), 15: ['#EXT-X-CUE-IN'] };
    const early = avails({ first: 8, count: 6, pdtBase: PDT0, tags }).avails[0]!;
    const late = avails({ first: 12, count: 6, pdtBase: PDT0, tags }).avails[0]!;
    expect(late).toMatchObject({ startVisible: false, startSegmentIndex: 10, endSegmentIndex: 15, duration: 30, kind: 'cue-out-cont' });
    expect(late.id).toBe(early.id);
    expect(late.startPdtMs).toBe(early.startPdtMs);
  });

  it('finds EXT-X-DATERANGE SCTE35-OUT / SCTE35-IN breaks, named by the splice event id, and decodes the hex cue', () => {
    const start = new Date(PDT0 + 12000).toISOString();
    const { avails: [a] } = avails({
      first: 0, count: 10, pdtBase: PDT0,
      tags: {
        2: [`#EXT-X-DATERANGE:ID="splice-4242",START-DATE="${start}",PLANNED-DURATION=30,SCTE35-OUT=${spliceOut.hex}`],
        7: [`#EXT-X-DATERANGE:ID="splice-4242",START-DATE="${start}",DURATION=30,SCTE35-IN=${spliceIn.hex}`],
      },
    });
    expect(a).toMatchObject({ id: 'scte-4242', kind: 'daterange', startSegmentIndex: 2, endSegmentIndex: 7, duration: 30, startPdtMs: PDT0 + 12000 });
    expect(a?.scte35?.command.type).toBe('splice_insert');
  });

  it('treats a DATERANGE SCTE35-CMD time_signal by its segmentation type', () => {
    const { avails: [a] } = avails({
      first: 0, count: 8, pdtBase: PDT0,
      tags: { 1: [`#EXT-X-DATERANGE:ID="p77",START-DATE="${new Date(PDT0 + 6000).toISOString()}",SCTE35-CMD=${placementStart.hex}`] },
    });
    expect(a).toMatchObject({ id: 'dr-p77', startSegmentIndex: 1, duration: 24, endSegmentIndex: 5 });
  });

  it('merges EXT-X-CUE-OUT and EXT-OATCLS-SCTE35 on one segment into one avail named by the splice event id', () => {
    const { avails: list } = avails({ first: 0, count: 10, tags: { 2: [`#EXT-OATCLS-SCTE35:${spliceOut.base64}`, '#EXT-X-CUE-OUT:30'], 7: ['#EXT-X-CUE-IN'] } });
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: 'scte-4242', kind: 'oatcls', startSegmentIndex: 2, endSegmentIndex: 7, duration: 30 });
  });

  it('finds EXT-X-SPLICEPOINT-SCTE35 placement opportunity start and end', () => {
    const { avails: [a] } = avails({ first: 0, count: 10, tags: { 2: [`#EXT-X-SPLICEPOINT-SCTE35:${placementStart.base64}`], 5: [`#EXT-X-SPLICEPOINT-SCTE35:${placementEnd.base64}`] } });
    expect(a).toMatchObject({ id: 'scte-77', kind: 'splicepoint', startSegmentIndex: 2, endSegmentIndex: 5, duration: 24 });
  });

  it('finds EXT-X-SCTE35 CUE-OUT=YES / CUE-IN=YES pairs', () => {
    const { avails: [a] } = avails({
      first: 0, count: 10,
      tags: { 3: [`#EXT-X-SCTE35:CUE="${spliceOut.base64}",ID="99",DURATION=30,CUE-OUT=YES`], 4: [`#EXT-X-SCTE35:CUE="${spliceOut.base64}",CUE-OUT=CONT,ELAPSED=6`], 8: [`#EXT-X-SCTE35:CUE="${spliceIn.base64}",CUE-IN=YES`] },
    });
    expect(a).toMatchObject({ id: 'scte-99', kind: 'scte35-tag', startSegmentIndex: 3, endSegmentIndex: 8, duration: 30 });
  });

  it('spans an open break to the end of a VOD playlist and closes it there', () => {
    const { avails: list } = avails({ first: 0, count: 5, endList: true, tags: { 0: ['#EXT-X-CUE-OUT:10'], 3: ['#EXT-X-CUE-OUT:60'] } });
    expect(list.map((a) => [a.startSegmentIndex, a.endSegmentIndex, a.open])).toEqual([[0, 2, false], [3, 5, false]]);
  });

  it('closes a break on a CUE-IN written after the last segment', () => {
    const { avails: [a] } = avails({ first: 0, count: 4, tags: { 2: ['#EXT-X-CUE-OUT'] }, trailing: ['#EXT-X-CUE-IN'] });
    expect(a).toMatchObject({ startSegmentIndex: 2, endSegmentIndex: 4, open: false, duration: 12 });
  });

  it('reports an undecodable SCTE-35 payload as a warning and keeps scanning', () => {
    const bad = spliceOut.base64.replace(/^.{8}/, 'AAAAAAAA');
    const { avails: list, warnings } = avails({ first: 0, count: 6, tags: { 1: [`#EXT-OATCLS-SCTE35:${bad}`], 2: ['#EXT-X-CUE-OUT:12'] } });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/SCTE35_/);
    expect(list.map((a) => a.startSegmentIndex)).toEqual([2]);
  });

  it('names a break by the SCTE-35 event id of its CUE-OUT-CONT lines whether its plain CUE-OUT is still in the window or not', () => {
    const cue = encodeScte35({ command: 'splice_insert', insert: { spliceEventId: 4242, outOfNetwork: true, breakDuration: 12 * 90_000 } }).base64;
    const seg = (n: number, tags: string[] = []) => [...tags, `#EXT-X-PROGRAM-DATE-TIME:${new Date(PDT0 + n * 4000).toISOString()}`, '#EXTINF:4.0,', `s${n}.ts`];
    const playlist = (first: number, lines: string[]) => ['#EXTM3U', '#EXT-X-TARGETDURATION:4', `#EXT-X-MEDIA-SEQUENCE:${first}`, ...lines].join('\n');
    const cont = (elapsed: number) => `#EXT-X-CUE-OUT-CONT:ElapsedTime=${elapsed},Duration=12,SCTE35=${cue}`;
    const withCueOut = playlist(0, [...seg(0), ...seg(1, ['#EXT-X-CUE-OUT:12']), ...seg(2, [cont(4)]), ...seg(3, [cont(8)])]);
    const slidOut = playlist(2, [...seg(2, [cont(4)]), ...seg(3, [cont(8)])]);
    const ids = [withCueOut, slidOut].map((text) => {
      const scanned = scanMediaPlaylist(text);
      if (!scanned.playlist) throw new Error('scan failed');
      return findAvails(scanned.playlist).avails.map((a) => [a.id, a.startSegmentIndex]);
    });
    expect(ids[0]).toEqual([['scte-4242', 1]]);
    expect(ids[1]).toEqual(ids[0]);
  });
});

const OUT_HEX = `0x${Buffer.from(spliceOut.base64, 'base64').toString('hex')}`;

describe('malformed cues (issue 19 point 3)', () => {
  it('ignores a negative CUE-OUT duration and a DATERANGE without ID or with an unparseable START-DATE, with a reason each', () => {
    const { avails: list, warnings } = avails({ first: 0, count: 8, pdtBase: PDT0, tags: {
      1: ['#EXT-X-CUE-OUT:-10'],
      2: [`#EXT-X-DATERANGE:START-DATE="not a date",PLANNED-DURATION=30,SCTE35-OUT=${OUT_HEX}`],
      3: [`#EXT-X-DATERANGE:ID="b",START-DATE="2026-13-45T99:99:99Z",PLANNED-DURATION=30,SCTE35-OUT=${OUT_HEX}`],
      4: ['#EXT-X-CUE-OUT:DURATION=1e308', '#EXT-X-CUE-OUT-CONT:ElapsedTime=abc,Duration=30'],
      5: [`#EXT-X-DATERANGE:ID="old",START-DATE="1970-01-01T00:00:00Z",PLANNED-DURATION=30,SCTE35-OUT=${OUT_HEX}`],
      6: ['#EXT-X-CUE-OUT:12'],
    } });
    expect(warnings.map((w) => [w.line > 0, w.reason])).toEqual([
      [true, 'bad_duration'], [true, 'missing_id'], [true, 'bad_date'], [true, 'bad_duration'], [true, 'bad_elapsed'], [true, 'out_of_window'],
    ]);
    // Only the well-formed cue makes a break.
    expect(list.map((a) => [a.startSegmentIndex, a.duration])).toEqual([[6, 12]]);
  });

  it('places a DATERANGE announced ahead of the window past its end (decided early, stitched when it comes)', () => {
    const start = new Date(PDT0 + 8 * 6000 + 12_000).toISOString();
    const { avails: [a], warnings } = avails({ first: 0, count: 8, pdtBase: PDT0, trailing: [`#EXT-X-DATERANGE:ID="ahead",START-DATE="${start}",PLANNED-DURATION=30,SCTE35-OUT=${OUT_HEX}`] });
    expect(warnings).toEqual([]);
    expect(a).toMatchObject({ id: 'scte-4242', startSegmentIndex: 10, startPdtMs: Date.parse(start), duration: 30, open: true });
  });

  it('keeps breaks announced ahead apart from the break playing: each starts and ends where it does (issue 26)', () => {
    const dr = (id: number, seq: number) => {
      const cue = encodeScte35({ command: 'splice_insert', insert: { spliceEventId: id, outOfNetwork: true, breakDuration: 12 * 90000 } });
      return `#EXT-X-DATERANGE:ID="b${id}",START-DATE="${new Date(PDT0 + seq * 6000).toISOString()}",PLANNED-DURATION=12,SCTE35-OUT=0x${Buffer.from(cue.base64, 'base64').toString('hex')}`;
    };
    // Breaks at 4 and 8 (12 s each), both announced from segment 1, with a CUE-OUT on each break's first segment.
    const tags: Record<number, string[]> = {};
    for (let s = 1; s < 10; s++) tags[s] = [...(s <= 4 ? [dr(1, 4)] : []), ...(s <= 8 ? [dr(2, 8)] : []), ...(s === 4 || s === 8 ? ['#EXT-X-CUE-OUT:12'] : [])];
    const { avails: found, warnings } = avails({ first: 0, count: 11, pdtBase: PDT0, tags });
    expect(warnings).toEqual([]);
    expect(found.map((a) => [a.id, a.startSegmentIndex, a.endSegmentIndex, a.duration])).toEqual([['scte-1', 4, 6, 12], ['scte-2', 8, 10, 12]]);
  });
});
