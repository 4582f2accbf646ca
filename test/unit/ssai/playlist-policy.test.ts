import { describe, expect, it } from 'vitest';
import { joinPrefix, playlistPolicy } from '../../../ssai/stitch/playlist-policy.js';
import { isCueTag } from '../../../ssai/parse/cue-finder.js';

describe('a configuration\'s playlist policy (issue 31 item 5)', () => {
  it('joins a prefix and a path with exactly one slash, whatever slashes either has', () => {
    for (const prefix of ['https://cdn.test/c', 'https://cdn.test/c/', 'https://cdn.test/c//']) {
      for (const path of ['live/seg1.ts', '/live/seg1.ts']) expect(joinPrefix(prefix, path)).toBe('https://cdn.test/c/live/seg1.ts');
    }
    expect(joinPrefix('https://cdn.test', 'seg.ts?token=a%2Fb&x=1')).toBe('https://cdn.test/seg.ts?token=a%2Fb&x=1');
  });

  it('puts a content segment under the prefix by its path after source_url, query as written', () => {
    const p = playlistPolicy({ sourceUrl: 'https://Origin.test/live', contentSegmentPrefix: 'https://cdn.test/c/' }, '');
    expect(p.contentUri!('https://origin.test/live/seg1.ts')).toBe('https://cdn.test/c/seg1.ts');
    expect(p.contentUri!('https://origin.test/live/a/b.m4s?sig=x%2By')).toBe('https://cdn.test/c/a/b.m4s?sig=x%2By');
    // outside source_url: kept as it is
    expect(p.contentUri!('https://origin.test/other/seg1.ts')).toBe('https://origin.test/other/seg1.ts');
    expect(p.contentUri!('https://origin.test/livestream/seg1.ts')).toBe('https://origin.test/livestream/seg1.ts');
    expect(p.contentUri!('https://origin.test.evil/live/seg1.ts')).toBe('https://origin.test.evil/live/seg1.ts');
    expect(p.adUri).toBeUndefined();
    expect(p.removeCues).toBe(false);
  });

  it('takes source_url as a directory without its query', () => {
    const p = playlistPolicy({ sourceUrl: 'https://origin.test/?token=1', contentSegmentPrefix: 'https://cdn.test' }, '');
    expect(p.contentUri!('https://origin.test/live/seg1.ts')).toBe('https://cdn.test/live/seg1.ts');
  });

  it('puts an ad segment under the prefix by its path after the engine\'s public URL (engine routes are root-relative)', () => {
    const p = playlistPolicy({ sourceUrl: 'https://origin.test/', adSegmentPrefix: 'https://ads.cdn.test/e' }, 'https://engine.test');
    expect(p.adUri!('/v1/segment/g/s/a/0/1/2.m4s')).toBe('https://ads.cdn.test/e/v1/segment/g/s/a/0/1/2.m4s');
    expect(p.adUri!('https://engine.test/media/creatives/k/init.mp4')).toBe('https://ads.cdn.test/e/media/creatives/k/init.mp4');
    expect(p.adUri!('https://elsewhere.test/ad.mp4')).toBe('https://elsewhere.test/ad.mp4');
    expect(p.contentUri).toBeUndefined();
  });

  it('names what it changes in its key, so configurations that differ never share a rendered playlist', () => {
    const keys = new Set([
      playlistPolicy({ sourceUrl: 'https://o.test/' }, '').key,
      playlistPolicy({ sourceUrl: 'https://o.test/', adMarkerPassthrough: true }, '').key,
      playlistPolicy({ sourceUrl: 'https://o.test/', adMarkerPassthrough: false }, '').key,
      playlistPolicy({ sourceUrl: 'https://o.test/', contentSegmentPrefix: 'https://c.test' }, '').key,
      playlistPolicy({ sourceUrl: 'https://o.test/', adSegmentPrefix: 'https://c.test' }, '').key,
    ]);
    expect(keys.size).toBe(4); // absent and true are the same default
  });

  it('counts every cue form the cue finder reads as a cue tag, and no other DATERANGE', () => {
    const tag = (name: string, value: string) => ({ name, value, line: 1 });
    for (const [name, value] of [['EXT-X-CUE-OUT', '10'], ['EXT-X-CUE-OUT-CONT', '2/10'], ['EXT-X-CUE-IN', ''], ['EXT-OATCLS-SCTE35', '/DA='],
      ['EXT-X-SPLICEPOINT-SCTE35', '/DA='], ['EXT-X-SCTE35', 'CUE="/DA="'], ['EXT-X-DATERANGE', 'ID="a",START-DATE="2026-01-01T00:00:00Z",SCTE35-OUT=0xFC'],
      ['EXT-X-DATERANGE', 'ID="a",START-DATE="2026-01-01T00:00:00Z",SCTE35-IN=0xFC'], ['EXT-X-DATERANGE', 'ID="a",START-DATE="2026-01-01T00:00:00Z",SCTE35-CMD=0xFC']]) {
      expect(isCueTag(tag(name!, value!)), `${name}:${value}`).toBe(true);
    }
    expect(isCueTag(tag('EXT-X-DATERANGE', 'ID="ad-0",CLASS="com.engine.ad",START-DATE="2026-01-01T00:00:00Z",X-AD-ID="SCTE35-OUT"'))).toBe(false);
    expect(isCueTag(tag('EXT-X-DATERANGE', 'ID="i",CLASS="com.apple.hls.interstitial",START-DATE="2026-01-01T00:00:00Z",X-ASSET-LIST="a.json"'))).toBe(false);
    expect(isCueTag(tag('EXT-X-PROGRAM-DATE-TIME', '2026-01-01T00:00:00Z'))).toBe(false);
  });
});
