import { describe, expect, it } from 'vitest';
import { findAvails } from '../../../ssai/parse/cue-finder.js';
import { rewriteMultivariant, stitchMediaPlaylist, type PlannedAd, type StitchAvail, type TrackKind } from '../../../ssai/stitch/manifest-rewriter.js';
import { checkPlaylist } from '../../../ssai/check/playlist-checker.js';
import { scanMediaPlaylist } from '../../../media/playlist-scanner.js';
import { originPlaylist, PDT0, type OriginOptions } from './helpers/origin.js';

const ORIGIN = 'https://origin.example.com/live/ch1/video.m3u8?tok=a%2Fb';

const MULTI = `#EXTM3U
#EXT-X-INDEPENDENT-SEGMENTS
#EXT-X-SESSION-KEY:METHOD=AES-128,URI="keys/k1"
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="audio/en.m3u8"
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="Deutsch",LANGUAGE="de",URI="audio/de.m3u8"
#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",LANGUAGE="en",URI="subs/en.m3u8"
#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="CC1",INSTREAM-ID="CC1"
#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.4d401e,mp4a.40.2",AUDIO="aud",SUBTITLES="subs"
360p.m3u8?sig=x%3D
#EXT-X-STREAM-INF:BANDWIDTH=2500000,RESOLUTION=1280x720,AUDIO="aud",SUBTITLES="subs"
https://cdn2.example.com/720p.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=2600000,RESOLUTION=1280x720,AUDIO="aud",SUBTITLES="subs",FRAME-RATE=50
https://cdn2.example.com/720p.m3u8
#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=100000,URI="iframe.m3u8"
`;

describe('multivariant rewrite', () => {
  const res = rewriteMultivariant(MULTI, { originUrl: ORIGIN, makeVariantUri: (n) => `/v1/manifest/g/s/${n}.m3u8` });

  it('routes every variant, rendition and I-frame URI through the session and lists what each n maps to', () => {
    expect(res.error).toBeUndefined();
    expect(res.entries?.map((e) => [e.n, e.kind, e.uri, e.language ?? e.resolution])).toEqual([
      [0, 'audio', 'https://origin.example.com/live/ch1/audio/en.m3u8', 'en'],
      [1, 'audio', 'https://origin.example.com/live/ch1/audio/de.m3u8', 'de'],
      [2, 'subtitles', 'https://origin.example.com/live/ch1/subs/en.m3u8', 'en'],
      [3, 'video', 'https://origin.example.com/live/ch1/360p.m3u8?sig=x%3D', '640x360'],
      [4, 'video', 'https://cdn2.example.com/720p.m3u8', '1280x720'],
      [5, 'iframe', 'https://origin.example.com/live/ch1/iframe.m3u8', undefined],
    ]);
    expect(res.entries?.[3]).toMatchObject({ bandwidth: 800000, codecs: 'avc1.4d401e,mp4a.40.2' });
    expect(res.entries?.[0]).toMatchObject({ groupId: 'aud', name: 'English' });
  });

  it('leaves no origin playlist URI in the rewritten text and keeps other attributes', () => {
    const text = res.text ?? '';
    expect(text).not.toMatch(/\.m3u8\?sig|cdn2|audio\/en\.m3u8|iframe\.m3u8/);
    expect(text.match(/\/v1\/manifest\/g\/s\/\d\.m3u8/g)).toHaveLength(7);
    expect(text).toContain('#EXT-X-STREAM-INF:BANDWIDTH=2600000,RESOLUTION=1280x720,AUDIO="aud",SUBTITLES="subs",FRAME-RATE=50\n/v1/manifest/g/s/4.m3u8');
    expect(text).toContain('URI="https://origin.example.com/live/ch1/keys/k1"');
    expect(text).toContain('INSTREAM-ID="CC1"');
  });

  it('refuses a media playlist or non-HLS text with an error code', () => {
    const mk = { originUrl: ORIGIN, makeVariantUri: () => 'x' };
    expect(rewriteMultivariant('#EXTM3U\n#EXTINF:6,\na.ts\n', mk).error?.code).toBe('NOT_HLS');
    expect(rewriteMultivariant('{"json":true}', mk).error?.code).toBe('NOT_HLS');
  });
});

// Ads of the plan used below: 15 s + 10 s + 5 s slate = the 30 s break, in 8 segments replacing 5 content segments.
const ADS: PlannedAd[] = [
  { id: 'adA', duration: 15, segments: [4, 4, 4, 3].map((d, i) => ({ uri: `https://media.example.com/adA/${i}.ts`, duration: d })) },
  { id: 'adB', duration: 10, segments: [4, 4, 2].map((d, i) => ({ uri: `https://media.example.com/adB/${i}.ts`, duration: d })) },
  { id: 'slate', duration: 5, slate: true, segments: [{ uri: 'https://media.example.com/slate/0.ts', duration: 5 }] },
];
const BREAK_TAGS: OriginOptions['tags'] = {
  10: ['#EXT-X-DISCONTINUITY', '#EXT-X-CUE-OUT:30'],
  11: ['#EXT-X-CUE-OUT-CONT:ElapsedTime=6.006,Duration=30'], 12: ['#EXT-X-CUE-OUT-CONT:ElapsedTime=12,Duration=30'],
  13: ['#EXT-X-CUE-OUT-CONT:ElapsedTime=18,Duration=30'], 14: ['#EXT-X-CUE-OUT-CONT:ElapsedTime=24,Duration=30'],
  15: ['#EXT-X-DISCONTINUITY', '#EXT-X-CUE-IN'],
};
const contentDuration = (s: number): number => (s % 2 ? 5.994 : 6.006);

/** What the SSAI server will do per session: keep each avail as first found, learn its end, remember absorbed tags. */
function session(ads: PlannedAd[] = ADS) {
  const kept = new Map<string, StitchAvail>();
  return (text: string, trackKind: TrackKind = 'video', opts: { emptySubtitleUri?: string } = {}) => {
    const pl = scanMediaPlaylist(text).playlist!;
    for (const a of findAvails(pl).avails) {
      const k = kept.get(a.id);
      if (!k) kept.set(a.id, { ...a, ads });
      else if (k.endSegmentIndex === undefined && a.endSegmentIndex !== undefined) k.endSegmentIndex = a.endSegmentIndex;
    }
    const res = stitchMediaPlaylist(pl, { originUrl: ORIGIN, avails: [...kept.values()], trackKind, ...opts });
    for (const o of res.observed) kept.get(o.availId)!.absorbedDiscontinuities = o.absorbedDiscontinuities;
    return res;
  };
}

/** (uri, media sequence, discontinuity sequence) of each segment of a stitched playlist. */
function entries(text: string): { uri: string; seq: number; dseq: number; pdt?: string }[] {
  const pl = scanMediaPlaylist(text).playlist!;
  return pl.segments.map((s) => ({ uri: s.uri, seq: s.mediaSequence, dseq: s.discontinuitySequence, ...(s.programDateTime ? { pdt: s.programDateTime } : {}) }));
}

describe('media playlist stitching', () => {
  it('replaces the break content by the ads with a discontinuity at each boundary and a DATERANGE per ad', () => {
    const text = originPlaylist({ first: 8, count: 9, pdtBase: PDT0, duration: contentDuration, tags: BREAK_TAGS });
    const res = session()(text);
    const uris = entries(res.text).map((e) => e.uri.replace(/^https:\/\/[^/]+/, ''));
    expect(uris).toEqual(['/live/ch1/seg8.ts', '/live/ch1/seg9.ts', '/adA/0.ts', '/adA/1.ts', '/adA/2.ts', '/adA/3.ts', '/adB/0.ts', '/adB/1.ts', '/adB/2.ts', '/slate/0.ts', '/live/ch1/seg15.ts', '/live/ch1/seg16.ts']);
    const lines = res.text.split('\n');
    const discBefore = (uriEnd: string) => {
      const i = lines.findIndex((l) => l.endsWith(uriEnd));
      for (let j = i - 1; j >= 0 && lines[j]!.startsWith('#'); j--) if (lines[j] === '#EXT-X-DISCONTINUITY') return true;
      return false;
    };
    expect(['adA/0.ts', 'adB/0.ts', 'slate/0.ts', 'seg15.ts'].map(discBefore)).toEqual([true, true, true, true]);
    expect(['adA/1.ts', 'adB/1.ts', 'seg16.ts'].map(discBefore)).toEqual([false, false, false]);
    const breakStart = new Date(PDT0 + 60_000).toISOString();
    expect(res.text).toContain(`#EXT-X-DATERANGE:ID="seq-10-0"`.replace('seq-10', `pdt-${PDT0 / 1000 + 60}`));
    expect(res.text).toContain(`START-DATE="${breakStart}",DURATION=15,X-AD-ID="adA"`);
    expect(res.text).toContain(`START-DATE="${new Date(PDT0 + 75_000).toISOString()}",DURATION=10,X-AD-ID="adB"`);
    expect(res.text.match(/CLASS="com.engine.ad"/g)).toHaveLength(2);
    expect(res.text).not.toMatch(/CUE-OUT|CUE-IN/);
    // 6.006 s segments round to 6 (RFC 8216 §4.3.3.1): the origin's target stays (issue 26 §2).
    expect(res.targetDuration).toBe(6);
    expect(res.text).toContain('#EXT-X-TARGETDURATION:6');
  });

  it('resumes content at the break end when the ads are shorter than the break', () => {
    const text = originPlaylist({ first: 8, count: 9, tags: BREAK_TAGS });
    const res = session([ADS[0]!])(text);
    const uris = entries(res.text).map((e) => e.uri.split('/').slice(-2).join('/'));
    expect(uris).toEqual(['ch1/seg8.ts', 'ch1/seg9.ts', 'adA/0.ts', 'adA/1.ts', 'adA/2.ts', 'adA/3.ts', 'ch1/seg15.ts', 'ch1/seg16.ts']);
  });

  it('publishes only the ad segments whose content time is already in an open break at the live edge', () => {
    const text = originPlaylist({ first: 6, count: 6, tags: { 10: ['#EXT-X-CUE-OUT:30'], 11: ['#EXT-X-CUE-OUT-CONT:ElapsedTime=6,Duration=30'] } });
    const res = session()(text);
    const uris = entries(res.text).map((e) => e.uri.split('/').slice(-2).join('/'));
    expect(uris).toEqual(['ch1/seg6.ts', 'ch1/seg7.ts', 'ch1/seg8.ts', 'ch1/seg9.ts', 'adA/0.ts', 'adA/1.ts', 'adA/2.ts']);
  });

  it('keeps MEDIA-SEQUENCE and DISCONTINUITY-SEQUENCE monotonic and each URI on one sequence number over 20 reloads across a break', () => {
    const next = session();
    const seqOf = new Map<string, { seq: number; dseq: number }>();
    let prev: { mediaSequence: number; discontinuitySequence: number; uris: string[]; text: string } | undefined;
    let stitched = 0;
    for (let w = 4; w < 24; w++) {
      const text = originPlaylist({ first: w, count: 6, pdtBase: PDT0, duration: contentDuration, tags: BREAK_TAGS, discontinuitySequence: (w > 10 ? 1 : 0) + (w > 15 ? 1 : 0) });
      const res = next(text);
      const list = entries(res.text);
      if (list.some((e) => e.uri.includes('/ad'))) stitched++;
      for (const e of list) {
        const known = seqOf.get(e.uri);
        if (known) expect({ uri: e.uri, ...known }).toEqual({ uri: e.uri, seq: e.seq, dseq: e.dseq });
        else seqOf.set(e.uri, { seq: e.seq, dseq: e.dseq });
      }
      expect(checkPlaylist(res.text, prev?.text)).toEqual([]);
      if (prev) {
        const gone = prev.uris.filter((u) => !list.some((e) => e.uri === u)).length;
        expect(res.mediaSequence - prev.mediaSequence).toBe(gone);
        expect(res.discontinuitySequence).toBeGreaterThanOrEqual(prev.discontinuitySequence);
      }
      expect(res.targetDuration).toBe(6);
      prev = { mediaSequence: res.mediaSequence, discontinuitySequence: res.discontinuitySequence, uris: list.map((e) => e.uri), text: res.text };
    }
    expect(stitched).toBeGreaterThan(8);
    // 25 content segments seen (4..28), 5 replaced by 8 ad segments: all 28 entries got one number each, consecutive.
    const seqs = [...seqOf.values()].map((v) => v.seq).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => (seqs[0] ?? 0) + i));
    expect(seqOf.size).toBe(28);
    expect(seqOf.get('https://media.example.com/slate/0.ts')?.dseq).toBe(3);
    expect(seqOf.get('https://origin.example.com/live/ch1/seg15.ts')?.dseq).toBe(4);
  });

  it('stays conformant across reloads for a session that joins after the CUE-OUT slid out', () => {
    const next = session();
    let prevText: string | undefined;
    const seqOf = new Map<string, number>();
    for (let w = 12; w < 24; w++) {
      const res = next(originPlaylist({ first: w, count: 6, pdtBase: PDT0, duration: contentDuration, tags: BREAK_TAGS, discontinuitySequence: (w > 10 ? 1 : 0) + (w > 15 ? 1 : 0) }));
      expect(checkPlaylist(res.text, prevText)).toEqual([]);
      for (const e of entries(res.text)) expect(seqOf.get(e.uri) ?? e.seq).toBe(e.seq), seqOf.set(e.uri, e.seq);
      if (w === 12) expect(entries(res.text)[0]?.uri).toMatch(/adA|adB/);
      prevText = res.text;
    }
  });

  it('gives every track the same ad boundaries and spans subtitle tracks with an empty WebVTT file', () => {
    const vtt = (s: number) => `sub${s}.vtt`;
    const text = originPlaylist({ first: 8, count: 9, pdtBase: PDT0, tags: BREAK_TAGS, uri: vtt });
    const subsAds = ADS.map((a) => ({ ...a, segments: [] }));
    const res = session(subsAds)(text, 'subtitles', { emptySubtitleUri: 'https://media.example.com/empty.vtt' });
    const list = entries(res.text);
    const empties = list.filter((e) => e.uri.endsWith('empty.vtt'));
    expect(empties.length).toBe(6); // 15 s + 10 s + 5 s in spans of at most the 6 s target duration
    const pl = scanMediaPlaylist(res.text).playlist!;
    const adTime = pl.segments.filter((s) => s.uri.endsWith('empty.vtt')).reduce((t, s) => t + s.duration, 0);
    expect(adTime).toBeCloseTo(30, 6);
    expect(list.find((e) => e.uri.endsWith('sub15.vtt'))?.pdt).toBe(new Date(PDT0 + 90_000).toISOString());
  });

  it('routes ad segment URIs through the callback and makes content URIs absolute', () => {
    const text = originPlaylist({ first: 8, count: 9, tags: BREAK_TAGS });
    const pl = scanMediaPlaylist(text).playlist!;
    const avails = findAvails(pl).avails.map((a) => ({ ...a, ads: ADS }));
    const res = stitchMediaPlaylist(pl, { originUrl: ORIGIN, avails, trackKind: 'video', makeAdSegmentUri: ({ avail, adIndex, segmentIndex }) => `/v1/segment/g/s/${avail.id}/${adIndex}/${segmentIndex}.ts` });
    expect(res.text).toContain('/v1/segment/g/s/seq-10/1/2.ts');
    expect(res.text).toContain('https://origin.example.com/live/ch1/seg9.ts');
    expect(res.text).not.toContain('media.example.com');
  });

  it('leaves a break without ads as content, cue tags included', () => {
    const text = originPlaylist({ first: 8, count: 9, tags: BREAK_TAGS });
    const res = session([])(text);
    expect(entries(res.text)).toHaveLength(9);
    expect(res.text).toContain('#EXT-X-CUE-OUT:30');
  });

  it('re-emits encryption keys and init maps around ads and writes explicit byte ranges', () => {
    const text = ['#EXTM3U', '#EXT-X-VERSION:7', '#EXT-X-TARGETDURATION:6', '#EXT-X-MEDIA-SEQUENCE:0', '#EXT-X-PLAYLIST-TYPE:VOD',
      '#EXT-X-KEY:METHOD=AES-128,URI="k.key",IV=0x01', '#EXT-X-MAP:URI="init.mp4"',
      '#EXT-X-BYTERANGE:100@0', '#EXTINF:6,', 'all.mp4', '#EXT-X-CUE-OUT:6', '#EXT-X-BYTERANGE:100', '#EXTINF:6,', 'all.mp4',
      '#EXT-X-CUE-IN', '#EXT-X-BYTERANGE:100', '#EXTINF:6,', 'all.mp4', '#EXT-X-ENDLIST'].join('\n');
    const ad: PlannedAd = { id: 'x', duration: 6, mapUri: 'https://media.example.com/x/init.mp4', segments: [{ uri: 'https://media.example.com/x/0.m4s', duration: 6 }] };
    const res = session([ad])(text);
    expect(res.text.split('\n').filter((l) => /KEY|MAP|BYTERANGE|ENDLIST|PLAYLIST-TYPE/.test(l))).toEqual([
      '#EXT-X-PLAYLIST-TYPE:VOD',
      '#EXT-X-KEY:METHOD=AES-128,URI="https://origin.example.com/live/ch1/k.key",IV=0x01',
      '#EXT-X-MAP:URI="https://origin.example.com/live/ch1/init.mp4"', '#EXT-X-BYTERANGE:100@0',
      '#EXT-X-KEY:METHOD=NONE', '#EXT-X-MAP:URI="https://media.example.com/x/init.mp4"',
      '#EXT-X-KEY:METHOD=AES-128,URI="https://origin.example.com/live/ch1/k.key",IV=0x01',
      '#EXT-X-MAP:URI="https://origin.example.com/live/ch1/init.mp4"', '#EXT-X-BYTERANGE:100@200', '#EXT-X-ENDLIST',
    ]);
  });
});

describe('VOD insertion (issue 19 point 2)', () => {
  const ad = (id: string, seconds: number): PlannedAd => ({ id, duration: seconds, segments: [{ uri: `https://ads.example/${id}/0.ts`, duration: seconds }] });
  const vod = originPlaylist({ first: 0, count: 4, pdtBase: PDT0, endList: true,
    tags: { 2: ['#EXT-X-CUE-OUT:0', '#EXT-X-DATERANGE:ID="chapter",START-DATE="2026-03-01T12:00:12.000Z",DURATION=6'] } });

  it('finds a VOD CUE-OUT:0 as an insertion and keeps every content segment around the inserted ads', () => {
    const pl = scanMediaPlaylist(vod).playlist!;
    const [found] = findAvails(pl).avails;
    expect(found).toMatchObject({ startSegmentIndex: 2, endSegmentIndex: 2, insert: true, contentOffsetSeconds: 12 });
    const avail: StitchAvail = { id: 'i', startSegmentIndex: 2, endSegmentIndex: 2, duration: 5, slotDuration: 6, startPdtMs: found!.startPdtMs!, ads: [ad('x', 5)], insert: true };
    const post: StitchAvail = { id: 'p', startSegmentIndex: 4, endSegmentIndex: 4, duration: 3, slotDuration: 6, startPdtMs: PDT0 + 24_000, ads: [ad('y', 3)], insert: true };
    const r = stitchMediaPlaylist(pl, { originUrl: ORIGIN, avails: [post, avail], trackKind: 'video' });
    const out = scanMediaPlaylist(r.text).playlist!;
    expect(out.segments.map((s) => s.uri.replace(/^.*\//, ''))).toEqual(['seg0.ts', 'seg1.ts', '0.ts', 'seg2.ts', 'seg3.ts', '0.ts']);
    expect(out.segments.map((s) => (s.pdtMs! - PDT0) / 1000)).toEqual([0, 6, 12, 17, 23, 29]);
    // The origin's DATERANGE on the moved content moves with it; the cue is gone.
    expect(r.text).toContain('ID="chapter",START-DATE="2026-03-01T12:00:17.000Z",DURATION=6');
    expect(r.text).not.toContain('CUE-OUT');
    expect(checkPlaylist(r.text)).toEqual([]);
  });

  it('never inserts into a live window: an insertion there is ignored', () => {
    const live = scanMediaPlaylist(originPlaylist({ first: 0, count: 4 })).playlist!;
    const r = stitchMediaPlaylist(live, { originUrl: ORIGIN, avails: [{ id: 'i', startSegmentIndex: 2, endSegmentIndex: 2, duration: 5, slotDuration: 6, ads: [ad('x', 5)], insert: true }], trackKind: 'video' });
    expect(scanMediaPlaylist(r.text).playlist!.segments.length).toBe(4);
  });
});
