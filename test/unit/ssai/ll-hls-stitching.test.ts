// Issue 26 §2: LL-HLS behind the proxy. Every URI-bearing tag resolved against the origin, the origin's target
// duration and server control kept, and a stitched break made of whole ad segments: no part or preload hint of a
// replaced segment is listed. Origin text: fixtures/playlists (Apple LL-HLS example style, written for this project).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rewriteMultivariant, stitchMediaPlaylist, type PlannedAd, type StitchAvail } from '../../../ssai/stitch/manifest-rewriter.js';
import { scanMediaPlaylist } from '../../../media/playlist-scanner.js';
import { deliveryDirectives } from '../../../ssai/serve/playback-path.js';
import { checkMediaPlaylist } from '../../../ssai/check/playlist-checker.js';
import { parsePlaylist } from './helpers/parsed-playlist.js';

const FIXTURES = path.resolve(import.meta.dirname, '../../../fixtures/playlists');
const fixture = (name: string): string => readFileSync(path.join(FIXTURES, name), 'utf8');
const ORIGIN = 'https://origin.example.com/ll/ll-video.m3u8';
const LL = scanMediaPlaylist(fixture('ll-video.m3u8')).playlist!;

const ad = (id: string, durations: number[]): PlannedAd => ({
  id, duration: durations.reduce((a, b) => a + b, 0), mapUri: `https://media.example.com/${id}/init.mp4`,
  segments: durations.map((d, i) => ({ uri: `https://media.example.com/${id}/${i}.m4s`, duration: d })),
});
const stitch = (avails: StitchAvail[], renditionReportUri?: (u: string) => string | undefined) =>
  stitchMediaPlaylist(LL, { originUrl: ORIGIN, avails, trackKind: 'video', targetDurationFloor: 4, ...(renditionReportUri ? { renditionReportUri } : {}) });

/** The lines from the first one naming an ad. */
const fromFirstAd = (text: string): string[] => text.split('\n').slice(text.split('\n').findIndex((l) => l.includes('media.example.com')));

describe('LL-HLS origins behind the proxy (issue 26 §2)', () => {
  it('resolves parts, preload hints and rendition reports against the origin and keeps target duration and hold-back', () => {
    const r = stitch([]);
    expect(r.text).toContain('#EXT-X-PART:DURATION=0.33334,URI="https://origin.example.com/ll/filePart271.0.mp4",INDEPENDENT=YES');
    expect(r.text).toContain('#EXT-X-PRELOAD-HINT:TYPE=PART,URI="https://origin.example.com/ll/filePart272.d.mp4"');
    expect(r.text).toContain('#EXT-X-RENDITION-REPORT:URI="https://origin.example.com/ll/ll-video-360.m3u8",LAST-MSN=272,LAST-PART=2');
    expect(r.text).toContain('#EXT-X-TARGETDURATION:4\n');
    // Delta updates are withdrawn (the proxy never asks the origin for one); the rest of SERVER-CONTROL stays.
    expect(r.text).toContain('#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.002,HOLD-BACK=12\n');
    expect(r.text).toContain('#EXT-X-PART-INF:PART-TARGET=0.33334\n');
    expect(checkMediaPlaylist(r.text)).toEqual([]);
  });

  it('points rendition reports at the session route of that rendition when the session has it', () => {
    const r = stitch([], (u) => (u.endsWith('/ll-video-360.m3u8') ? '/v1/manifest/g/s/1.m3u8' : undefined));
    expect(r.text).toContain('#EXT-X-RENDITION-REPORT:URI="/v1/manifest/g/s/1.m3u8",LAST-MSN=272,LAST-PART=2');
    expect(r.text).toContain('#EXT-X-RENDITION-REPORT:URI="https://origin.example.com/ll/ll-audio.m3u8"');
  });

  it('replaces whole segments by ads, and lists the parts of the first content segment after them behind its discontinuity and map', () => {
    const avail: StitchAvail = { id: 'b', startSegmentIndex: 270, endSegmentIndex: 272, duration: 8, slotDuration: 4, ads: [ad('x', [4, 4])] };
    const r = stitch([avail]);
    // No part before the ads (hls.js would take them as the live edge), none of a replaced segment.
    expect(r.text).not.toContain('filePart271');
    const tail = fromFirstAd(r.text);
    const resume = tail.indexOf('#EXT-X-DISCONTINUITY', 2);
    expect(tail.slice(resume, resume + 3)).toEqual(['#EXT-X-DISCONTINUITY', '#EXT-X-MAP:URI="https://origin.example.com/ll/init-720.mp4"',
      '#EXT-X-PROGRAM-DATE-TIME:2026-02-14T02:14:00.106Z']);
    expect(tail.filter((l) => l.startsWith('#EXT-X-PART:')).every((l) => l.includes('filePart272'))).toBe(true);
    expect(r.text).toContain('#EXT-X-PRELOAD-HINT:TYPE=PART,URI="https://origin.example.com/ll/filePart272.d.mp4"');
    expect(r.text.split('\n').filter((l) => l.startsWith('#EXT-X-PART:'))).toHaveLength(3);
    // Two ads in two slots keep the numbers; the next thing to wait for is a content part.
    expect(r.text).toContain('#EXT-X-RENDITION-REPORT:URI="https://origin.example.com/ll/ll-video-360.m3u8",LAST-MSN=272,LAST-PART=2');
    expect(r.tail).toEqual({ sequence: 271, originSequence: 271, ad: false });
    const parsed = parsePlaylist(r.text);
    expect(parsed.segments.map((s) => String(s.uri).replace(/^.*\//, ''))).toEqual(['fileSequence266.mp4', 'fileSequence267.mp4', 'fileSequence268.mp4', 'fileSequence269.mp4', '0.m4s', '1.m4s']);
    expect(checkMediaPlaylist(r.text)).toEqual([]);
  });

  it('lists the ad of a segment in progress that a break replaces a segment ahead, and no part while it ends in ads', () => {
    const avail: StitchAvail = { id: 'o', startSegmentIndex: 272, duration: 30, slotDuration: 4, ads: [ad('y', [4, 4, 4])] };
    const r = stitch([avail]);
    // hls.js loads nothing past the last part it loaded: content parts before the ads would hold the ads back.
    expect(r.text).not.toContain('#EXT-X-PART:');
    expect(r.text).toContain('#EXT-X-PART-INF:PART-TARGET=0.33334');
    expect(r.text).not.toContain('PRELOAD-HINT');
    // The ad media is whole already: its first segment is listed while the origin's 272 is in progress, and the
    // next entry needs the origin's 272 whole.
    expect(parsePlaylist(r.text).segments.map((s) => String(s.uri).replace(/^.*\/media.example.com\//, '')).slice(-2)).toEqual(['https://origin.example.com/ll/fileSequence271.mp4', 'y/0.m4s']);
    expect(r.tail).toEqual({ sequence: 272, originSequence: 271, ad: true });
    expect(checkMediaPlaylist(r.text)).toEqual([]);
  });

  it('counts the extra ad segments in the tail mapping and moves LAST-MSN by them', () => {
    // Three ad segments in two slots: the playlist numbers run one ahead of the origin's after the break.
    const avail: StitchAvail = { id: 'c', startSegmentIndex: 269, endSegmentIndex: 271, duration: 8, slotDuration: 4, ads: [ad('z', [2, 3, 3])] };
    const r = stitch([avail]);
    expect(r.tail).toEqual({ sequence: 272, originSequence: 271, ad: false });
    expect(r.text).toContain('LAST-MSN=273,LAST-PART=2');
  });

  it('raises the target for longer ads by rounding and keeps HOLD-BACK at three target durations', () => {
    const avail: StitchAvail = { id: 'l', startSegmentIndex: 268, endSegmentIndex: 270, duration: 12, slotDuration: 4, ads: [ad('w', [6.006, 5.994])] };
    const r = stitch([avail]);
    expect(r.targetDuration).toBe(6);
    expect(r.text).toContain('#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.002,HOLD-BACK=18\n');
    expect(checkMediaPlaylist(r.text)).toEqual([]);
  });

  it('resolves every URI of a multivariant playlist: steering server, session data, renditions, I-frame streams', () => {
    const r = rewriteMultivariant(fixture('ll-master.m3u8'), { originUrl: 'https://origin.example.com/ll/master.m3u8', makeVariantUri: (n) => `/v1/manifest/g/s/${n}.m3u8` });
    expect(r.text).toContain('#EXT-X-CONTENT-STEERING:SERVER-URI="https://origin.example.com/ll/steering/manifest.json?token=ab%2Fcd",PATHWAY-ID="CDN-A"');
    expect(r.text).toContain('URI="https://origin.example.com/ll/meta/lyrics.json"');
    expect(r.text).toContain('URI="skd://key65"');
    expect(r.entries!.map((e) => `${e.kind} ${e.uri.replace(/^.*\//, '')}`)).toEqual(['audio ll-audio.m3u8', 'video ll-video.m3u8', 'video ll-video-360.m3u8', 'iframe iframes.m3u8']);
    expect(r.text).toContain('#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=180000,RESOLUTION=1280x720,CODECS="avc1.64001f",URI="/v1/manifest/g/s/3.m3u8"');
  });

  it('reads delivery directives: msn and part go on, skip does not, malformed ones name the field', () => {
    expect(deliveryDirectives('')).toBeUndefined();
    expect(deliveryDirectives('_HLS_skip=YES')).toBeUndefined();
    expect(deliveryDirectives('_HLS_msn=273&_HLS_part=2&_HLS_skip=v2')).toEqual({ msn: 273, part: 2 });
    expect(deliveryDirectives('_HLS_msn=273')).toEqual({ msn: 273 });
    expect(deliveryDirectives('_HLS_part=1')).toMatchObject({ code: 'BAD_DELIVERY_DIRECTIVE', message: expect.stringContaining('_HLS_msn') });
    expect(deliveryDirectives('_HLS_msn=-1')).toMatchObject({ code: 'BAD_DELIVERY_DIRECTIVE', status: 400, message: expect.stringContaining('_HLS_msn') });
    expect(deliveryDirectives('_HLS_msn=3&_HLS_part=x')).toMatchObject({ code: 'BAD_DELIVERY_DIRECTIVE', message: expect.stringContaining('_HLS_part') });
  });
});
