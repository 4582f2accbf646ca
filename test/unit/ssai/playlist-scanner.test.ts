import { describe, expect, it } from 'vitest';
import { parseAttributes, playlistKind, resolveUri, scanMediaPlaylist, scanMultivariantPlaylist, scanPlaylist } from '../../../media/playlist-scanner.js';

const MEDIA = `#EXTM3U
#EXT-X-VERSION:6
#EXT-X-TARGETDURATION:6
#EXT-X-MEDIA-SEQUENCE:100
#EXT-X-DISCONTINUITY-SEQUENCE:3
#EXT-X-INDEPENDENT-SEGMENTS
#EXT-X-START:TIME-OFFSET=-12
#EXT-X-KEY:METHOD=AES-128,URI="key.bin",IV=0x1234
#EXT-X-MAP:URI="init.mp4"
#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:00.000Z
#EXTINF:6.006,first
seg100.m4s
#EXT-X-CUE-OUT:30
#EXT-X-BYTERANGE:1000@0
#EXTINF:5.994,
seg101.m4s
# a comment
#EXT-X-DISCONTINUITY
#EXT-X-KEY:METHOD=NONE
#EXT-X-DATERANGE:ID="x",START-DATE="2026-01-01T00:00:12.000Z"
#EXTINF:6,
seg102.m4s
#EXT-X-CUE-IN
`;

describe('playlist scanner', () => {
  it('parses the header tags of a media playlist', () => {
    const { playlist, error } = scanMediaPlaylist(MEDIA);
    expect(error).toBeUndefined();
    expect(playlist).toMatchObject({ version: 6, targetDuration: 6, mediaSequence: 100, discontinuitySequence: 3, independentSegments: true, endList: false });
    expect(playlist?.headerTags.map((t) => t.name)).toEqual(['EXT-X-START']);
  });

  it('gives each segment its sequence numbers, duration, title, byte range and program date time', () => {
    const segs = scanMediaPlaylist(MEDIA).playlist!.segments;
    expect(segs.map((s) => [s.uri, s.mediaSequence, s.discontinuitySequence, s.duration, s.title])).toEqual([
      ['seg100.m4s', 100, 3, 6.006, 'first'], ['seg101.m4s', 101, 3, 5.994, ''], ['seg102.m4s', 102, 4, 6, ''],
    ]);
    expect(segs[1]?.byteRange).toBe('1000@0');
    expect(segs[0]?.programDateTime).toBe('2026-01-01T00:00:00.000Z');
    expect(segs[1]?.pdtMs).toBe(Date.parse('2026-01-01T00:00:06.006Z'));
    expect(segs[2]?.pdtMs).toBeUndefined(); // a discontinuity breaks PDT extrapolation
  });

  it('tracks the effective key and map and attaches cue and daterange tags to the next segment', () => {
    const pl = scanMediaPlaylist(MEDIA).playlist!;
    const [a, b, c] = pl.segments;
    expect(a?.key?.method).toBe('AES-128');
    expect(a?.key?.uri).toBe('key.bin');
    expect(b?.key).toBe(a?.key);
    expect(c?.key).toBeUndefined();
    expect(c?.map?.uri).toBe('init.mp4');
    expect(b?.tags.map((t) => [t.name, t.value])).toEqual([['EXT-X-CUE-OUT', '30']]);
    expect(c?.tags.map((t) => t.name)).toEqual(['EXT-X-DATERANGE']);
    expect(pl.trailingTags.map((t) => t.name)).toEqual(['EXT-X-CUE-IN']);
  });

  it('reads ENDLIST and PLAYLIST-TYPE of a VOD playlist and tolerates CRLF and a BOM', () => {
    const pl = scanMediaPlaylist('\uFEFF#EXTM3U\r\n#EXT-X-TARGETDURATION:4\r\n#EXT-X-PLAYLIST-TYPE:VOD\r\n#EXTINF:4,\r\na.ts\r\n#EXT-X-ENDLIST\r\n').playlist!;
    expect(pl.endList).toBe(true);
    expect(pl.playlistType).toBe('VOD');
    expect(pl.segments[0]?.uri).toBe('a.ts');
  });

  it('returns an error code for text that is not HLS instead of throwing', () => {
    expect(scanMediaPlaylist('<html>nope</html>').error?.code).toBe('NOT_HLS');
    expect(scanMediaPlaylist('   ').error?.code).toBe('EMPTY');
    expect(scanMediaPlaylist('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n').error?.code).toBe('NOT_HLS');
  });

  it('parses variants, renditions, I-frame variants and session tags of a multivariant playlist', () => {
    const text = `#EXTM3U
#EXT-X-SESSION-DATA:DATA-ID="com.x.title",VALUE="T"
#EXT-X-SESSION-KEY:METHOD=AES-128,URI="k"
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="audio/en.m3u8"
#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="CC1",INSTREAM-ID="CC1"
#EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=1280x720,CODECS="avc1.4d401f,mp4a.40.2",AUDIO="aud"
720p.m3u8
#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=200000,URI="iframe.m3u8"
`;
    expect(playlistKind(text)).toBe('multivariant');
    const pl = scanMultivariantPlaylist(text).playlist!;
    expect(pl.variants).toMatchObject([{ uri: '720p.m3u8', bandwidth: 2_000_000, resolution: '1280x720' }]);
    expect(pl.variants[0]?.attrs.CODECS).toBe('avc1.4d401f,mp4a.40.2');
    expect(pl.renditions.map((r) => [r.type, r.groupId, r.language, r.uri])).toEqual([['AUDIO', 'aud', 'en', 'audio/en.m3u8'], ['CLOSED-CAPTIONS', 'cc', undefined, undefined]]);
    expect(pl.iframeVariants[0]?.uri).toBe('iframe.m3u8');
    expect(pl.sessionData).toHaveLength(1);
    expect(pl.sessionKeys).toHaveLength(1);
    expect(scanPlaylist(text).playlist?.kind).toBe('multivariant');
  });

  it('parses quoted attribute values containing commas and equals signs', () => {
    expect(parseAttributes('A=1,B="x,y=z",C=0x1F,D="",E=2.5')).toEqual({ A: '1', B: 'x,y=z', C: '0x1F', D: '', E: '2.5' });
  });

  it('resolves relative URIs without re-encoding signed query strings', () => {
    const base = 'https://cdn.example.com/live/ch1/index.m3u8?token=a%2Fb|c';
    expect(resolveUri(base, 'seg 1.ts?sig=x%3D|y')).toBe('https://cdn.example.com/live/ch1/seg 1.ts?sig=x%3D|y');
    expect(resolveUri(base, '/abs/seg.ts')).toBe('https://cdn.example.com/abs/seg.ts');
    expect(resolveUri(base, '../hd/seg.ts')).toBe('https://cdn.example.com/live/hd/seg.ts');
    expect(resolveUri(base, './seg.ts')).toBe('https://cdn.example.com/live/ch1/seg.ts');
    expect(resolveUri(base, '//other.example.com/a.ts')).toBe('https://other.example.com/a.ts');
    expect(resolveUri(base, 'http://x.example.com/a.ts')).toBe('http://x.example.com/a.ts');
  });
});
