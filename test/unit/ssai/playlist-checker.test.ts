import { describe, expect, it } from 'vitest';
import { checkMediaPlaylist, checkPlaylist } from '../../../ssai/check/playlist-checker.js';
import { originPlaylist } from './helpers/origin.js';

const rules = (f: { rule: string }[]) => f.map((x) => x.rule);

describe('playlist checker', () => {
  it('finds nothing wrong in a plain live window', () => {
    expect(checkMediaPlaylist(originPlaylist({ first: 5, count: 6 }))).toEqual([]);
  });

  it('flags a segment that rounds above the target duration, with its line', () => {
    const f = checkMediaPlaylist('#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.4,\na.ts\n#EXTINF:6.6,\nb.ts\n');
    expect(f).toEqual([expect.objectContaining({ rule: 'SEGMENT_OVER_TARGET', line: 5 })]);
  });

  it('flags an LL-HLS hold-back below three target durations and a part hold-back below two part targets', () => {
    const ll = (control: string) => `#EXTM3U\n#EXT-X-TARGETDURATION:5\n#EXT-X-SERVER-CONTROL:${control}\n#EXT-X-PART-INF:PART-TARGET=0.5\n#EXTINF:4.00008,\na.mp4\n`;
    expect(checkMediaPlaylist(ll('CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.5,HOLD-BACK=15'))).toEqual([]);
    expect(rules(checkMediaPlaylist(ll('CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=0.9,HOLD-BACK=12')))).toEqual(['HOLD_BACK_TOO_SMALL', 'PART_HOLD_BACK_TOO_SMALL']);
  });

  it('flags a missing EXTM3U, a missing target duration and EXTINF without URI', () => {
    expect(rules(checkMediaPlaylist('#EXT-X-TARGETDURATION:6\n#EXTINF:6,\na.ts\n'))).toEqual(['MISSING_EXTM3U']);
    expect(rules(checkMediaPlaylist('#EXTM3U\n#EXTINF:6,\na.ts\n'))).toEqual(['MISSING_TARGETDURATION']);
    expect(rules(checkMediaPlaylist('#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6,\n#EXTINF:6,\nb.ts\nc.ts\n'))).toEqual(['EXTINF_WITHOUT_URI', 'URI_WITHOUT_EXTINF']);
  });

  it('flags an MPEG-TS segment under an EXT-X-MAP (the stitched TS content after an fMP4 ad of issue 19)', () => {
    const text = '#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\ncontent-1.ts\n#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI="ad/init.mp4"\n#EXTINF:2,\nad/0.m4s\n'
      + '#EXT-X-DISCONTINUITY\n#EXTINF:2,\ncontent-2.ts?token=a\n';
    expect(checkMediaPlaylist(text)).toEqual([expect.objectContaining({ rule: 'TS_SEGMENT_UNDER_MAP', line: 11 })]);
  });

  it('flags a DATERANGE in a playlist without program date time', () => {
    const f = checkMediaPlaylist('#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-DATERANGE:ID="a"\n#EXTINF:6,\na.ts\n');
    expect(rules(f)).toEqual(['DATERANGE_WITHOUT_PDT', 'DATERANGE_INCOMPLETE']);
  });

  it('accepts a window that slid by two segments with a discontinuity bump', () => {
    const prev = originPlaylist({ first: 5, count: 6, tags: { 6: ['#EXT-X-DISCONTINUITY'] } });
    const cur = originPlaylist({ first: 7, count: 6, discontinuitySequence: 1 });
    expect(checkPlaylist(cur, prev)).toEqual([]);
  });

  it('flags a discontinuity that slid out without a sequence bump', () => {
    const prev = originPlaylist({ first: 5, count: 6, tags: { 6: ['#EXT-X-DISCONTINUITY'] } });
    const cur = originPlaylist({ first: 7, count: 6 });
    const found = rules(checkPlaylist(cur, prev));
    expect(found[0]).toBe('DISCONTINUITY_NOT_BUMPED');
    expect(new Set(found.slice(1))).toEqual(new Set(['DISCONTINUITY_SEQUENCE_MISMATCH']));
  });

  it('flags a media sequence that went back and a URI that changed its sequence number', () => {
    const prev = originPlaylist({ first: 5, count: 6 });
    const cur = originPlaylist({ first: 4, count: 6, uri: (s) => `seg${s + 1}.ts` });
    expect(rules(checkPlaylist(cur, prev))).toEqual(expect.arrayContaining(['MEDIA_SEQUENCE_DECREASED', 'MEDIA_SEQUENCE_MISMATCH']));
  });

  it('flags a changed target duration and an ended playlist that changed or lost its ENDLIST', () => {
    const prev = originPlaylist({ first: 0, count: 3, endList: true });
    expect(rules(checkPlaylist(originPlaylist({ first: 0, count: 4 }), prev))).toEqual(['ENDLIST_REMOVED', 'ENDED_PLAYLIST_CHANGED']);
    expect(rules(checkPlaylist(originPlaylist({ first: 0, count: 3, duration: 8 }), originPlaylist({ first: 0, count: 3 })))).toEqual(['TARGETDURATION_CHANGED']);
  });

  it('reports text that is not HLS as a finding instead of throwing', () => {
    expect(rules(checkMediaPlaylist('<html/>'))).toEqual(['MISSING_EXTM3U']);
  });
});
