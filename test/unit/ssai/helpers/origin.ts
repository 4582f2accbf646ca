// Builds origin media playlists for the SSAI unit tests: a window of `count` segments from `first`, with extra tag
// lines before chosen sequence numbers, as a live encoder with cues would write them.
export type OriginOptions = {
  first: number;
  count: number;
  duration?: number | ((seq: number) => number);
  /** epoch ms of segment 0; each segment gets a PDT */
  pdtBase?: number;
  tags?: Record<number, string[]>;
  trailing?: string[];
  endList?: boolean;
  discontinuitySequence?: number;
  uri?: (seq: number) => string;
};

export const PDT0 = Date.parse('2026-03-01T12:00:00.000Z');

export function originPlaylist(o: OriginOptions): string {
  const dur = (s: number): number => (typeof o.duration === 'function' ? o.duration(s) : (o.duration ?? 6));
  const lines = ['#EXTM3U', '#EXT-X-VERSION:3', `#EXT-X-TARGETDURATION:${Math.max(6, Math.round(dur(o.first)))}`, `#EXT-X-MEDIA-SEQUENCE:${o.first}`];
  if (o.discontinuitySequence !== undefined) lines.push(`#EXT-X-DISCONTINUITY-SEQUENCE:${o.discontinuitySequence}`);
  let t = 0;
  for (let s = 0; s < o.first; s++) t += dur(s);
  for (let s = o.first; s < o.first + o.count; s++) {
    lines.push(...(o.tags?.[s] ?? []));
    if (o.pdtBase !== undefined) lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(o.pdtBase + Math.round(t * 1000)).toISOString()}`);
    lines.push(`#EXTINF:${dur(s)},`, o.uri ? o.uri(s) : `seg${s}.ts`);
    t += dur(s);
  }
  lines.push(...(o.trailing ?? []));
  if (o.endList) lines.push('#EXT-X-ENDLIST');
  return lines.join('\n') + '\n';
}
