// The engine-written live media playlist: sliding window, monotonic sequences, discontinuity sequence, PDT.
import { describe, expect, it } from 'vitest';
import HLS from 'hls-parser';
import { LiveMediaPlaylist } from '../../../packager/hls/live-playlist.js';

const T0 = Date.parse('2026-03-02T08:00:00Z');
const seg = (i: number, discontinuity = false) => ({ uri: `s${i}.ts`, duration: 2, programDateTime: T0 + i * 2000, discontinuity, cues: [] });

function parse(text: string) {
  const playlist = HLS.parse(text);
  if (playlist.isMasterPlaylist) throw new Error('expected a media playlist');
  return playlist;
}

describe('live media playlist', () => {
  it('slides its window and returns the segments that left it', () => {
    const playlist = new LiveMediaPlaylist(3, 2);
    const removed = [0, 1, 2, 3, 4].flatMap((i) => playlist.append(seg(i)));
    expect(removed).toEqual(['s0.ts', 's1.ts']);
    const parsed = parse(playlist.render());
    expect(parsed.mediaSequenceBase).toBe(2);
    expect(parsed.segments.map((s) => s.uri)).toEqual(['s2.ts', 's3.ts', 's4.ts']);
    expect(parsed.segments.map((s) => s.programDateTime?.getTime())).toEqual([T0 + 4000, T0 + 6000, T0 + 8000]);
    expect(parsed.targetDuration).toBe(2);
    expect(parsed.endlist).toBe(false);
  });

  it('counts a discontinuity into EXT-X-DISCONTINUITY-SEQUENCE once it slides out', () => {
    const playlist = new LiveMediaPlaylist(2, 2);
    playlist.append(seg(0));
    playlist.append(seg(1, true));
    let parsed = parse(playlist.render());
    expect(parsed.segments[1]?.discontinuity).toBe(true);
    expect(parsed.discontinuitySequenceBase ?? 0).toBe(0);
    playlist.append(seg(2));
    playlist.append(seg(3));
    parsed = parse(playlist.render());
    expect(parsed.discontinuitySequenceBase).toBe(1);
    expect(parsed.segments.some((s) => s.discontinuity)).toBe(false);
  });

  it('continues a resumed channel with its window, one discontinuity where it resumed, and ENDLIST once ended', () => {
    const before = new LiveMediaPlaylist(3, 2);
    [0, 1, 2, 3].forEach((i) => before.append(seg(i, i === 2)));
    const resumed = new LiveMediaPlaylist(3, 2, JSON.parse(JSON.stringify(before.snapshot())));
    resumed.append(seg(10, true));
    resumed.end();
    const parsed = parse(resumed.render());
    expect(parsed.mediaSequenceBase).toBe(2);
    expect(parsed.segments.map((s) => [s.uri, s.mediaSequenceNumber, !!s.discontinuity])).toEqual([['s2.ts', 2, true], ['s3.ts', 3, false], ['s10.ts', 4, true]]);
    expect(parsed.endlist).toBe(true);
  });
});
