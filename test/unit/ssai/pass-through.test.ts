// Issue 26 §3: with nothing to stitch the proxy hands back what the origin wrote. Generated media playlists (TS and
// fMP4, byte ranges, keys, maps, PDTs, date ranges, discontinuities, LL-HLS parts, hints and reports, durations with
// many digits) and the hand-written ones of fixtures/playlists are read by m3u8-parser before and after the proxy:
// the same segments, durations, ranges, keys, maps, parts and numbers, every URI absolute and naming the same resource.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stitchMediaPlaylist } from '../../../ssai/stitch/manifest-rewriter.js';
import { scanMediaPlaylist } from '../../../media/playlist-scanner.js';
import { parsePlaylist } from './helpers/parsed-playlist.js';
import { playlistArb, writeGenerated as write } from './helpers/generated-playlist.js';

const ORIGIN = 'https://origin.example.com/live/ch1/720p/index.m3u8?token=eyJ.abc%2Fdef';
const FIXTURES = path.resolve(import.meta.dirname, '../../../fixtures/playlists');

const passThrough = (text: string): string =>
  stitchMediaPlaylist(scanMediaPlaylist(text).playlist!, { originUrl: ORIGIN, avails: [], trackKind: 'video' }).text;

/** Every EXTINF value as written, in order. */
const extinfs = (text: string): string[] => text.split(/\r?\n/).filter((l) => l.startsWith('#EXTINF:')).map((l) => l.slice(8));

describe('lossless pass-through (issue 26 §3)', () => {
  it('parses any generated valid media playlist to the same segments, durations, ranges, keys, maps, parts and numbers', () => {
    fc.assert(fc.property(playlistArb, (g) => {
      const text = write(g);
      const out = passThrough(text);
      const before = parsePlaylist(text, ORIGIN);
      const after = parsePlaylist(out);
      expect(after).toEqual(before);
      expect(extinfs(out)).toEqual(extinfs(text));
      // URIs are absolute: nothing in the output resolves against the proxy's own address.
      for (const line of out.split('\n')) {
        if (line && !line.startsWith('#')) expect(line).toMatch(/^https:\/\//);
        for (const m of line.matchAll(/(?:^|[:,])(?:URI|X-ASSET-URI)="([^"]*)"/g)) expect(m[1]).toMatch(/^(https|skd):\/\//);
      }
    }), { numRuns: 300 });
  });

  it('keeps 4.00008 and 1.4167 as written where the old rewrite printed 4 and 1.417', () => {
    const text = readFileSync(path.join(FIXTURES, 'byterange-ts.m3u8'), 'utf8');
    const out = passThrough(text);
    expect(out).toContain('#EXTINF:1.4167,');
    expect(out).toContain('#EXT-X-BYTERANGE:142692\n'); // the implicit offset as written
    expect(passThrough(readFileSync(path.join(FIXTURES, 'll-video.m3u8'), 'utf8'))).toContain('#EXTINF:4.00008,');
  });

  const media = readdirSync(FIXTURES).filter((f) => f.endsWith('.m3u8') && !f.startsWith('broken-') && !readFileSync(path.join(FIXTURES, f), 'utf8').includes('#EXT-X-STREAM-INF'));
  it.each(media)('passes the fixture %s through with the same meaning', (file) => {
    const text = readFileSync(path.join(FIXTURES, file), 'utf8');
    const out = passThrough(text);
    const before = parsePlaylist(text, ORIGIN);
    const after = parsePlaylist(out);
    const originTarget = before.targetDuration;
    const valid = originTarget !== undefined && before.segments.every((s) => Math.round(Number(s.duration)) <= originTarget);
    if (valid) expect(after.targetDuration).toBe(originTarget);
    else {
      // An invalid origin target is repaired by the RFC's rounding, never by the ceiling.
      expect(after.targetDuration).toBe(Math.max(originTarget ?? 0, ...before.segments.map((s) => Math.round(Number(s.duration)))));
      delete before.targetDuration;
      delete after.targetDuration;
    }
    expect(after).toEqual(before);
  });
});
