// Generated valid media playlists (RFC 8216 and its LL-HLS additions) for property tests of what the proxy hands
// back: TS and fMP4, byte ranges, keys, maps, program date-times, date ranges, gaps, discontinuities, parts, hints and
// rendition reports, durations written with many digits.
import fc from 'fast-check';

export type GenSegment = {
  whole: number; digits: string; title: string; uriStyle: number; disc: boolean; pdt: boolean; key: 'same' | 'rotate' | 'none' | 'multi';
  newMap: boolean; daterange: boolean; gap: boolean; bitrate: boolean; parts: number; length: number; explicitOffset: boolean;
};
export type GenPlaylist = {
  fmp4: boolean; byteRanges: boolean; ll: boolean; vod: boolean; mediaSequence: number; discontinuitySequence: number;
  segments: GenSegment[]; trailingParts: number; hint: boolean; reports: number; unknownHeader: boolean;
};

export const segmentArb: fc.Arbitrary<GenSegment> = fc.record({
  whole: fc.integer({ min: 0, max: 9 }), digits: fc.stringMatching(/^[0-9]{0,7}$/), title: fc.constantFrom('', 'title', 'a b,c'),
  uriStyle: fc.integer({ min: 0, max: 4 }), disc: fc.boolean(), pdt: fc.boolean(),
  key: fc.constantFrom<GenSegment['key']>('same', 'same', 'same', 'rotate', 'none', 'multi'), newMap: fc.boolean(), daterange: fc.boolean(),
  gap: fc.boolean(), bitrate: fc.boolean(), parts: fc.integer({ min: 0, max: 4 }), length: fc.integer({ min: 188, max: 400_000 }), explicitOffset: fc.boolean(),
});
export const playlistArb: fc.Arbitrary<GenPlaylist> = fc.record({
  fmp4: fc.boolean(), byteRanges: fc.boolean(), ll: fc.boolean(), vod: fc.boolean(),
  mediaSequence: fc.integer({ min: 0, max: 2 ** 40 }), discontinuitySequence: fc.integer({ min: 0, max: 1000 }),
  segments: fc.array(segmentArb, { minLength: 1, maxLength: 14 }), trailingParts: fc.integer({ min: 0, max: 4 }), hint: fc.boolean(),
  reports: fc.integer({ min: 0, max: 2 }), unknownHeader: fc.boolean(),
});

/** A valid media playlist text from the generated description (RFC 8216 and its LL-HLS additions). */
export function writeGenerated(g: GenPlaylist): string {
  const ext = g.fmp4 ? 'm4s' : 'ts';
  const duration = (s: GenSegment): string => (s.digits ? `${s.whole}.${s.digits}` : String(s.whole || 1));
  const target = Math.max(1, ...g.segments.map((s) => Math.round(Number(duration(s)))));
  const ll = g.ll && !g.vod;
  const h = ['#EXTM3U', `#EXT-X-TARGETDURATION:${target}`, `#EXT-X-VERSION:${ll ? 9 : g.fmp4 ? 7 : 4}`, `#EXT-X-MEDIA-SEQUENCE:${g.mediaSequence}`];
  if (g.discontinuitySequence) h.push(`#EXT-X-DISCONTINUITY-SEQUENCE:${g.discontinuitySequence}`);
  if (g.vod) h.push('#EXT-X-PLAYLIST-TYPE:VOD');
  if (ll) h.push(`#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=${6 * target},PART-HOLD-BACK=1.0035,HOLD-BACK=${3 * target}`, '#EXT-X-PART-INF:PART-TARGET=0.50045');
  if (g.unknownHeader) h.push('#EXT-X-INDEPENDENT-SEGMENTS', '#EXT-X-VENDOR-HEADER:A=1,B="two"');
  const lines = [...h];
  const uri = (s: GenSegment, i: number, kind: string): string => {
    if (g.byteRanges) return `all.${ext}`;
    const n = g.mediaSequence + i;
    return [`${kind}${n}.${ext}`, `../seg/${kind}${n}.${ext}?st=9&sig=a%2Fb`, `/abs/${kind}${n}.${ext}`, `https://cdn.example.net/x/${kind}${n}.${ext}`, `./d/${kind}${n}.${ext}`][s.uriStyle]!;
  };
  let offset = 0;
  let pdtMs = Date.UTC(2026, 0, 1, 12, 0, 0, 123);
  let keyN = 0;
  const partsOf = (count: number, prefix: string): string[] =>
    Array.from({ length: count }, (_, p) => `#EXT-X-PART:DURATION=0.50045,URI="${prefix}.p${p}.${ext}"${p % 2 ? '' : ',INDEPENDENT=YES'}`);
  g.segments.forEach((s, i) => {
    const first = i === 0;
    if (s.disc && !first) lines.push('#EXT-X-DISCONTINUITY');
    if (first || s.key !== 'same') {
      keyN++;
      if (s.key === 'none' && !first) lines.push('#EXT-X-KEY:METHOD=NONE');
      else if (s.key === 'multi') lines.push(`#EXT-X-KEY:METHOD=SAMPLE-AES,URI="k${keyN}.key",KEYFORMAT="identity"`, `#EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://k${keyN}",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"`);
      else if (s.key !== 'none') lines.push(`#EXT-X-KEY:METHOD=AES-128,URI="../keys/k${keyN}.bin?v=1"${keyN % 2 ? `,IV=0x${keyN.toString(16).padStart(32, '0')}` : ''}`);
    }
    if (g.fmp4 && (first || s.newMap)) lines.push(`#EXT-X-MAP:URI="init${i}.mp4"${g.byteRanges ? ',BYTERANGE="720@0"' : ''}`);
    if (first || s.pdt || s.disc) lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(pdtMs).toISOString()}`);
    if (s.daterange) lines.push(`#EXT-X-DATERANGE:ID="d${i}",CLASS="com.example",START-DATE="${new Date(pdtMs).toISOString()}",DURATION=3.5${s.uriStyle % 2 ? `,X-ASSET-URI="ads/a${i}.m3u8"` : ''}`);
    if (s.bitrate) lines.push(`#EXT-X-BITRATE:${1000 + i}`);
    if (ll && i >= g.segments.length - 3) lines.push(...partsOf(s.parts, `part${g.mediaSequence + i}`));
    lines.push(`#EXTINF:${duration(s)},${s.title}`);
    if (s.gap) lines.push('#EXT-X-GAP');
    if (g.byteRanges) {
      lines.push(`#EXT-X-BYTERANGE:${s.length}${first || s.explicitOffset || s.newMap ? `@${offset}` : ''}`);
      offset += s.length;
    }
    lines.push(uri(s, i, 'seg'));
    pdtMs += Math.round(Number(duration(s)) * 1000);
  });
  if (ll) {
    lines.push(...partsOf(g.trailingParts, `part${g.mediaSequence + g.segments.length}`));
    if (g.hint) lines.push(`#EXT-X-PRELOAD-HINT:TYPE=PART,URI="part${g.mediaSequence + g.segments.length}.p${g.trailingParts}.${ext}"`);
    for (let r = 0; r < g.reports; r++) lines.push(`#EXT-X-RENDITION-REPORT:URI="../r${r}/index.m3u8",LAST-MSN=${g.mediaSequence + g.segments.length},LAST-PART=${Math.max(0, g.trailingParts - 1)}`);
  }
  if (g.vod) lines.push('#EXT-X-ENDLIST');
  return lines.join('\n') + '\n';
}
